"""A channel's judgments made through a real run and judged days ago, for the tests of RETENTION_DAYS and forget."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

from bot.csvfiles.rows import CsvRow
from bot.records import RunState, Verdict
from bot.rubric import Rubric
from bot.runs import Origin, start_run
from bot.store import Store, iter_judgments, save_verdict, update_run

OLD, NEW = (9, 10, 12, 20, 40), (1, 2, 3)  # days ago each row was judged: the previous weeks, then this one
TAGS = ("Correct", "Generic", "Refusal", "Hallucination")


def eth_output(index: int) -> dict[str, Any]:
    tag = TAGS[index % 4]
    return {"correctness": 2 if tag == "Correct" else 0, "completeness": index % 3,
            "result_tag": tag, "reasoning": f"Aisha's answer {index} misses the portal her office uses."}


def judged_at(days: float):
    return time_machine.travel(datetime.now(UTC) - timedelta(days=days), tick=False)


def make_run(store: Store, rubric: Rubric, days: list[float], *, team: str = "T1", channel: str = "C1",
             models: tuple[str, ...] = ("bot-a", "bot-b"), errors: int = 0, pending: int = 0) -> list[int]:
    """A Slack run of len(days) rows judged that many days ago (the same questions each run, so weeks compare
    question by question), `errors` more rows ending in a judge error and `pending` never judged; the row ids."""
    count = len(days) + errors + pending
    rows = [CsvRow(line=line + 2, question=f"How do I book room {line % 4}?", reference=f"In the portal, ref {line}",
                   answer=f"{team} answer {line}: ask Jonas at +41 44 000 00 {line:02}", model=models[line % len(models)],
                   cells={"question": f"How do I book room {line % 4}?", "note": f"row {line}"})
            for line in range(count)]
    origin = Origin(source="slack", team_id=team, channel_id=channel, user_id="U1")
    with judged_at(max(days)):  # the file came in before its first row was judged
        run = start_run(store, rubric=rubric, rows=rows, judge_model="judge-test",
                        columns=["question", "reference", "answer", "model", "note"], origin=origin)
    ids = [judgment.id for judgment in iter_judgments(store, run.id)]
    for index, (judgment_id, ago) in enumerate(zip(ids, days)):
        output = eth_output(index)
        scoring = rubric.score(output)
        verdict = Verdict(status="scored", output=output, derived=scoring.derived, headline=scoring.headline,
                          passed=scoring.passed, label=scoring.label, tag=scoring.tag,
                          raw_reply=json.dumps(output), tokens_in=100 + index, tokens_out=20, latency_ms=300,
                          attempts=1, cost_usd=0.0625 * (index + 1), rubric_name=rubric.name,
                          rubric_version=rubric.version, rubric_hash=rubric.content_hash, judge_model="judge-test",
                          prompt_hash="p" * 16)
        with judged_at(ago):
            assert save_verdict(store, judgment_id, verdict, cache_key=f"key-{team}-{judgment_id}")
    for judgment_id in ids[len(days):len(days) + errors]:
        with judged_at(OLD[-1]):
            assert save_verdict(store, judgment_id, Verdict(
                status="error", error="the judge said: Aisha's answer was cut", raw_reply="Aisha's", attempts=1,
                rubric_name=rubric.name, rubric_version=rubric.version, rubric_hash=rubric.content_hash,
                judge_model="judge-test", prompt_hash="p" * 16), cache_key=f"key-{team}-{judgment_id}")
    update_run(store, run.id, status=RunState.DONE)
    return ids
