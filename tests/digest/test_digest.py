"""Tests for bot.digest, its trend chart and its Slack message, on hand-computed histories (SQLite and PostgreSQL)."""

from __future__ import annotations

import io
import json
import random
import struct
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from sqlmodel import select

from bot.digest import Digest, Example, JudgeChange, Line, Period, Regression, WeekError, build_digest
from bot.digest.charts import trend_png
from bot.records import Verdict
from bot.slack.views.digest import digest_message, link_to, tag_values
from bot.slack.views.size_limits import MODEL_ROOM
from bot.store import Figures, Store, add_rows, create_run, record_feedback, save_label, save_verdict
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from bot.trust.calibration import Agreement, calibrate
from bot.trust.cases import labeled_verdicts
from tests.support.slack_messages import table_dicts, table_rows

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
WEEK = Period.of_week("2026-W47", BERLIN)  # Monday 16 to Sunday 22 November 2026, CET (UTC+1) throughout
TEAM_URL = "https://acme.slack.com/"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def at(day: int, hour: int = 12, minute: int = 0) -> datetime:
    """Naive UTC of a local Berlin time on `day` of WEEK (0 is its Monday, -7 the Monday before, 7 the one after)."""
    local = datetime.combine(WEEK.start.date() + timedelta(days=day), time(hour, minute), BERLIN)
    return local.astimezone(UTC).replace(tzinfo=None)


def hours(period: Period) -> float:
    """The real length of a period, in hours (aware datetimes of one zone subtract as wall-clock times)."""
    start, end = period.utc
    return (end - start).total_seconds() / 3600


class History:
    """Judgments in a store, each judged (through the store's own saving of verdicts) at the time the test chooses."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.run_id = create_run(store, rubric_name="eth", rubric_version="1", rubric_hash="h1",
                                       judge_model="judge-a", source="slack").id
        self.added = 0

    def add(self, when: datetime, headline: float | None = None, passed: bool | None = None, tag: str | None = None,
            *, status: str = "scored", model: str | None = "m1", rubric: str = "eth", channel: str | None = "C1",
            question: str = "Q", version: str = "1", judge_model: str = "judge-a", cached_from: int | None = None,
            answer: str | None = None, **more) -> int:
        """One judgment judged at `when` (naive UTC), scored unless `status` says otherwise; its id. Each is a case of
        its own (an answer of its own) unless `answer` names an earlier one's."""
        self.added += 1
        answer = f"A{self.added}" if answer is None else answer
        judge = {"rubric_name": rubric, "rubric_version": version, "judge_model": judge_model,
                 "rubric_hash": more.pop("rubric_hash", f"hash-of-{version}")}
        with time_machine.travel(when.replace(tzinfo=UTC), tick=False):
            add_rows(self.store, [{"run_id": self.run_id, "status": "malformed" if status == "malformed" else "pending",
                                  "model_name": model, "channel_id": channel, "team_id": "T1", "question": question,
                                  "reference": "R", "answer": answer, **judge, **more}])
        with self.store.session() as session:
            row = session.exec(select(JudgmentTable).order_by(JudgmentTable.id.desc()).limit(1)).one()
        if status in ("scored", "invalid", "error"):
            verdict = Verdict(status=status, headline=headline, passed=passed, tag=tag, prompt_hash="p", **judge,
                              error=None if status == "scored" else f"the judge's reply was {status}")
            with time_machine.travel(when.replace(tzinfo=UTC), tick=False):
                assert save_verdict(self.store, row.id, verdict, cache_key="k", cached_from=cached_from)
        return row.id

    def vote(self, judgment_id: int, user: str, agree: bool) -> None:
        record_feedback(self.store, judgment_id=judgment_id, user_id=user, agree=agree)


@pytest.fixture
def history(store: Store) -> History:
    return History(store)


def busy_week(h: History) -> None:
    """Channel C1 in WEEK and the week before: m1 and m2 on eth, m1 on academic (worked out in the tests below)."""
    # This week, m1 on eth: 4 scored, a judge error, an invalid reply; a pending and a malformed row that never count.
    first = h.add(at(0, 10), 100, True, "Correct")
    h.add(at(1), 50, False, "Generic")
    refusal = h.add(at(2), 0, False, "Refusal")
    h.add(at(3), 75, True, "Correct")
    error = h.add(at(4), status="error")
    h.add(at(5), status="invalid")
    h.add(at(6), 100, True, "Correct", status="pending")
    h.add(at(6), 100, True, "Correct", status="malformed")
    h.vote(first, "U1", True)
    h.vote(first, "U2", False)
    h.vote(refusal, "U1", True)
    h.vote(error, "U3", True)  # a vote on a judge error is no vote on a score: not counted
    # This week, m2 on eth (new: last week it only had rows that were never judged).
    hallucination = h.add(at(1), 25, False, "Hallucination", model="m2")
    h.add(at(2), 100, True, "Correct", model="m2")
    h.vote(hallucination, "U1", False)
    # This week, m1 on academic (a rubric without tags).
    h.add(at(3), 80, True, rubric="academic")
    h.add(at(4), status="error", rubric="academic")
    # The week before.
    h.add(at(-7), 100, True, "Correct")
    h.add(at(-5), 40, False, "Generic")
    h.add(at(-2), 70, True, "Correct")
    h.add(at(-1), status="error")
    h.add(at(-3), 60, False, rubric="academic")
    h.add(at(-4), 90, True, "Correct", model="m2", status="pending")
    h.add(at(-3), model="m2", status="malformed")


