"""RETENTION_DAYS and forget: old texts go while every figure the stats, digest and calibration read stays the same;
one workspace's data goes whole while another's stays as it was. On SQLite and PostgreSQL, with rows made by the
store's own functions."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.digest.week import Period
from bot.digest.week_figures import Digest, build_digest
from bot.records import RowState, Verdict
from bot.rubric import Rubric, RubricSet
from bot.store import (
    REMOVED,
    Feedback,
    JudgmentTally,
    Label,
    Removed,
    Shapes,
    Store,
    channel_stats,
    claim_share,
    find_cached_many,
    forget_team,
    get_judgment,
    judgment_case,
    recent_sample,
    record_feedback,
    remember_model,
    remove_old_texts,
    removed_case,
    reset_rows,
    samples_of,
    save_label,
    save_sample,
    subscribe,
    table_of,
    team_rows,
    utcnow,
)
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from bot.trust.calibration import calibrate
from bot.trust.cases import labeled_cases, labeled_verdicts
from bot.trust.labels import numeric_paths
from tests.support.retention_rows import NEW, OLD, eth_output, judged_at, make_run

DAYS = 8


def history(store: Store, rubric: Rubric) -> dict[str, Any]:
    """A channel with old and new judgments, samples, labels with notes, votes and a shared file."""
    ids = make_run(store, rubric, [*OLD, *NEW], errors=1, pending=2)
    old, new = ids[:len(OLD)], ids[len(OLD):len(OLD) + len(NEW)]
    for judgment_id in old[:2]:  # rows judged twice
        judgment = get_judgment(store, judgment_id)
        assert judgment is not None
        for sample in (1, 2):
            sampled = replace(judgment, headline=50.0 + sample)
            assert save_sample(store, judgment_id=judgment_id, run_id=judgment.run_id, judge_model="judge-test",
                               sample=sample, verdict=Verdict(**{name: getattr(sampled, name) for name in (
                                   "status", "output", "derived", "headline", "passed", "label", "tag", "raw_reply",
                                   "rubric_name", "rubric_version", "rubric_hash", "judge_model", "prompt_hash")}),
                               cache_key=f"sample-{judgment_id}-{sample}")
    for judgment_id, user in ((old[0], "U1"), (old[1], "U2"), (old[2], "U1"), (new[0], "U1")):
        judgment = get_judgment(store, judgment_id)
        assert judgment is not None
        with judged_at(OLD[0] if judgment_id in old else 0):
            save_label(store, judgment=judgment, user_id=user, source="correction",
                       values={"correctness": 0, "completeness": 1, "result_tag": "Generic"}, passed=False,
                       pass_from="rule", tag="Generic", headline=25.0, note=f"{user} thinks Jonas is wrong")
    for judgment_id, user, agree in ((old[3], "U3", True), (old[4], "U3", False), (new[1], "U4", True)):
        with judged_at(OLD[0] if judgment_id in old else 0):
            record_feedback(store, judgment_id=judgment_id, user_id=user, agree=agree)
    with judged_at(OLD[-1]):
        claim_share(store, team_id="T1", channel_id="C1", thread_ts="1.1", message_ts="1.1", file_id="F1",
                    user_id="U1", file_name="answers.csv", text="here are Aisha's answers", state="done")
    return {"ids": ids, "old": old, "new": new, "error": ids[len(OLD) + len(NEW)], "pending": ids[-2:]}


def without_texts(digest: Digest) -> Digest:
    """A digest's figures: an example of a week whose texts were removed shows the marker where its question was."""
    return replace(digest, worst=[replace(example, question="") for example in digest.worst],
                   regressions=[replace(r, example=replace(r.example, question="")) for r in digest.regressions])


def figures(store: Store, rubric: Rubric, end: datetime) -> dict[str, Any]:
    """Everything the stats, the digest (of the week ending at `end`, and the week before) and calibration show of
    channel C1."""
    numeric = numeric_paths(rubric)
    verdicts = labeled_verdicts(store, rubric_name=rubric.name, channel_id="C1", numeric=numeric)
    return {"stats": channel_stats(store, channel_id="C1"),
            "digest": build_digest(store, channel_id="C1", period=Period.ending(end), team_id="T1"),
            "earlier": without_texts(build_digest(store, channel_id="C1", team_id="T1",
                                                  period=Period.ending(end - timedelta(days=7)))),
            "verdicts": verdicts, "calibration": calibrate(verdicts, criteria=numeric)}


