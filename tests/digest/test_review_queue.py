"""The weekly digest shows the channel's review queue: cases open, the oldest waiting, and those labeled this week."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from bot.cli.views.history import show_digest
from bot.digest import Period, build_digest
from bot.records import Verdict
from bot.slack.views.digest import digest_message
from bot.store import Store, add_rows, create_run, iter_judgments, record_feedback, save_verdict
from bot.trust.review import send_to_review

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}


def unsure_rows(store: Store, count: int, *, channel: str | None = "C1", team: str | None = "T1") -> list[int]:
    run = create_run(store, **COMMON, channel_id=channel, team_id=team)
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": f"q{n}",
                     "reference": "r", "answer": "a", "channel_id": channel, "team_id": team}
                    for n in range(1, count + 1)])
    ids = []
    for row in iter_judgments(store, run.id):
        output: dict[str, Any] = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
        assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                  label="Correct", tag="Correct", raw_reply="{}", prompt_hash="p" * 32,
                                                  unsure=True, samples=3, **COMMON), cache_key=f"k{row.id}")
        ids.append(row.id)
    assert send_to_review(store, run, rate=0).total == count
    return ids


def test_the_digest_shows_the_queue_in_slack_and_the_terminal(store: Store, rubrics) -> None:
    ids = unsure_rows(store, 3)
    unsure_rows(store, 2, channel="C2")  # another channel's queue is not this one's
    record_feedback(store, judgment_id=ids[0], user_id="U1", agree=True)  # one case answered
    period = Period.ending(datetime.now(UTC))

    digest = build_digest(store, channel_id="C1", period=period, team_id="T1")
    assert digest.queue is not None and (digest.queue.open, digest.queue.labeled) == (2, 1)
    today = datetime.now(UTC)
    said = f"Review queue: 2 open, the oldest waiting since {today.day} {today:%b}; 1 labeled this week"
    assert said in str(digest_message(digest, rubrics, None, weekly=True)["blocks"])
    console = Console(file=io.StringIO(), width=160)
    show_digest(console, digest, "C1")
    assert said in console.file.getvalue()  # type: ignore[attr-defined]

    # read from the terminal by channel id, without knowing the workspace: the same queue
    assert build_digest(store, channel_id="C1", period=period).queue == digest.queue
    assert build_digest(store, channel_id="C3", period=period).queue is None  # nothing judged, nothing queued