def figures_of(line: Line) -> tuple:
    now = line.now
    return (now.model_name, now.rubric_name, now.cases, now.scored, now.passed, now.errors, now.tags, now.votes,
            now.agreeing)


# 1. The numbers

def test_figures_and_changes_match_a_hand_computed_week(store, history):
    busy_week(history)
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert not digest.quiet
    assert [figures_of(line) for line in digest.lines] == [
        ("m1", "academic", 2, 1, 1, 1, {}, 0, 0),  # 80 scored + 1 error
        ("m1", "eth", 6, 4, 2, 2, {"Correct": 2, "Generic": 1, "Refusal": 1}, 3, 2),  # 4 scored + error + invalid
        ("m2", "eth", 2, 2, 1, 0, {"Hallucination": 1, "Correct": 1}, 1, 0),
    ]
    academic, m1_eth, m2_eth = digest.lines

    assert m1_eth.now.mean_headline == pytest.approx(56.25)  # (100 + 50 + 0 + 75) / 4
    assert m1_eth.now.pass_rate == pytest.approx(0.5)  # 2 passed / 4 scored
    assert m1_eth.error_rate == pytest.approx(2 / 6)  # error + invalid / 6 judged
    assert m1_eth.now.agreement == pytest.approx(2 / 3)  # U1 agrees twice, U2 disagrees once; U3 voted on an error
    assert m1_eth.before.cases == 4 and m1_eth.before.scored == 3  # 100, 40, 70 and an error
    assert m1_eth.before.mean_headline == pytest.approx(70.0)  # (100 + 40 + 70) / 3
    assert m1_eth.change == pytest.approx(-13.75)  # 56.25 - 70
    assert m1_eth.pass_change == pytest.approx(-50 / 3)  # 100 * (2/4 - 2/3) = -16.67 points

    assert academic.now.mean_headline == pytest.approx(80.0)
    assert academic.now.pass_rate == pytest.approx(1.0)
    assert academic.error_rate == pytest.approx(0.5)  # 1 error / 2 judged
    assert academic.before.mean_headline == pytest.approx(60.0)
    assert academic.change == pytest.approx(20.0)  # 80 - 60
    assert academic.pass_change == pytest.approx(100.0)  # 100 * (1/1 - 0/1)
    assert academic.now.agreement is None

    assert m2_eth.before is None  # last week's m2 rows were pending and malformed: nothing judged
    assert m2_eth.change is None and m2_eth.pass_change is None
    assert m2_eth.now.mean_headline == pytest.approx(62.5)  # (25 + 100) / 2
    assert m2_eth.error_rate == 0.0
    assert m2_eth.now.agreement == 0.0  # 0 of 1 vote

    assert (digest.cases, digest.errors) == (10, 3)  # 2 + 6 + 2 judged; 1 + 2 + 0 errors


# 2. Only this channel, only this period

def test_other_channels_and_the_terminal_never_leak_into_a_digest(store, history):
    h = history
    # C1: a row exactly at the start (in), one inside, one a second before the start (last week), one at the end (out).
    start, end = WEEK.utc
    at_start = h.add(start, 100, True, "Correct", question="Q1")
    inside = h.add(at(2), 60, True, "Correct", question="Q1")
    h.add(start - timedelta(seconds=1), 20, False, "Generic", question="Q1")
    h.add(end, 0, False, "Refusal", question="Q1", version="9", judge_model="judge-z")
    # The same model names elsewhere: a private channel (a regression, a worse score, a new judge), C2, the terminal.
    for channel in ("G0PRIVATE", "C2", None):
        h.add(at(-3), 100, True, "Correct", channel=channel, question="Q1")
        lowest = h.add(at(1), 0, False, "Hallucination", channel=channel, question="Q1", version="2",
                       judge_model="judge-b")
        h.add(at(2), 5, False, "Generic", channel=channel, model="m9", rubric="academic")
        h.add(at(-20), 10, False, "Generic", channel=channel)  # three weeks ago, for the trend
        h.vote(lowest, "U1", False)

    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert [figures_of(line) for line in digest.lines] == [("m1", "eth", 2, 2, 2, 0, {"Correct": 2}, 0, 0)]
    line = digest.lines[0]
    assert line.now.mean_headline == pytest.approx(80.0)  # (100 + 60) / 2: the row at the end is next week's
    assert (line.before.cases, line.before.mean_headline) == (1, pytest.approx(20.0))  # the second before start
    assert line.change == pytest.approx(60.0)
    assert [e.judgment_id for e in digest.worst] == [inside, at_start]
    assert {e.channel_id for e in digest.worst} == {"C1"}
    assert digest.regressions == []
    assert digest.changes == []
    assert digest.trend == {("m1", "eth"): [None] * 6 + [20.0, 80.0]}

    # The rows left out are really in those channels and in this period: their own digests show them.
    private = build_digest(store, channel_id="G0PRIVATE", period=WEEK)
    assert [(line.now.model_name, line.now.rubric_name) for line in private.lines] == [
        ("m1", "eth"), ("m9", "academic")]
    assert [(r.before, r.after) for r in private.regressions] == [(100.0, 0.0)]
    assert {c.what for c in private.changes} == {"rubric eth", "judge model"}
    terminal = build_digest(store, channel_id=None, period=WEEK)
    assert {e.channel_id for e in terminal.worst} == {None}
    assert terminal.trend[("m1", "eth")] == [None, None, None, None, 10.0, None, 100.0, 0.0]


