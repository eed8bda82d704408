"""RETENTION_DAYS reaches every copy of a case's texts: after a channel aligned its rubric on labels that are old now,
`judgebot retention` (a process of its own) leaves no old question, reference, answer or note in any text column of
any table, the revision in force included; what a recent judgment still holds stays, and the channel judges on with
what its revision kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
import time_machine

from bot.records import Verdict
from bot.rubric import rubric_from_text
from bot.slack.views.align import ALIGN_USE
from bot.store import (
    Store,
    add_rows,
    create_run,
    earlier_hashes,
    iter_judgments,
    revision_by_hash,
    revision_of,
    save_label,
    save_verdict,
)
from tests.support.cli import judgebot
from tests.support.learning_judge import LearningJudge
from tests.support.replies import examples_of
from tests.support.slack_messages import blocks_json, buttons

CHANNEL, TEAM = "C0GENERAL", "T0TEST"
LABELED, ALIGNED, DAYS = 40, 35, 30  # days ago the cases were judged and labeled, then aligned on; what retention keeps


def texts(n: int) -> dict[str, str]:
    """Case n's texts: 15 answers people call Correct, and 15 beginning "Maybe" that they correct to Generic."""
    answer = f"Use myStudies for room {n}, Aisha." if n < 15 else f"Maybe ask Jonas about room {n}."
    return {"question": f"Where does Aisha book room {n}?", "reference": f"In myStudies, ref {n}.", "answer": answer}


def note(n: int) -> str | None:
    return f"too vague about room {n}: names no tool" if n >= 15 else None


def labeled(store: Store, rubric: Any) -> None:
    """30 judgments of the channel the judge passed as Correct, each with a person's label (and a note on the
    corrections)."""
    common = {"rubric_name": "eth", "rubric_version": rubric.version, "rubric_hash": rubric.content_hash,
              "judge_model": "judge-test"}
    run = create_run(store, **common, channel_id=CHANNEL, team_id=TEAM)
    add_rows(store, [{**common, **texts(n), "run_id": run.id, "row_number": n + 2, "status": "pending",
                     "channel_id": CHANNEL, "team_id": TEAM} for n in range(30)])
    output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "names the portal"}
    for n, row in enumerate(iter_judgments(store, run.id)):
        assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                  label="Correct", tag="Correct", raw_reply=json.dumps(output),
                                                  prompt_hash="p" * 32, **common), cache_key=f"k{row.id}")
        tag = "Generic" if n >= 15 else "Correct"
        save_label(store, judgment=row, user_id="U0USER", source="correction", values={"result_tag": tag},
                   passed=tag == "Correct", pass_from="rule", tag=tag, headline=None, note=note(n))


def found_in(store: Store, strings: list[str]) -> list[tuple[str, str, str]]:
    """(table, column, string) for each string found in a text (or JSON) column of any table of the history."""
    found = []
    with store.engine.connect() as conn:
        inspector = sa.inspect(conn)
        for name in inspector.get_table_names():
            table = sa.table(name, *(sa.column(column["name"]) for column in inspector.get_columns(name)))
            for row in conn.execute(sa.select(table)).mappings():
                for column, value in row.items():
                    text = value if isinstance(value, str) else json.dumps(value) if isinstance(value, dict | list) \
                        else ""
                    found += [(name, column, string) for string in strings if string in text]
    return found


@pytest.mark.slow
async def test_retention_removes_the_examples_and_notes_alignment_copied_from_old_cases(
        tmp_path, db_url: str, store: Store, bot_with, slack_server, judge_server, rubrics) -> None:
    eth = rubrics.get("eth")
    slack = await bot_with(database_url=db_url)
    judge_server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"})
    with time_machine.travel(datetime.now(UTC) - timedelta(days=LABELED), tick=True):
        labeled(store, eth)
    with time_machine.travel(datetime.now(UTC) - timedelta(days=ALIGNED), tick=True):
        await slack.command("align eth", user="U0ADMIN")
        card = (await slack_server.await_for("chat.postMessage",
                                             lambda c: "judgebot_align_use" in blocks_json(c.params), timeout=30))[0]
        revision_id = int(buttons(card.params)[ALIGN_USE])
        await slack.click(ALIGN_USE, str(revision_id), channel=CHANNEL, message_ts=card.params["thread_ts"],
                          user="U0ADMIN")
        await slack_server.await_for("chat.postMessage", lambda c: "this channel's rubric" in blocks_json(c.params))
    aligned = revision_of(store, revision_id)
    assert aligned is not None and aligned.state == "accepted"
    examples = rubric_from_text(aligned.content).examples
    assert len(examples) >= 2 and all(example.note for example in examples)
    assert "# People's notes" in aligned.content and "too vague about room" in aligned.content

    # today one example's very texts are judged again in the channel: that copy is recent, and stays
    again = next(n for n in range(15, 30) if texts(n)["answer"] == examples[0].answer)
    await slack.command("eth {question} || {reference} || {answer}".format(**texts(again)))
    await slack_server.await_for("chat.update", lambda c: "Generic" in str(c.params.get("text")), timeout=20)

    code, out = judgebot(tmp_path, "retention", "--days", str(DAYS), DATABASE_URL=db_url)
    assert code == 0, out
    said = " ".join(out.split())
    assert "Removed the texts older than 30 days: 90 judgments" in said  # 30 cases, 60 of the alignment's own runs
    # every example but the one judged again; the notes listed in its head (15 corrections) and that example's own
    assert (f"From 1 revision of rubrics (/judge align): {len(examples) - 1} worked examples and 16 notes people wrote "
            "copied from those texts. 1 of them is in force: its channel judges without those examples from now on") in said

    # no old text is left anywhere: not in the judgments, their samples, the alignment's own runs, labels' notes or
    # the revision; the texts judged again today stay
    old = [text for n in range(30) if n != again for text in texts(n).values()]
    old += [note(n) for n in range(15, 30)]  # type: ignore[misc]
    assert found_in(store, old) == []
    assert {table for table, _, _ in found_in(store, list(texts(again).values()))} == {"judgment", "rubric_revision"}

    # the revision in force kept its instructions and the example still held, without the old note
    pruned = revision_of(store, revision_id)
    assert pruned is not None and pruned.state == "accepted" and pruned.content_hash != aligned.content_hash
    kept = rubric_from_text(pruned.content)
    assert [example.answer for example in kept.examples] == [examples[0].answer] and kept.examples[0].note is None
    assert kept.system == eth.system and kept.version == "1.1" and kept.content_hash == pruned.content_hash
    assert "# People's notes" not in pruned.content and "RETENTION_DAYS removed" in pruned.content
    # judgments made with it before still find it by the hash they name
    assert earlier_hashes(pruned) == [aligned.content_hash]
    assert revision_by_hash(store, aligned.content_hash).id == revision_id  # type: ignore[union-attr]

    # the channel judges on with what the revision kept
    await slack.command("eth Where is the new room? || In myStudies. || Maybe ask around, new case.")
    done = (await slack_server.await_for("chat.update", lambda c: "new case" in json.dumps(c.params), timeout=20))[-1]
    assert "eth 1.1" in blocks_json(done.params)
    [body] = [body for body in judge_server.bodies() if "new case" in json.dumps(body)]
    assert examples_of(body) == [(examples[0].answer, {"result_tag": "Generic"})]

    code, out = judgebot(tmp_path, "retention", "--days", str(DAYS), DATABASE_URL=db_url)
    assert code == 0 and "nothing removed" in out  # once is enough
