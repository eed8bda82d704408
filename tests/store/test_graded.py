"""bot.store.reads.graded: the verdicts a comparison reads, one per case, of a run or of a channel's history (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

from bot.csvfiles.rows import CsvRow
from bot.records import Verdict
from bot.rubric import RubricSet
from bot.runs import Origin, start_run
from bot.store import Store, graded_answers, iter_judgments, save_verdict, utcnow

COLUMNS = ["question", "reference", "answer", "model"]


def judged(store: Store, rubrics: RubricSet, outcomes: list[tuple[str, float | None]], *, model: str = "m1",
           channel: str = "C1") -> int:
    """A run of `model`'s answers to the questions named, each judged as given (a headline, or None: invalid)."""
    eth = rubrics.get("eth")
    rows = [CsvRow(line=line, question=question, reference="R", answer=f"{model} on {question}", model=model,
                   cells={"question": question}) for line, (question, _) in enumerate(outcomes, 2)]
    run = start_run(store, rubric=eth, rows=rows, judge_model="judge-test", columns=COLUMNS,
                    origin=Origin(source="slack", team_id="T1", channel_id=channel, user_id="U1"))
    common = {"rubric_name": eth.name, "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-test", "prompt_hash": "p" * 16}
    for judgment, (_, headline) in zip(iter_judgments(store, run.id), outcomes, strict=True):
        verdict = (Verdict(status="invalid", error="broke the rubric", raw_reply="?", **common) if headline is None
                   else Verdict(status="scored", output={}, headline=headline, passed=headline == 100, tag="t",
                                raw_reply="{}", **common))
        assert save_verdict(store, judgment.id, verdict, cache_key=f"k{judgment.id}")
    return run.id


def read(rows: list) -> list[tuple[str, str, float | None]]:
    return [(row.question, row.status, row.headline) for row in rows]


def test_each_case_is_read_once_with_the_verdict_that_counts(store: Store, rubrics: RubricSet) -> None:
    first = judged(store, rubrics, [("q1", 25.0), ("q2", 100.0), ("q3", None), ("q1", 50.0)])  # q1 twice in a file
    second = judged(store, rubrics, [("q1", 75.0), ("q2", None), ("q3", 100.0)])  # judged again
    judged(store, rubrics, [("q1", 0.0)], model="m2")  # another model: another case
    judged(store, rubrics, [("q1", 0.0)], channel="C2")  # another channel

    # The history: each case's standing verdict; a failure never replaces a score, a score replaces a failure.
    assert read(graded_answers(store, channel_id="C1", model="m1")) == [
        ("q2", "scored", 100.0), ("q1", "scored", 75.0), ("q3", "scored", 100.0)]
    assert len(graded_answers(store, channel_id="C1")) == 4  # m2 too
    # A run: its own rows, a case its file holds twice counted once (its last row).
    assert read(graded_answers(store, run_id=first)) == [("q2", "scored", 100.0), ("q3", "invalid", None),
                                                         ("q1", "scored", 50.0)]
    assert read(graded_answers(store, run_id=second)) == [("q1", "scored", 75.0), ("q2", "invalid", None),
                                                          ("q3", "scored", 100.0)]
    assert graded_answers(store, channel_id="C1", since=utcnow() + timedelta(seconds=5)) == []
    assert graded_answers(store, channel_id="C1", rubric_name="academic") == []