def test_verdicts_read_again_from_the_cache_count_their_case_once(store, history, rubrics):
    first = history.add(at(1), 100, True, "Correct", answer="A")
    history.add(at(2), 100, True, "Correct", cached_from=first, answer="A")
    history.add(at(2), 100, True, "Correct", cached_from=first, answer="A")
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert (digest.cases, digest.rejudged) == (1, 2)
    assert (digest.lines[0].now.scored, digest.lines[0].now.passed, digest.lines[0].now.tags) == (1, 1, {"Correct": 1})
    message = digest_message(digest, rubrics, TEAM_URL)  # the week's report: cases, whatever was read again
    assert "*1 case* in <#C1>" in json.dumps(message["blocks"], ensure_ascii=False)
    assert [row["Cases"] for row in table_dicts(message)] == ["1"]


# 3. A quiet week

def test_a_week_without_judgments_is_one_short_line(store, history, rubrics):
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert digest.quiet and digest.lines == [] and digest.cases == 0
    message = digest_message(digest, rubrics, TEAM_URL)
    assert len(message["blocks"]) == 1 and message["blocks"][0]["type"] == "section"
    text = message["blocks"][0]["text"]["text"]
    assert text == "*Weekly digest · 16–22 Nov 2026 (2026-W47)*: no judgments in <#C1> over these 7 days."
    assert message["text"] == text
    terminal = digest_message(build_digest(store, channel_id=None, period=WEEK), rubrics, None, weekly=False)
    assert terminal["blocks"][0]["text"]["text"] == (
        "*Digest of the last 7 days · 16–22 Nov 2026*: no judgments in the terminal over these 7 days.")


def test_a_channel_judged_only_in_older_weeks_or_never_judged_this_week_is_quiet(store, history):
    history.add(at(-49), 90, True, "Correct")
    history.add(at(-7), 50, False, "Generic")
    history.add(at(-1, 23, 59), status="error")
    history.add(at(3), status="pending")
    history.add(at(4), status="malformed")
    history.add(at(7), 100, True, "Correct")  # next Monday
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert digest.quiet
    assert (digest.lines, digest.worst, digest.regressions, digest.changes, digest.trend) == ([], [], [], [], {})
    assert not build_digest(store, channel_id="C1", period=WEEK.previous()).quiet  # the same rows do make last week's digest


# 4. Periods

def test_weeks_across_daylight_saving_changes_are_169_and_167_hours():
    autumn = Period.of_week("2026-W43", BERLIN)  # 19-25 Oct 2026; clocks go back on Sunday 25 Oct
    assert hours(autumn) == 169
    assert autumn.utc == (datetime(2026, 10, 18, 22), datetime(2026, 10, 25, 23))  # CEST start, CET end
    assert (autumn.start.date(), autumn.last_day, autumn.end.date()) == (
        datetime(2026, 10, 19).date(), datetime(2026, 10, 25).date(), datetime(2026, 10, 26).date())
    # In the US, clocks go forward on Sunday 8 March 2026: that is the last day of 2026-W10 (2-8 March).
    spring = Period.of_week("2026-W10", NEW_YORK)
    assert hours(spring) == 167
    assert spring.utc == (datetime(2026, 3, 2, 5), datetime(2026, 3, 9, 4))  # EST start, EDT end
    assert hours(Period.of_week("2026-W11", NEW_YORK)) == 168  # 9-15 March: all of it EDT
    assert hours(WEEK) == 168


def test_a_digest_posted_on_monday_covers_the_previous_iso_week():
    monday = datetime(2026, 11, 23, 9, 0, tzinfo=BERLIN)
    assert Period.before_day_of(monday) == WEEK
    assert Period.before_day_of(datetime(2026, 11, 23, 0, 0, tzinfo=BERLIN)) == WEEK
    assert Period.before_day_of(datetime(2026, 11, 23, 23, 59, tzinfo=BERLIN)) == WEEK
    after_dst = Period.before_day_of(datetime(2026, 10, 26, 9, 0, tzinfo=BERLIN))
    assert after_dst == Period.of_week("2026-W43", BERLIN) and hours(after_dst) == 169
    assert Period.before_day_of(datetime(2026, 3, 9, 9, 0, tzinfo=NEW_YORK)) == Period.of_week("2026-W10", NEW_YORK)
    # Any other day: the seven days before it, whose last day names the week.
    wednesday = Period.before_day_of(datetime(2026, 11, 25, 9, 0, tzinfo=BERLIN))
    assert wednesday.start == datetime(2026, 11, 18, tzinfo=BERLIN)
    assert wednesday.last_day == datetime(2026, 11, 24).date()
    assert (wednesday.week, wednesday.label) == ("2026-W48", "18–24 Nov 2026")
    assert Period.ending(datetime(2026, 11, 23, tzinfo=BERLIN)) == WEEK
    assert WEEK.previous() == Period.of_week("2026-W46", BERLIN)


