"""Tests for bot.store.counts.tallies: the hourly tally kept as verdicts are saved, and figures read from it (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from sqlalchemy import func, true
from sqlmodel import select

from bot.digest import Period, build_digest
from bot.records import Verdict
from bot.store import (
    KEY,
    KEY_LENGTH,
    Feedback,
    JudgmentTally,
    RowVerdict,
    Store,
    add_judgments,
    add_rows,
    channel_stats,
    create_run,
    record_feedback,
    reset_rows,
    save_verdict,
    save_verdicts,
)
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows

KOLKATA = ZoneInfo("Asia/Kolkata")  # UTC+05:30: local midnight is half past an hour in UTC
LONG_MODEL = "campus-bot-" + "x" * 250


class Judged:
    """Rows of one run, added and judged through the store at the times a test chooses."""

    def __init__(self, store: Store, *, channel: str | None = "C1", rubric: str = "eth") -> None:
        self.store, self.channel, self.rubric = store, channel, rubric
        self.added = 0
        self.run_id = create_run(store, rubric_name=rubric, rubric_version="1", rubric_hash="h1", judge_model="judge-a",
                                       source="slack", channel_id=channel).id

    def add(self, when: datetime, status: str = "scored", headline: float | None = 50.0, *, model: str | None = "m1",
            tag: str | None = None, question: str | None = None) -> int:
        """One row added at `when` (naive UTC) and, unless `status` is pending, judged at that moment; its id. Each
        row is a case of its own unless `question` names one of an earlier row."""
        self.added += 1
        question = f"Q{self.added}" if question is None else question
        with time_machine.travel(when.replace(tzinfo=UTC), tick=False):
            add_rows(self.store, [{"run_id": self.run_id, "status": "pending", "model_name": model, "question": question,
                                  "reference": "R", "answer": "A", "channel_id": self.channel, "team_id": "T1",
                                  "rubric_name": self.rubric, "rubric_version": "1", "rubric_hash": "h1",
                                  "judge_model": "judge-a"}])
            with self.store.session() as session:
                judgment_id = session.exec(select(func.max(JudgmentTable.id)).where(JudgmentTable.run_id == self.run_id)).one()
            if status != "pending":
                assert self.judge(judgment_id, status, headline, tag=tag)
        return judgment_id

    def judge(self, judgment_id: int, status: str, headline: float | None = 50.0, *, tag: str | None = None,
              version: str = "1") -> bool:
        scored = status == "scored"
        verdict = Verdict(status=status, headline=headline if scored else None,
                          passed=(headline or 0) >= 50 if scored else None, tag=tag if scored else None,
                          error=None if scored else f"the reply was {status}", rubric_name=self.rubric,
                          rubric_version=version, rubric_hash=f"h{version}", judge_model="judge-a", prompt_hash="p")
        return save_verdict(self.store, judgment_id, verdict, cache_key="k")


def tally(store: Store) -> list[tuple[Any, ...]]:
    """Every tally row as (key..., rows, headlines, headline total rounded, passed), sorted."""
    with store.engine.connect() as conn:
        return tally_rows(conn)


def tally_rows(conn: Any) -> list[tuple[Any, ...]]:
    found = conn.execute(JudgmentTally.__table__.select()).mappings().all()
    return sorted((*(row[name] for name in KEY), row["rows"], row["headlines"], round(row["headline_total"], 6),
                   row["passed"], row["votes"], row["agreeing"]) for row in found)


def counted_afresh(store: Store) -> list[tuple[Any, ...]]:
    """The tally as counting every judgment again from nothing gives it (as an upgrade does), then rolled back."""
    with store.engine.connect() as conn:
        transaction = conn.begin()
        conn.execute(JudgmentTally.__table__.delete())
        add_judgments(conn, JudgmentTable.__table__, JudgmentTally.__table__, true(), feedback=Feedback.__table__)
        found = tally_rows(conn)
        transaction.rollback()
    return found


def at(day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    """Naive UTC of a Kolkata local time, `day` days after Monday 16 November 2026."""
    local = datetime.combine(datetime(2026, 11, 16).date() + timedelta(days=day), time(hour, minute, second), KOLKATA)
    return local.astimezone(UTC).replace(tzinfo=None)


def test_the_tally_kept_while_judging_equals_one_counted_afresh(store: Store) -> None:
    c1, terminal = Judged(store), Judged(store, channel=None, rubric="academic")
    base = datetime(2026, 11, 16, 9, 0)
    for minute, status, headline, tag in [(0, "scored", 100.0, "Correct"), (5, "scored", 25.0, "Generic"),
                                          (59, "scored", 0.0, "Refusal"), (60, "error", None, None),
                                          (61, "invalid", None, None), (120, "scored", None, None)]:
        c1.add(base + timedelta(minutes=minute), status, headline, tag=tag)
    c1.add(base, "scored", 70.0, model=LONG_MODEL)
    c1.add(base, "scored", 30.0, model=LONG_MODEL + "-v2")  # the same first 200 characters: counted together
    c1.add(base, "pending")
    terminal.add(base + timedelta(days=1), "scored", 80.0, model=None)
    retried = c1.add(base + timedelta(hours=3), "error")
    assert tally(store) == counted_afresh(store)
    assert sum(row[-6] for row in tally(store)) == 10  # every judged row once; the pending one not

    long_rows = [row for row in tally(store) if row[2].startswith("campus-bot-")]
    assert [(row[2], row[-6], row[-4]) for row in long_rows] == [(LONG_MODEL[:KEY_LENGTH], 2, 100.0)]
    assert [row[0] for row in tally(store) if row[3] == "academic"] == [""]  # the terminal's rows: no channel

    # Judging errors again counts them out of the hour they were judged in, and in where they are judged now.
    assert reset_rows(store, c1.run_id, ("error", "invalid")) == 3
    assert tally(store) == counted_afresh(store)
    assert not [row for row in tally(store) if row[7] != "scored" and row[3] == "eth"]
    with time_machine.travel(datetime(2026, 11, 20, 15, 30, tzinfo=UTC), tick=False):
        assert c1.judge(retried, "scored", 90.0, tag="Correct", version="2")
    assert tally(store) == counted_afresh(store)
    assert not c1.judge(retried, "scored", 90.0)  # saved once: never counted twice
    assert tally(store) == counted_afresh(store)


def test_figures_are_exact_across_a_midnight_half_past_a_utc_hour(store: Store) -> None:
    judged = Judged(store)
    week = Period.of_week("2026-W47", KOLKATA)
    start, end = week.utc
    assert (start.minute, end.minute) == (30, 30)  # 18:30 UTC on the Sundays
    judged.add(at(-1, 23, 59, 59), "scored", 0.0, model="early")  # the week before, in the same UTC hour as the next
    judged.add(at(0, 0, 0, 0), "scored", 100.0, model="first")
    judged.add(at(0, 0, 20), "error", model="first")
    judged.add(at(3, 12), "scored", 50.0, model="first")
    judged.add(at(6, 23, 59, 59), "scored", 80.0, model="last")
    judged.add(at(7, 0, 0, 0), "scored", 10.0, model="late")  # the week after, in the same UTC hour as the one before

    figures = {f.model_name: (f.cases, f.scored, f.mean_headline, f.errors)
               for f in channel_stats(store, channel_id="C1", since=start, until=end)}
    assert figures == {"first": (3, 2, 75.0, 1), "last": (1, 1, 80.0, 0)}
    digest = build_digest(store, channel_id="C1", period=week)
    assert {line.now.model_name for line in digest.lines} == {"first", "last"}
    assert digest.trend[("early", "eth")][-2:] == [0.0, None]
    assert digest.trend[("first", "eth")][-2:] == [None, 75.0]
    assert ("late", "eth") not in digest.trend
    # A span inside one hour, and spans open at one end.
    inside = channel_stats(store, channel_id="C1", since=at(0, 0, 10), until=at(0, 0, 25))
    assert [(f.model_name, f.cases, f.errors) for f in inside] == [("first", 1, 1)]
    assert {f.model_name for f in channel_stats(store, channel_id="C1", since=start)} == {"first", "last", "late"}
    assert {f.model_name for f in channel_stats(store, channel_id="C1", until=start)} == {"early"}


def test_a_row_counts_in_the_week_it_was_judged_not_the_week_it_was_added(store: Store) -> None:
    judged = Judged(store)
    week = Period.of_week("2026-W47", ZoneInfo("Europe/Berlin"))
    before = week.previous()
    added_then = judged.add(before.utc[0] + timedelta(days=2), "pending")  # a run stopped, resumed a week later
    with time_machine.travel(week.start + timedelta(days=1), tick=False):
        assert judged.judge(added_then, "scored", 40.0, tag="Generic")
    assert build_digest(store, channel_id="C1", period=before).quiet
    [line] = build_digest(store, channel_id="C1", period=week).lines
    assert (line.now.cases, line.now.mean_headline, line.now.tags) == (1, 40.0, {"Generic": 1})


@pytest.mark.parametrize("retried_status", ["error", "invalid"])
def test_an_error_judged_again_leaves_its_old_week(store: Store, retried_status: str) -> None:
    judged = Judged(store)
    week = Period.of_week("2026-W47", ZoneInfo("Europe/Berlin"))
    failed = judged.add(week.previous().utc[0] + timedelta(days=1), retried_status)
    [old] = channel_stats(store, channel_id="C1", since=week.previous().utc[0], until=week.utc[0])
    assert (old.cases, old.errors) == (1, 1)
    assert reset_rows(store, judged.run_id, (retried_status,)) == 1
    assert channel_stats(store, channel_id="C1") == []
    with time_machine.travel(week.start + timedelta(hours=30), tick=False):
        assert judged.judge(failed, "scored", 60.0)
    assert channel_stats(store, channel_id="C1", since=week.previous().utc[0], until=week.utc[0]) == []
    [now] = channel_stats(store, channel_id="C1", since=week.utc[0], until=week.utc[1])
    assert (now.cases, now.scored, now.errors, now.mean_headline) == (1, 1, 0, 60.0)


def test_a_verdict_reused_from_the_cache_replaces_the_one_before_never_adds_to_it(store: Store) -> None:
    judged = Judged(store)
    base = datetime(2026, 11, 16, 9, 0)
    first = judged.add(base, "scored", 80.0, tag="Correct", question="Q")
    verdict = Verdict(status="scored", headline=80.0, passed=True, tag="Correct", rubric_name="eth", rubric_version="1",
                      rubric_hash="h1", judge_model="judge-a", prompt_hash="p")
    for minute in (10, 20):  # the same file judged twice more: both verdicts come from the cache, at no cost
        reuse = judged.add(base + timedelta(minutes=minute), "pending", question="Q")
        with time_machine.travel(base.replace(minute=minute, tzinfo=UTC), tick=False):
            assert save_verdict(store, reuse, verdict, cache_key="k", cached_from=first)

    [figures] = channel_stats(store, channel_id="C1")
    assert (figures.cases, figures.rejudged, figures.scored, figures.mean_headline, figures.tags) == (
        1, 2, 1, 80.0, {"Correct": 1})
    # read row by row in an hour cut by the bounds: the two re-reads in it, one case
    [inside] = channel_stats(store, channel_id="C1", since=base + timedelta(minutes=5), until=base + timedelta(minutes=30))
    assert (inside.cases, inside.rejudged, inside.scored) == (1, 1, 1)
    # a period that ends before the re-reads holds the first verdict
    [before] = channel_stats(store, channel_id="C1", since=base, until=base + timedelta(minutes=5))
    assert (before.cases, before.rejudged, before.mean_headline) == (1, 0, 80.0)
    with store.engine.connect() as conn:
        transaction = conn.begin()
        assert conn.execute(select(func.sum(JudgmentTally.reused))).scalar() == 2
        conn.execute(JudgmentTally.__table__.delete())
        add_judgments(conn, JudgmentTable.__table__, JudgmentTally.__table__, true(), feedback=Feedback.__table__)
        assert conn.execute(select(func.sum(JudgmentTally.reused))).scalar() == 2  # an upgrade counts them the same
        transaction.rollback()


def test_verdicts_saved_as_one_group_are_tallied_as_if_saved_one_by_one(store: Store) -> None:
    c1, c2 = Judged(store), Judged(store, channel="C2", rubric="academic")
    base = datetime(2026, 11, 16, 9, 0)
    rows = [(c1, c1.add(base, "pending", model=model, question=f"q{n}"), status, tag)
            for n, (model, status, tag) in enumerate([("m1", "scored", "Correct"), ("m1", "scored", "Correct"),
                                                      ("m1", "scored", "Generic"), ("m2", "error", None),
                                                      ("m2", "invalid", None), (None, "scored", "Refusal")])]
    rows += [(c2, c2.add(base, "pending", question=f"q{n}"), "scored", "Correct") for n in range(3)]
    first = c1.add(base, "scored", 100.0, tag="Correct", question="first")

    def verdict(judged: Judged, status: str, tag: str | None, n: int) -> Verdict:
        scored = status == "scored"
        return Verdict(status=status, headline=25.0 * n if scored else None, passed=n >= 2 if scored else None,
                       tag=tag, error=None if scored else "the reply was not JSON", cost_usd=0.001 * n,
                       rubric_name=judged.rubric, rubric_version="1", rubric_hash="h1", judge_model="judge-a",
                       prompt_hash="p")

    group = [RowVerdict(judgment_id, verdict(judged, status, tag, n), "k", first if n == 0 else None)
             for n, (judged, judgment_id, status, tag) in enumerate(rows)]
    with time_machine.travel(datetime(2026, 11, 17, 10, 15, tzinfo=UTC), tick=False):
        assert save_verdicts(store, group) == [True] * len(group)
    assert tally(store) == counted_afresh(store)
    assert sum(row[-6] for row in tally(store)) == len(rows) + 1
    correct = sorted(row[-6] for row in tally(store) if row[:3:2] == ("C1", "m1") and row[7:9] == ("scored", "Correct"))
    assert correct == [1, 2]  # the first row in its hour; the two of the group in one key of theirs


def test_votes_are_tallied_as_people_give_change_them_and_rows_are_judged_again(store: Store) -> None:
    judged = Judged(store)
    week = Period.of_week("2026-W47", KOLKATA)
    start, _ = week.utc
    first = judged.add(at(0, 0, 10), "scored", 100.0, model="m1")  # in the hour the week's start cuts
    second = judged.add(at(2, 9), "scored", 25.0, model="m1")
    error = judged.add(at(2, 10), "error", model="m1")
    other = judged.add(at(-2, 9), "scored", 75.0, model="m1")  # the week before

    def vote(judgment_id: int, user: str, agree: bool) -> None:
        record_feedback(store, judgment_id=judgment_id, user_id=user, agree=agree)
        assert tally(store) == counted_afresh(store)

    vote(first, "U1", True)
    vote(first, "U2", False)
    vote(second, "U1", True)
    vote(other, "U1", False)
    vote(error, "U1", False)  # a vote on a judge error is kept, but counts in no scored figure
    assert record_feedback(store, judgment_id=first, user_id="U2", agree=True) is False  # changed: the earlier vote
    assert tally(store) == counted_afresh(store)
    [figures] = channel_stats(store, channel_id="C1", since=start, until=week.utc[1])
    assert (figures.votes, figures.agreeing) == (3, 3)
    [before] = channel_stats(store, channel_id="C1", since=week.previous().utc[0], until=start)
    assert (before.votes, before.agreeing) == (1, 0)
    [inside] = channel_stats(store, channel_id="C1", since=start, until=start + timedelta(minutes=30))
    assert (inside.votes, inside.agreeing) == (2, 2)  # read row by row in the hour the week's start cuts

    # Judged again, a row takes its votes out of the hour it was judged in, and into the hour it is judged in now.
    assert reset_rows(store, judged.run_id, ("scored",)) == 3
    assert tally(store) == counted_afresh(store)
    [left] = channel_stats(store, channel_id="C1", since=start, until=week.utc[1])
    assert (left.scored, left.errors, left.votes) == (0, 1, 0)  # the judge error alone; its vote counts nowhere
    with time_machine.travel(datetime(2026, 11, 20, 15, 30, tzinfo=UTC), tick=False):
        assert judged.judge(second, "scored", 50.0)
    assert tally(store) == counted_afresh(store)
    [figures] = channel_stats(store, channel_id="C1", since=start, until=week.utc[1])
    assert (figures.scored, figures.votes, figures.agreeing) == (1, 1, 1)


def test_a_case_judged_again_in_the_hour_a_week_ends_counts_where_it_stood_at_the_end(store: Store) -> None:
    judged = Judged(store)
    week = Period.of_week("2026-W47", KOLKATA)
    start, end = week.utc  # 18:30 UTC: the hour from 18:00 holds the end of one week and the start of the next
    judged.add(at(3, 12), "scored", 20.0, question="before the end")
    judged.add(at(6, 23, 50), "scored", 60.0, question="before the end")  # 18:20 UTC: replaces it inside the week
    judged.add(at(3, 12), "scored", 40.0, question="after the end")
    judged.add(at(7, 0, 10), "scored", 90.0, question="after the end")  # 18:40 UTC: the next week's

    [figures] = channel_stats(store, channel_id="C1", since=start, until=end)
    assert (figures.cases, figures.rejudged, figures.mean_headline) == (2, 1, 50.0)  # 60 and 40
    [next_week] = channel_stats(store, channel_id="C1", since=end, until=end + timedelta(days=7))
    assert (next_week.cases, next_week.mean_headline) == (1, 90.0)
    [now] = channel_stats(store, channel_id="C1")
    assert (now.cases, now.rejudged, now.mean_headline) == (2, 2, 75.0)  # 60 and 90
    digest = build_digest(store, channel_id="C1", period=week)
    assert digest.lines[0].now.mean_headline == 50.0 and digest.trend[("m1", "eth")][-1] == 50.0