def rows_of(store: Store, ids: list[int]) -> list[dict[str, Any]]:
    with store.session() as session:
        return [session.get(JudgmentTable, judgment_id).model_dump() for judgment_id in ids]  # type: ignore[union-attr]


def test_old_texts_go_and_every_figure_stays(store: Store, rubrics: RubricSet) -> None:
    rubric = rubrics.get("eth")
    made = history(store, rubric)
    old_cases = {judgment_id: judgment_case(get_judgment(store, judgment_id)) for judgment_id in made["old"]}  # type: ignore[arg-type]
    new_rows = rows_of(store, made["new"])
    end = datetime.now(UTC)
    before = figures(store, rubric, end)
    assert before["stats"] and before["verdicts"] and before["digest"].regressions and before["earlier"].lines

    removed = remove_old_texts(store, before=utcnow() - timedelta(days=DAYS), shapes=Shapes.of(rubrics), batch=2)

    assert removed == Removed(judgments=len(OLD) + 1 + 2, closed=2, samples=4, notes=3, messages=1)
    assert figures(store, rubric, end) == before
    assert rows_of(store, made["new"]) == new_rows  # this week's rows untouched
    for judgment_id in made["old"]:
        judgment = get_judgment(store, judgment_id)
        assert judgment is not None
        assert removed_case(judgment.question) == old_cases[judgment_id] == judgment_case(judgment)
        assert (judgment.reference, judgment.answer, judgment.raw_reply) == (REMOVED, REMOVED, REMOVED)
        assert judgment.output is not None and judgment.output["reasoning"] == REMOVED
        kept = {key: value for key, value in judgment.output.items() if key != "reasoning"}
        assert kept == {key: value for key, value in eth_output(made["ids"].index(judgment_id)).items()
                        if key != "reasoning"}
        assert judgment.label is not None and "Aisha" not in judgment.label and judgment.label != REMOVED
        assert judgment.cells == {"question": REMOVED, "note": REMOVED} and judgment.cache_key is None
        assert "Jonas" not in json.dumps(asdict(judgment), default=str)
    for sample in samples_of(store, made["old"][0]):
        assert (sample.raw_reply, sample.output["reasoning"], sample.cache_key) == (REMOVED, REMOVED, None)  # type: ignore[index]
    error = get_judgment(store, made["error"])
    assert error is not None and (error.status, error.error) == (RowState.ERROR, REMOVED)
    for judgment_id in made["pending"]:  # never judged, in a finished run: closed, never to be judged with no texts
        closed = get_judgment(store, judgment_id)
        assert closed is not None and (closed.status, closed.answer, closed.error) == (RowState.MALFORMED, REMOVED, REMOVED)
    with store.session() as session:
        notes = dict(session.execute(sa.select(Label.judgment_id, Label.note)).all())
        messages = session.execute(sa.text("SELECT text, file_name FROM shared_file")).all()
    assert notes == {**dict.fromkeys(made["old"][:3], REMOVED), made["new"][0]: "U1 thinks Jonas is wrong"}
    assert messages == [(REMOVED, "answers.csv")]

    # Once more: nothing left to remove, nothing changed.
    again = rows_of(store, made["ids"])
    assert remove_old_texts(store, before=utcnow() - timedelta(days=DAYS), shapes=Shapes.of(rubrics)) == Removed()
    assert rows_of(store, made["ids"]) == again


def test_a_removed_judgment_keeps_its_case_is_not_reused_and_is_never_judged_again(store: Store,
                                                                                    rubrics: RubricSet) -> None:
    rubric = rubrics.get("eth")
    made = history(store, rubric)
    first = get_judgment(store, made["old"][0])
    assert first is not None and find_cached_many(store, [first.cache_key or ""])
    remove_old_texts(store, before=utcnow() - timedelta(days=DAYS), shapes=Shapes.of(rubrics))

    assert find_cached_many(store, [first.cache_key or ""]) == {}  # an identical triple is judged afresh
    # A vote given now on a removed judgment joins the case its label is of (not one case of every removed text).
    record_feedback(store, judgment_id=first.id, user_id="U1", agree=False)
    with store.session() as session:
        vote_case = session.execute(sa.select(Feedback.case_key).where(Feedback.judgment_id == first.id,
                                                                       Feedback.user_id == "U1")).scalar_one()
        label_case = session.execute(sa.select(Label.case_key).where(Label.judgment_id == first.id)).scalar_one()
    assert vote_case == label_case == judgment_case(first)
    # Judged again: error rows whose texts are gone keep their verdict; no sample or labeled case offers them.
    assert reset_rows(store, first.run_id, (RowState.ERROR, RowState.INVALID)) == 0
    assert {j.id for j in recent_sample(store, rubric_name=rubric.name, channel_id="C1", limit=50)} == set(made["new"])
    assert {case.judgment.id for case in labeled_cases(store, rubric, "C1")} == {made["new"][0], made["new"][1]}