def test_week_keys_and_labels():
    assert (WEEK.week, WEEK.label) == ("2026-W47", "16–22 Nov 2026")
    # The claim key: the week a digest is posted in. Its figures are of W47, posted on Monday of W48; a digest
    # moved from Monday to Friday of one week is not posted twice in it, moved from Tuesday to Monday it is posted.
    assert WEEK.posting_week == "2026-W48"
    monday, friday = (Period.before_day_of(datetime(2026, 11, day, 9, tzinfo=BERLIN)) for day in (23, 27))
    assert monday.posting_week == friday.posting_week == "2026-W48" and monday.week != friday.week
    tuesday = Period.before_day_of(datetime(2026, 11, 17, 9, tzinfo=BERLIN))
    assert (tuesday.week, tuesday.posting_week, monday.posting_week) == ("2026-W47", "2026-W47", "2026-W48")
    assert Period.of_week(" 2026-w47 ", BERLIN) == WEEK
    across_months = Period.of_week("2026-W44", BERLIN)
    assert (across_months.week, across_months.label) == ("2026-W44", "26 Oct–1 Nov 2026")
    across_years = Period.of_week("2026-W53", BERLIN)  # 2026 has 53 ISO weeks
    assert (across_years.week, across_years.label) == ("2026-W53", "28 Dec 2026–3 Jan 2027")
    first = Period.of_week("2027-W01", BERLIN)
    assert (first.week, first.label, first.previous()) == ("2027-W01", "4–10 Jan 2027", across_years)


def test_eight_weeks_are_contiguous_and_end_with_the_period():
    weeks = WEEK.weeks(8)
    assert [week.week for week in weeks] == [f"2026-W{n}" for n in range(40, 48)]
    assert weeks[-1] == WEEK
    for earlier, later in zip(weeks, weeks[1:]):
        assert earlier.end == later.start and earlier.utc[1] == later.utc[0]
    assert [hours(week) for week in weeks] == [168, 168, 168, 169, 168, 168, 168, 168]
    assert all(week.start.time() == time() and week.start.weekday() == 0 for week in weeks)
    assert WEEK.weeks(1) == [WEEK]


@pytest.mark.parametrize("text", ["2026-47", "2026-W54", "abc", "2025-W53", "2026-W00", "2026-W", "", "2026-W47-W1"])
def test_a_badly_written_week_is_refused_with_an_example(text):
    with pytest.raises(WeekError, match="2026-W47"):
        Period.of_week(text, BERLIN)


# 5. Regressions and the worst examples

def test_regressions_and_worst_examples_with_their_links(store, history):
    h = history
    h.add(at(-6), 100, True, "Correct", question="Q-drop")
    dropped = h.add(at(1), 25, False, "Generic", question="Q-drop", message_ts="1763300000.000100")
    h.add(at(-6), 80, True, "Correct", question="Q-small")
    h.add(at(2), 75, True, "Correct", question="Q-small")  # 5 points down: not a regression
    h.add(at(-5), 60, True, "Correct", question="Q-ten")
    ten = h.add(at(3), 50, False, "Generic", question="Q-ten")  # exactly 10 points down: a regression
    h.add(at(-5), 50, False, "Generic", model="m2", question="Q-drop")
    m2_same = h.add(at(3), 50, False, "Generic", model="m2", question="Q-drop")  # m2 held steady
    h.add(at(-4), 100, True, "Correct", question="Q-mean")
    h.add(at(-3), 100, True, "Correct", question="Q-mean")
    h.add(at(4), 100, True, "Correct", question="Q-mean")
    csv_row = h.add(at(4), 70, False, "Generic", question="Q-mean", thread_ts="1763300000.000200", row_number=7)
    h.add(at(5), status="error", question="Q-small")  # no score: never among the worst
    h.add(at(5), 90, True, "Correct", question="Q-new")  # nothing to compare with

    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert [(r.example.question, r.example.model_name, r.before, r.after) for r in digest.regressions] == [
        ("Q-drop", "m1", 100.0, 25.0),  # 75 points down
        ("Q-mean", "m1", 100.0, 85.0),  # mean of 100 and 70 against 100: 15 down, shown by its lowest judgment
        ("Q-ten", "m1", 60.0, 50.0),
    ]
    top = digest.regressions[0]
    assert top.drop == 75.0 and top.example.judgment_id == dropped and top.example.headline == 25.0
    assert digest.regressions[1].example.judgment_id == csv_row
    assert digest.regressions[2].example.judgment_id == ten

    # The five lowest scores, lowest first; equal scores newest first; the 90 and the 100 are not among them.
    assert [(e.headline, e.judgment_id) for e in digest.worst] == [
        (25.0, dropped), (50.0, m2_same), (50.0, ten), (70.0, csv_row), (75.0, digest.worst[4].judgment_id)]
    assert digest.worst[4].question == "Q-small"

    assert link_to(top.example, TEAM_URL) == f"<https://acme.slack.com/archives/C1/p1763300000000100|card> (#{dropped})"
    assert link_to(digest.regressions[1].example, TEAM_URL) == (
        f"<https://acme.slack.com/archives/C1/p1763300000000200|row 7> (#{csv_row})")
    assert link_to(top.example, None) == f"#{dropped}"
    assert link_to(digest.regressions[2].example, TEAM_URL) == f"#{ten}"  # no message to link to
    in_thread = Example(5, "m1", "eth", 10.0, "Q", "C1", "1763300000.000300", "1763300000.000200", None)
    assert link_to(in_thread, TEAM_URL) == ("<https://acme.slack.com/archives/C1/p1763300000000300"
                                            "?thread_ts=1763300000.000200&cid=C1|card> (#5)")
    thread_only = Example(6, "m1", "eth", 10.0, "Q", "C1", None, "1763300000.000200", None)
    assert link_to(thread_only, TEAM_URL) == "<https://acme.slack.com/archives/C1/p1763300000000200|thread> (#6)"


