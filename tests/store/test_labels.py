"""Tests for people's labels in the history: saving and replacing them, and joining them and votes to judgments."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, update

from bot.records import Verdict
from bot.store import (
    Feedback,
    Judgment,
    Label,
    Store,
    add_rows,
    counted_passes,
    create_run,
    first_judgment,
    get_judgment,
    labels_of,
    record_feedback,
    save_label,
    save_verdict,
    utcnow,
)
from bot.trust.cases import labeled_verdicts

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}
NUMERIC = ("correctness", "completeness")


def verdict(**overrides: Any) -> Verdict:
    """A scored eth verdict, built by hand: Correct, correctness 2, completeness 1, passed."""
    fields: dict[str, Any] = {
        "status": "scored", "output": {"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "r"},
        "headline": 75.0, "passed": True, "label": "Correct", "tag": "Correct", "raw_reply": "{}",
        **COMMON, "prompt_hash": "p" * 32,
    }
    return Verdict(**{**fields, **overrides})


def judged(store: Store, *, channel_id: str | None = "C1", team_id: str | None = "T1", status: str = "scored",
           question: str | None = None, **overrides: Any) -> Judgment:
    """A row of a new run in `channel_id` (None: the terminal), given a verdict of `status`: a case of its own
    unless `question` names one (the reference and answer are the same for all)."""
    run = create_run(store, **COMMON, channel_id=channel_id, team_id=team_id)
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": 1, "status": "pending", "question": question or f"q{run.id}",
                     "reference": "r", "answer": "a", "channel_id": channel_id, "team_id": team_id}])
    row = first_judgment(store, run.id)
    assert row is not None
    chosen = verdict(**overrides) if status == "scored" else verdict(status=status, output=None, headline=None,
                                                                     passed=None, label=None, tag=None, error="x")
    assert save_verdict(store, row.id, chosen, cache_key=f"k{row.id}")
    judgment = get_judgment(store, row.id)
    assert judgment is not None
    return judgment


def label(store: Store, judgment: Judgment, user: str = "U1", **overrides: Any) -> bool:
    fields: dict[str, Any] = {"source": "correction", "values": {"correctness": 0, "completeness": 1,
                                                                  "result_tag": "Generic"},
                              "passed": False, "pass_from": "rule", "tag": "Generic", "headline": 25.0,
                              "note": "names no tool"}
    return save_label(store, judgment=judgment, user_id=user, **{**fields, **overrides})


def test_a_label_copies_the_judgment_and_a_second_one_replaces_the_first(store: Store) -> None:
    judgment = judged(store)
    assert label(store, judgment) is False
    [saved] = labels_of(store, judgment.id)
    assert (saved.team_id, saved.channel_id, saved.rubric_name, saved.rubric_hash, saved.judge_model) == (
        "T1", "C1", "eth", "h" * 16, "judge-m")
    assert (saved.values, saved.passed, saved.tag, saved.headline, saved.note) == (
        {"correctness": 0, "completeness": 1, "result_tag": "Generic"}, False, "Generic", 25.0, "names no tool")
    assert label(store, judgment, values={"correctness": 1}, passed=None, pass_from=None, tag=None, headline=None,
                 note=None) is True
    [again] = labels_of(store, judgment.id)
    assert again.id == saved.id and again.created_at == saved.created_at and again.updated_at >= saved.updated_at
    assert (again.values, again.passed, again.tag, again.note) == ({"correctness": 1}, None, None, None)


def test_labels_of_lists_every_persons_label_of_one_judgment_only(store: Store) -> None:
    first, other = judged(store), judged(store)
    label(store, first, "U1")
    label(store, first, "U2", tag="Refusal")
    label(store, other, "U1")
    assert [(found.user_id, found.tag) for found in labels_of(store, first.id)] == [("U1", "Generic"), ("U2", "Refusal")]
    assert labels_of(store, 10**9) == []


def test_labels_and_votes_become_labeled_verdicts(store: Store) -> None:
    corrected, agreed, disagreed = judged(store), judged(store), judged(store)
    label(store, corrected)
    record_feedback(store, judgment_id=agreed.id, user_id="U2", agree=True)
    record_feedback(store, judgment_id=disagreed.id, user_id="U3", agree=False)
    found = labeled_verdicts(store, rubric_name="eth", channel_id="C1", numeric=NUMERIC)
    assert len(found) == 3
    by_tag = {verdict.human_tag: verdict for verdict in found}
    fixed, agree = by_tag["Generic"], by_tag["Correct"]
    assert (fixed.judge_passed, fixed.judge_tag, fixed.judge_values) == (True, "Correct", {"correctness": 2.0,
                                                                                           "completeness": 1.0})
    assert (fixed.human_passed, fixed.human_values) == (False, {"correctness": 0.0, "completeness": 1.0})
    assert (fixed.judge_model, fixed.rubric_hash) == ("judge-m", "h" * 16)
    assert (agree.human_passed, agree.human_values) == (True, agree.judge_values)
    disagree = by_tag[None]
    assert (disagree.judge_passed, disagree.human_passed, disagree.human_values) == (True, False, {})


def test_a_persons_label_wins_over_their_own_vote_but_not_over_anothers(store: Store) -> None:
    judgment = judged(store)
    record_feedback(store, judgment_id=judgment.id, user_id="U1", agree=True)
    record_feedback(store, judgment_id=judgment.id, user_id="U2", agree=False)
    label(store, judgment, "U1")
    found = labeled_verdicts(store, rubric_name="eth", channel_id="C1", numeric=NUMERIC)
    assert sorted((verdict.human_tag or "", verdict.human_passed) for verdict in found) == [("", False),
                                                                                            ("Generic", False)]


def test_only_scored_judgments_of_the_rubric_judge_and_scope_count(store: Store) -> None:
    label(store, judged(store))
    label(store, judged(store, status="error"))
    label(store, judged(store, channel_id="C2"))
    label(store, judged(store, team_id="T2"))
    label(store, judged(store, channel_id=None, team_id=None))
    label(store, judged(store, judge_model="other-judge"))
    label(store, judged(store, rubric_name="academic"))

    def count(**scope: Any) -> int:
        return len(labeled_verdicts(store, rubric_name="eth", numeric=NUMERIC, **scope))

    assert count(channel_id="C1") == 3  # T1 and T2, and the other judge
    assert count(channel_id="C1", team_id="T1") == 2
    assert count(channel_id="C1", judge_model="judge-m") == 2
    assert count(channel_id="C2") == 1
    assert count() == 1  # the terminal's
    assert count(everywhere=True) == 5
    assert count(everywhere=True, team_id="T2") == 1
    assert len(labeled_verdicts(store, rubric_name="academic", channel_id="C1")) == 1


def test_since_leaves_out_older_labels_and_votes_and_the_oldest_comes_first(store: Store) -> None:
    old, new, voted = judged(store), judged(store), judged(store)
    label(store, old, tag="Refusal")
    label(store, new, tag="Hallucination")
    record_feedback(store, judgment_id=voted.id, user_id="U9", agree=True)
    week_ago = utcnow() - timedelta(days=7)
    with store.session() as session:
        session.execute(update(Label).where(col(Label.judgment_id) == old.id).values(updated_at=week_ago))
        session.execute(update(Feedback).values(updated_at=week_ago - timedelta(days=1)))
        session.commit()
    every = labeled_verdicts(store, rubric_name="eth", channel_id="C1")
    assert [verdict.human_tag for verdict in every] == ["Correct", "Refusal", "Hallucination"]
    recent = labeled_verdicts(store, rubric_name="eth", channel_id="C1", since=utcnow() - timedelta(days=1))
    assert [verdict.human_tag for verdict in recent] == ["Hallucination"]


def test_missing_or_non_numeric_values_are_left_out_of_the_values(store: Store) -> None:
    judgment = judged(store)
    label(store, judgment, values={"correctness": "two", "result_tag": "Generic"})
    [found] = labeled_verdicts(store, rubric_name="eth", channel_id="C1", numeric=(*NUMERIC, "nowhere.at_all"))
    assert found.judge_values == {"correctness": 2.0, "completeness": 1.0}
    assert found.human_values == {}


def test_a_persons_latest_label_of_a_case_replaces_their_earlier_ones_in_any_run(store: Store) -> None:
    first, again = judged(store, question="same"), judged(store, question="same")  # one case, judged in two runs
    elsewhere = judged(store, channel_id="C2", question="same")  # the same texts in another channel: another case
    label(store, first, "U1", tag="Refusal")
    label(store, first, "U2", tag="Refusal")
    label(store, elsewhere, "U1", tag="Refusal")
    assert label(store, again, "U1", tag="Hallucination") is True  # it replaced the label given in the first run
    assert labels_of(store, first.id)[0].user_id == "U2" and len(labels_of(store, first.id)) == 1
    assert [found.tag for found in labels_of(store, again.id)] == ["Hallucination"]
    mine = labeled_verdicts(store, rubric_name="eth", channel_id="C1")
    assert sorted(verdict.human_tag or "" for verdict in mine) == ["Hallucination", "Refusal"]  # U1 once, U2 once
    assert len(labeled_verdicts(store, rubric_name="eth", channel_id="C2")) == 1


def test_a_case_counts_one_vote_a_person_and_their_label_stands_in_for_their_votes(store: Store) -> None:
    first, again, other = judged(store, question="same"), judged(store, question="same"), judged(store)
    record_feedback(store, judgment_id=first.id, user_id="U1", agree=False)
    record_feedback(store, judgment_id=again.id, user_id="U1", agree=True)  # later, on the same case
    record_feedback(store, judgment_id=first.id, user_id="U2", agree=False)
    [agree, disagree] = sorted(labeled_verdicts(store, rubric_name="eth", channel_id="C1"),
                               key=lambda verdict: verdict.human_passed is False)
    assert (agree.human_passed, disagree.human_passed) == (True, False)  # U1's latest vote, and U2's
    label(store, other, "U2")
    label(store, again, "U1", tag="Refusal")  # U1's label of the case: their votes on it no longer count
    tags = sorted(verdict.human_tag or "-" for verdict in labeled_verdicts(store, rubric_name="eth", channel_id="C1"))
    assert tags == ["-", "Generic", "Refusal"]  # U2's vote on the case, U2's label of the other, U1's label
    week = counted_passes(store, channel_id="C1", team_id="T1", since=utcnow() - timedelta(days=1),
                          until=utcnow() + timedelta(days=1), cut=utcnow() - timedelta(days=1))
    assert sum(group.count for group in week) == 3  # the digest counts as calibration does



def test_a_kept_calibration_report_is_read_again_after_any_label_vote_or_judgment(store: Store) -> None:
    from bot.config import Settings
    from bot.rubric import load_rubrics
    from bot.trust.calibration_report import calibration_report
    from bot.trust.report import TrustBar, rubric_trust

    settings, rubric = Settings(_env_file=None), load_rubrics().get("eth")
    first, second = judged(store), judged(store)
    label(store, first)  # fail, on a verdict that passed

    def report() -> Any:
        return calibration_report(store, settings, rubric, channel="C1")

    def fresh() -> Any:  # the same figures read anew, never kept
        return rubric_trust(store, rubric_name="eth", rubric=rubric, channel_id="C1", team_id=None, since=None,
                            bar=TrustBar.from_settings(settings), now=report().now).figures

    before = report()
    assert (before.figures.n, before.figures.pass_agree) == (1, 0)
    assert report().figures == before.figures == fresh()
    record_feedback(store, judgment_id=second.id, user_id="U2", agree=True)  # a vote
    assert (report().figures.n, report().figures.pass_agree) == (2, 1)
    label(store, first, passed=True, pass_from="given", tag="Correct")  # the same label changed, its id kept
    assert (report().figures.n, report().figures.pass_agree) == (2, 2)
    assert report().figures == fresh()
    kept = report()
    kept.figures.by_week.clear()  # a caller's copy: what is kept stays whole
    assert report().figures == fresh()
    judged(store)  # a judgment without a label: read again, the same figures
    assert report().figures == fresh()


def test_a_period_is_kept_while_it_leaves_in_the_same_labels_and_votes(store: Store) -> None:
    from bot.config import Settings
    from bot.rubric import load_rubrics
    from bot.trust.calibration_report import calibration_report
    from bot.trust.report import TrustBar, rubric_trust

    settings, rubric = Settings(_env_file=None), load_rubrics().get("eth")
    old, new, voted = judged(store), judged(store), judged(store)
    label(store, old)
    label(store, new, passed=True, pass_from="given", tag="Correct")
    with store.session() as session:
        session.execute(update(Label).where(col(Label.judgment_id) == old.id)
                        .values(updated_at=utcnow() - timedelta(days=20)))
        session.commit()
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):  # the reads (SQLite's BEGIN aside)
            statements.append(statement)

    def report(days: int) -> Any:
        statements.clear()
        return calibration_report(store, settings, rubric, channel="C1", since=utcnow() - timedelta(days=days))

    now = calibration_report(store, settings, rubric, channel="C1").now

    def fresh(days: int) -> Any:  # the same figures read anew, never kept
        return rubric_trust(store, rubric_name="eth", rubric=rubric, channel_id="C1", team_id=None,
                            since=utcnow() - timedelta(days=days), bar=TrustBar.from_settings(settings),
                            now=now).figures

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        month = report(30)
        read = len(statements)
        assert (month.figures.n, month.figures.pass_agree) == (2, 1) and month.figures == fresh(30)
        assert report(30).figures == month.figures and len(statements) == 2 < read  # a moment later: kept
        assert report(25).figures == month.figures and len(statements) == 2  # it leaves in the same labels: kept
        week = report(7)  # the older label falls out of it: read anew
        assert len(statements) == read and (week.figures.n, week.figures.pass_agree) == (1, 1)
        assert week.figures == fresh(7) and report(6).figures == week.figures and len(statements) == 2
        record_feedback(store, judgment_id=voted.id, user_id="U2", agree=False)  # a vote in the period
        assert report(7).figures.n == 2 and len(statements) == read + 1  # read anew, the vote's judgment looked up
        assert report(7).figures == fresh(7) and report(30).figures == fresh(30)
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)


def test_a_kept_report_is_read_again_after_a_change_stamped_earlier_or_a_judge_error_scored(store: Store) -> None:
    from bot.config import Settings
    from bot.rubric import load_rubrics
    from bot.store import reset_rows
    from bot.trust.calibration_report import calibration_report
    from bot.trust.report import TrustBar, rubric_trust

    settings, rubric = Settings(_env_file=None), load_rubrics().get("eth")
    first, second, failed = judged(store), judged(store), judged(store, status="error")

    def report() -> Any:
        return calibration_report(store, settings, rubric, channel="C1").figures

    def fresh() -> Any:  # the same figures read anew, never kept
        return rubric_trust(store, rubric_name="eth", rubric=rubric, channel_id="C1", team_id=None, since=None,
                            bar=TrustBar.from_settings(settings), now=calibration_report(store, settings, rubric,
                                                                                          channel="C1").now).figures

    record_feedback(store, judgment_id=first.id, user_id="U1", agree=True)
    taken = utcnow()  # one writer takes its moment ...
    record_feedback(store, judgment_id=second.id, user_id="U2", agree=True)  # ... another votes after it, first
    assert (report().n, report().pass_agree) == (2, 2)
    with store.engine.begin() as conn:  # the first writer commits last: its vote turned, stamped before the latest
        conn.execute(sa.update(Feedback.__table__).where(Feedback.__table__.c.judgment_id == first.id)  # type: ignore[attr-defined]
                     .values(agree=False, updated_at=taken))
    assert (report().n, report().pass_agree) == (2, 1) and report() == fresh()
    label(store, failed, user="U3", passed=True, pass_from="given", tag="Correct")  # a judge error: not counted
    assert report().n == 2 and report() == fresh()
    assert reset_rows(store, failed.run_id, ("error",)) == 1  # judged again, scored in place
    assert save_verdict(store, failed.id, verdict(), cache_key=f"again{failed.id}")
    assert (report().n, report().pass_agree) == (3, 2) and report() == fresh()