def table_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted, by table."""
    with store.engine.connect() as conn:
        names = [name for name in sa.inspect(conn).get_table_names() if name != "schema_version"]
        return {name: sorted((tuple(str(value) for value in row) for row in
                              conn.execute(sa.text(f'SELECT * FROM "{name}"'))), key=str) for name in names}


def test_forget_removes_one_workspace_and_nothing_of_another(store: Store, rubrics: RubricSet) -> None:
    rubric = rubrics.get("eth")
    # Workspace T2 first, alone, in its own channel and in a channel shared with T1 (Slack Connect).
    for channel in ("C2", "CSHARED"):
        make_run(store, rubric, [*OLD, *NEW], team="T2", channel=channel, errors=1)
    subscribe(store, team_id="T2", channel_id="C2", weekday=0, hour=9, minute=0, timezone="UTC", user_id="U9")
    remember_model(store, team_id="T2", user_id="U9", model_name="bot-z")
    t2_alone = table_rows(store)
    shared = channel_stats(store, channel_id="CSHARED")
    kept = team_rows(store, "T2")

    made = history(store, rubric)
    make_run(store, rubric, [1, 2, 30], team="T1", channel="CSHARED")
    subscribe(store, team_id="T1", channel_id="C1", weekday=0, hour=9, minute=0, timezone="UTC", user_id="U1")
    remember_model(store, team_id="T1", user_id="U1", model_name="bot-a")
    judgment = get_judgment(store, made["new"][0])
    assert judgment is not None
    record_feedback(store, judgment_id=judgment.id, user_id="U9", agree=True)  # a T2 person's vote on T1's judgment
    found = team_rows(store, "T1")
    assert found["judgment"] == len(made["ids"]) + 3 and found["run"] == 2 and found["label"] == 4
    assert found["judgment_sample"] == 4 and found["shared_file"] == 1 and found["digest_subscription"] == 1

    deleted = forget_team(store, "T1", batch=3)

    assert {name: count for name, count in deleted.items() if name != "judgment_tally"} == found
    assert deleted["judgment_tally"] > 0  # C1's tally rows, counted down to nothing
    assert team_rows(store, "T1") == {} and channel_stats(store, channel_id="C1") == []
    assert table_rows(store) == t2_alone  # T2's rows, tallies and bills exactly as before T1 came
    assert channel_stats(store, channel_id="CSHARED") == shared and team_rows(store, "T2") == kept
    with store.session() as session:
        assert session.execute(sa.select(sa.func.count()).select_from(table_of(JudgmentTally))
                               .where(table_of(JudgmentTally).c.channel_key == "C1")).scalar_one() == 0


def test_a_question_typed_with_the_marker_is_a_question_like_any_other(store: Store, rubrics: RubricSet) -> None:
    rubric = rubrics.get("eth")
    [typed] = make_run(store, rubric, [OLD[0]])
    forged = "[removed] case " + "f" * 64
    judgments = table_of(JudgmentTable)
    with store.engine.begin() as conn:
        conn.execute(sa.update(judgments).where(judgments.c.id == typed).values(question=forged))
    before = get_judgment(store, typed)
    assert before is not None and judgment_case(before) != "f" * 64  # it chooses no case: its texts make it
    remove_old_texts(store, before=utcnow() - timedelta(days=DAYS), shapes=Shapes.of(rubrics))
    after = get_judgment(store, typed)
    assert after is not None and after.reference == REMOVED and after.answer == REMOVED  # retention reached it
    assert removed_case(after.question) == judgment_case(before)  # and kept the case its real texts made