def test_how_far_to_trust_the_judge_counts_the_labels_and_votes_of_its_weeks_only(store, history, rubrics):
    h = history
    older, before, agreed, disagreed, late = (h.add(at(day), 100, True, "Correct", question=f"Q{day}")
                                              for day in (-40, -3, 1, 2, 3))
    elsewhere = h.add(at(2), 100, True, "Correct", channel="C2", question="Q-elsewhere")

    def vote(judgment_id: int, when: datetime, agree: bool, user: str = "U1") -> None:
        with time_machine.travel(when.replace(tzinfo=UTC), tick=False):
            h.vote(judgment_id, user, agree)

    vote(older, at(-30), False)  # before the four weeks before the week: left out
    vote(before, at(-3), True)
    vote(agreed, at(1), True)
    vote(disagreed, at(2), False)
    vote(late, at(7, 1), False)  # after the week: left out
    vote(elsewhere, at(2), False)  # another channel's judgment: left out
    vote(agreed, at(2), True, user="U2")  # U2's label of the same judgment stands in for this vote
    with store.session() as session:
        judgment = session.get(JudgmentTable, agreed)
    with time_machine.travel(at(3).replace(tzinfo=UTC), tick=False):
        save_label(store, judgment=judgment, user_id="U2", source="slack", values={}, passed=False, pass_from="given",
                   tag="Generic",
                   headline=None, note=None)

    [trust] = build_digest(store, channel_id="C1", period=WEEK).trust
    assert (trust.rubric_name, trust.week.n, trust.week.pass_n, trust.week.pass_agree) == ("eth", 3, 3, 1)
    assert (trust.before.n, trust.before.pass_agree) == (1, 1)
    assert trust.given_on.judge_models == {"judge-a": 4} and trust.now is not None and trust.now.judge_model == "judge-a"


@pytest.mark.slow
@pytest.mark.parametrize("team", [None, "T1"])
def test_the_trust_counted_in_the_database_is_the_calibration_of_every_label_read_one_by_one(store, history, team):
    """Votes and labels counted in groups give the figures a calibration of the same labels read one by one gives."""
    h = history
    rng = random.Random(5)

    def label(judgment_id: int, user: str) -> None:
        with store.session() as session:
            row = session.get(JudgmentTable, judgment_id)
        save_label(store, judgment=row, user_id=user, source="slack", values={},
                   passed=(passed := rng.choice((True, False, None))), pass_from=passed and "given", tag=None,
                   headline=None, note=None)

    for n in range(160):
        day = rng.randrange(0, 7) if n % 2 else rng.randrange(-34, 0)  # the week, or the (four and more) before
        passed = rng.choice((True, False, None))
        judgment = h.add(at(day, rng.randrange(24)), 50 if passed is None else 100 * passed, passed,
                         rng.choice(("Correct", "Generic")), judge_model=rng.choice(("judge-a", "judge-b")),
                         rubric=rng.choice(("eth", "academic")), channel=rng.choice(("C1", "C1", "C2", None)),
                         rubric_hash=rng.choice(("h1", "h2")), question=f"Q{n}", team_id=rng.choice(("T1", "T1", "T2")))
        when = at(day, 23, 30) if rng.random() < 0.5 else at(min(day + rng.randrange(3), 6), 8)
        for user in rng.sample(("U1", "U2", "U3"), rng.randrange(3)):
            with time_machine.travel(when.replace(tzinfo=UTC), tick=False):
                if rng.random() < 0.3:
                    label(judgment, user)
                else:
                    h.vote(judgment, user, rng.random() < 0.7)
            if rng.random() < 0.25:  # the same person labels it later, maybe after the week: the label stands in
                with time_machine.travel((when + timedelta(days=rng.choice((1, 9)))).replace(tzinfo=UTC), tick=False):
                    label(judgment, user)
    start, end = WEEK.utc
    earliest = WEEK.weeks(5)[0].utc[0]
    found = {trust.rubric_name: trust for trust in build_digest(store, channel_id="C1", period=WEEK, team_id=team).trust}
    assert sorted(found) == ["academic", "eth"]
    for name, trust in found.items():
        labels = [label for label in labeled_verdicts(store, rubric_name=name, channel_id="C1", team_id=team,
                                                      since=earliest) if label.labeled_at < end]
        week = calibrate([label for label in labels if label.labeled_at >= start])
        before = calibrate([label for label in labels if label.labeled_at < start])
        assert trust.week == Agreement(**{field: getattr(week, field) for field in Agreement.model_fields})
        assert trust.before == Agreement(**{field: getattr(before, field) for field in Agreement.model_fields})
        assert trust.week.n > 5 and trust.before.n > 5 and trust.week.pass_n < trust.week.n  # every kind was counted
        everything = calibrate(labels)
        assert (trust.given_on.n, trust.given_on.judge_models, trust.given_on.rubric_hashes) == (
            everything.n, everything.judge_models, everything.rubric_hashes)


# 6. Judge changes

def test_a_new_rubric_version_during_the_week_is_one_change(store, history):
    h = history
    h.add(at(-6), 100, True, "Correct")
    h.add(at(-2), 50, False, "Generic")
    h.add(at(0), 75, True, "Correct")
    h.add(at(1, 18), version="2", status="pending")  # never judged: not when version 2 started
    h.add(at(2, 10), 100, True, "Correct", version="2")
    h.add(at(2, 15), status="error", version="2")
    h.add(at(4), 25, False, "Generic", version="2")
    h.add(at(3), 80, True, rubric="academic")  # a rubric first used this week: nothing to compare with
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert digest.changes == [JudgeChange("rubric eth", "version 1", "version 2", since=at(2, 10))]
    assert digest.changes[0].since == datetime(2026, 11, 18, 9, 0)  # 10:00 in Berlin


def test_a_new_judge_model_during_the_week_is_one_change(store, history):
    h = history
    h.add(at(-3), 100, True, "Correct")
    h.add(at(1), 50, False, "Generic")
    h.add(at(3, 9, 30), status="invalid", judge_model="judge-b")
    h.add(at(5), 75, True, "Correct", judge_model="judge-b")
    assert build_digest(store, channel_id="C1", period=WEEK).changes == [
        JudgeChange("judge model", "judge-a", "judge-b", at(3, 9, 30))]


def test_a_judge_changed_and_changed_back_is_two_changes(store, history):
    h = history
    h.add(at(-3), 100, True, "Correct")
    h.add(at(1, 10, 5), 50, False, "Generic")
    h.add(at(1, 10, 20), 60, True, "Correct", judge_model="judge-b")  # the same hour: one switch, not three
    h.add(at(1, 10, 40), 70, True, "Correct", judge_model="judge-b")
    h.add(at(1, 10, 50), 70, True, "Correct", judge_model="judge-b")
    h.add(at(4, 8), 50, False, "Generic")  # back to judge-a
    assert build_digest(store, channel_id="C1", period=WEEK).changes == [
        JudgeChange("judge model", "judge-a", "judge-b", at(1, 10, 20)),
        JudgeChange("judge model", "judge-b", "judge-a", at(4, 8))]


def test_two_judges_in_one_hour_before_the_week_then_one_of_them_is_no_change(store, history):
    h = history
    h.add(at(-1, 10, 5), 50, False, "Generic", judge_model="judge-z")
    h.add(at(-1, 10, 30), 50, False, "Generic")  # judge-a, the one that goes on
    h.add(at(2), 70, True, "Correct")
    assert build_digest(store, channel_id="C1", period=WEEK).changes == []


def test_the_same_text_under_the_same_version_is_no_change_but_a_new_text_is(store, history):
    h = history
    for day in (-6, -1, 0, 3, 6):  # the same version and judge all along
        h.add(at(day), 50, False, "Generic")
    assert build_digest(store, channel_id="C1", period=WEEK).changes == []
    for day in (-6, -1, 0, 3):  # a switch last week is not a change of this week
        h.add(at(day), 50, False, "Generic", channel="C4", version="2" if day >= -1 else "1")
    assert build_digest(store, channel_id="C4", period=WEEK).changes == []
    h.add(at(-2), 50, False, "Generic", channel="C5", rubric_hash="aaaaaaaaaa")
    h.add(at(2), 50, False, "Generic", channel="C5", rubric_hash="bbbbbbbbbb")  # edited without a new version
    assert build_digest(store, channel_id="C5", period=WEEK).changes == [
        JudgeChange("rubric eth", "version 1 (aaaaaaa)", "version 1 (bbbbbbb)", at(2))]


# 7. The trend

def test_trend_has_eight_weeks_with_gaps_and_the_right_means(store, history):
    h = history
    h.add(at(-50), 0, False, "Refusal", model="m3")  # 2026-W39: before the eight weeks
    h.add(at(-49), 40, False, "Generic", model="m3")  # 2026-W40, the first week
    h.add(at(-45), 60, True, "Correct", model="m3")
    h.add(at(-33), 90, True, "Correct", model="m3")  # 2026-W42, the third week
    h.add(at(-32), status="error", model="m3")
    for headline in (30, 35, 40):  # 2026-W47, this week
        h.add(at(2), headline, headline > 35, "Generic", model="m3")
    # Around the end of summer time: Sunday 25 Oct 23:30 CET is still W43, Monday 00:30 is W44.
    h.add(at(-22, 23, 30), 10, False, "Generic", model="m4")
    h.add(at(-21, 0, 30), 90, True, "Correct", model="m4")
    h.add(at(-10), status="error", model="m5")  # only a judge error: no line in the chart
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert digest.weeks == WEEK.weeks(8)
    assert digest.trend == {
        ("m3", "eth"): [50.0, None, 90.0, None, None, None, None, 35.0],  # (40 + 60) / 2, 90, (30 + 35 + 40) / 3
        ("m4", "eth"): [None, None, None, 10.0, 90.0, None, None, None],
    }
    assert digest.series() == {"m3": digest.trend[("m3", "eth")], "m4": digest.trend[("m4", "eth")]}

    h.add(at(-30), 80, True, model="m3", rubric="academic")
    h.add(at(1), 20, False, "Generic", model=None)
    series = build_digest(store, channel_id="C1", period=WEEK).series()
    assert series == {
        "m3 · eth": [50.0, None, 90.0, None, None, None, None, 35.0],
        "m4 · eth": [None, None, None, 10.0, 90.0, None, None, None],
        "m3 · academic": [None, None, 80.0, None, None, None, None, None],
        "model not named · eth": [None] * 7 + [20.0],
    }


# 8. The chart

def test_trend_chart_is_a_1200_by_675_png():
    labels = [week.week for week in WEEK.weeks(8)]
    for series in ({"m3": [50.0, None, 90.0, None, None, None, None, 35.0], "m1 · eth": [None] * 7 + [80.0]}, {}):
        png = trend_png("Mean headline per week", labels, series)
        assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR"
        assert struct.unpack(">II", png[16:24]) == (1200, 675)
    try:
        from PIL import Image
    except ImportError:
        pytest.skip("Pillow is not installed: the PNG header was checked, not the image")
    with Image.open(io.BytesIO(png)) as image:
        image.verify()
    with Image.open(io.BytesIO(png)) as image:
        assert (image.format, image.size) == ("PNG", (1200, 675))
        image.load()


# 9. The Slack message

def test_digest_message_shows_the_week_the_changes_and_every_tag(store, history, rubrics):
    busy_week(history)
    digest = build_digest(store, channel_id="C1", period=WEEK)
    message = digest_message(digest, rubrics, TEAM_URL)
    blocks = message["blocks"]
    assert (blocks[0]["type"], blocks[0]["text"]["text"]) == ("header", "Weekly digest · 16–22 Nov 2026 (2026-W47)")
    assert message["text"] == "judgebot: Weekly digest · 16–22 Nov 2026 (2026-W47)"
    assert blocks[1]["text"]["text"].startswith(
        "*10 cases* in <#C1> · 2 model(s) under test · 2 rubric(s) · judge errors 30.0%")  # 3 / 10
    texts = [block["text"]["text"] for block in blocks if block["type"] == "section"]
    assert table_rows(message) == [
        ["Model", "Rubric", "Cases", "Mean /100", "▲▼ mean", "Pass", "▲▼ pass", "Judge errors", "Tags",
         "People agree with the judge"],
        ["m1", "academic", "2", "80.0", "▲ 20.0", "100%", "▲ 100.0 pts", "50% (1)", "–", "–"],
        ["m1", "eth", "6", "56.2", "▼ 13.8", "50%", "▼ 16.7 pts", "33% (2)",
         "correct 50% · generic 25% · refusal 25% · hallucination 0%",
         "75% (3 labels of 2 cases, each case weighing one), 95% CI 28%-89% (score interval over cases); "
         "few labeled cases (n = 2)"],
        ["m2", "eth", "2", "62.5", "new this week", "50%", "–", "0%",
         "correct 50% · generic 0% · refusal 0% · hallucination 50%",
         "0% (0/1), 95% CI 0%-79% (Wilson); few labeled cases (n = 1)"],
    ]
    assert blocks[2]["type"] == "table"  # right under the week's counts
    # Every row is a case of its own: m1's two voted cases hold three votes (U1 and U2 on the first, U1 on the
    # refusal), two agreeing; m2's one vote disagrees (Wilson's 0%-79%).
    assert (digest.lines[1].now.votes, digest.lines[1].now.agreeing) == (3, 2)
    assert tag_values(rubrics, "eth") == ["Correct", "Generic", "Refusal", "Hallucination"]
    assert tag_values(rubrics, "academic") == [] and tag_values(rubrics, "no-such-rubric") == []
    # m1 on eth asked the same question "Q" with a mean of 70 last week and 56.25 now: a regression of 13.75.
    assert any(text.startswith("*Biggest regressions*") and "*m1* · `eth` · 70 → 56" in text for text in texts)
    assert any(text.startswith("*Lowest scores*\n• *0*/100 · *m1* · `eth`") for text in texts)
    assert blocks[-1]["type"] == "context" and "trend of the last 8 weeks" in blocks[-1]["elements"][0]["text"]


def test_untrusted_names_and_questions_are_escaped(store, history, rubrics):
    h = history
    for model, question in (("<!channel> bot", "<@U1> what is <!here>?"), ("m&m", "a <b> & c")):
        h.add(at(-3), 100, True, "Correct", model=model, question=question)
        h.add(at(2), 0, False, "Refusal", model=model, question=question, version="<!everyone>",
              judge_model="<!channel>")
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert len(digest.regressions) == 2 and len(digest.changes) == 2
    message = digest_message(digest, rubrics, TEAM_URL)
    # the table's cells show the names as they are, as text (never a mention, link or emoji element)
    assert sorted(row["Model"] for row in table_dicts(message)) == ["<!channel> bot", "m&m"]
    rendered = json.dumps([block for block in message["blocks"] if block["type"] != "table"], ensure_ascii=False)
    for raw in ("<!channel>", "<@U1>", "<!here>", "<!everyone>", "<b>"):
        assert raw not in rendered
    for escaped in ("&lt;!channel&gt; bot", "&lt;@U1&gt; what is &lt;!here&gt;?", "version &lt;!everyone&gt;",
                    "*m&amp;m*", "a &lt;b&gt; &amp; c"):
        assert escaped in rendered


def busy_line(n: int, rubric: str) -> Line:
    """A pair with every figure (long in Slack: the message's size limit cuts the list)."""
    name = f"campus-bot-{n:03d}-with-a-longish-name"
    return Line(Figures(name, rubric, cases=120, scored=100, mean_headline=55.5, passed=40, errors=20,
                        tags={"Correct": 40, "Generic": 60}, votes=7, agreeing=5),
                Figures(name, rubric, cases=100, scored=100, mean_headline=60.0, passed=50))


def terse_line(n: int, rubric: str) -> Line:
    """A pair with one judge error and nothing else (short: the 50-block limit cuts the list)."""
    return Line(Figures(f"m{n}", rubric, cases=1, errors=1), None)


@pytest.mark.parametrize("make_line", [busy_line, terse_line])
def test_two_hundred_pairs_fit_one_message_with_a_more_line(rubrics, make_line):
    lines = [make_line(n, rubric) for n in range(100) for rubric in ("eth", "academic")]
    example = Example(1, "campus-bot-000-with-a-longish-name", "eth", 0.0, "Why? " * 100, "C1", "1763300000.000100",
                      None, None)
    digest = Digest("C1", WEEK, lines,
                    regressions=[Regression(example, 100.0, 0.0)] * 5, worst=[example] * 5,
                    changes=[JudgeChange("rubric eth", "version 1", "version 2", at(2))],
                    weeks=WEEK.weeks(8))
    message = digest_message(digest, rubrics, TEAM_URL)
    blocks = message["blocks"]
    assert len(blocks) <= 50
    assert len(json.dumps(message, ensure_ascii=False)) < 12_000
    shown = len(table_dicts(message))
    more = [block["elements"][0]["text"] for block in blocks
            if block["type"] == "context" and "more model and rubric pair" in block["elements"][0]["text"]]
    assert 0 < shown < 200
    assert more == [f"_{200 - shown} more model and rubric pair(s) not shown: `judgebot digest --channel C1` in a "
                    "terminal lists them all._"]
    assert blocks[0]["type"] == "header" and blocks[-1]["type"] == "context"
    assert any(block["type"] == "section" and block["text"]["text"].startswith("*Lowest scores*") for block in blocks)


def test_a_long_model_name_from_a_csv_still_gives_a_postable_digest(store, history, rubrics):
    name = "campus-bot-v2-" * 50  # 700 characters, as a CSV's model column may hold
    for day in range(5):
        history.add(at(day), 10 * day, False, "Generic", model=name, question=f"Question {day}?")
    message = digest_message(build_digest(store, channel_id="C1", period=WEEK), rubrics, TEAM_URL)
    assert all(len(block["text"]["text"]) <= 3000 for block in message["blocks"] if block["type"] == "section")
    [row] = table_dicts(message)
    assert row["Model"] == name[:MODEL_ROOM - 1] + "…"  # cut, and said to be


def test_a_rubric_edited_all_week_lists_ten_changes_and_a_count(store, history, rubrics):
    history.add(at(-3), 50, False, "Generic")
    for n in range(40):  # a team tuning its rubric's text forty times in one week
        history.add(at(0) + timedelta(minutes=10 * n), 50, False, "Generic", rubric_hash=f"{n:07d}" + "x" * 25)
    digest = build_digest(store, channel_id="C1", period=WEEK)
    assert len(digest.changes) == 40
    text = json.dumps(digest_message(digest, rubrics, TEAM_URL)["blocks"], ensure_ascii=False)
    assert "…and 30 more changes" in text and text.count("• rubric eth:") == 10
