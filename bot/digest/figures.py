"""A channel's digest figures: each model's week against the week before, regressions, lowest scores, judge changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlmodel import col

from bot.digest.week import Period
from bot.records import RowState
from bot.store import (
    HOUR,
    Figures,
    Judgment,
    Spend,
    Store,
    channel_stats,
    counted_in_channel,
    hour_of,
    in_channel,
    model_of,
    spend,
)
from bot.trust.report import WEEKS_BEFORE, TrustBar, WeekTrust, weekly_trust

WEEKS_CHARTED = 8
WORST_SHOWN = 5
REGRESSIONS_SHOWN = 5
REGRESSION_POINTS = 10.0  # headline points a question must lose from one week to the next to count


def signed(change: float | None, unit: str = "") -> str:
    """A change as ▲ 5.3, ▼ 2.0 or = 0; empty when there is nothing to compare with."""
    if change is None:
        return ""
    if round(change, 1) == 0:
        return f"= 0{unit}"
    return f"{'▲' if change > 0 else '▼'} {abs(change):.1f}{unit}"


@dataclass
class Line:
    """One model under test on one rubric: this week's figures and last week's."""

    now: Figures
    before: Figures | None

    @property
    def change(self) -> float | None:
        """Mean headline against last week's, in points."""
        if self.before is None or self.before.mean_headline is None or self.now.mean_headline is None:
            return None
        return self.now.mean_headline - self.before.mean_headline

    @property
    def pass_change(self) -> float | None:
        """Pass rate against last week's, in percentage points."""
        if self.before is None or self.before.pass_rate is None or self.now.pass_rate is None:
            return None
        return 100 * (self.now.pass_rate - self.before.pass_rate)

    @property
    def error_rate(self) -> float | None:
        """Share of judged rows that ended in a judge error or broke the rubric's rules."""
        return self.now.errors / self.now.judged if self.now.judged else None


@dataclass(frozen=True)
class Example:
    """One judgment worth a look, with what is needed to link to it."""

    judgment_id: int
    model_name: str | None
    rubric_name: str
    headline: float
    question: str
    channel_id: str | None
    message_ts: str | None
    thread_ts: str | None
    row_number: int | None


@dataclass(frozen=True)
class Regression:
    """A question that scored lower this week than last week, for the same model and rubric."""

    example: Example  # this week's lowest judgment of the question
    before: float
    after: float

    @property
    def drop(self) -> float:
        return self.before - self.after


@dataclass(frozen=True)
class JudgeChange:
    """The judge itself changed: a rubric's version (or its text), or the judge model, from `since` on."""

    what: str  # "rubric eth" or "judge model"
    before: str
    after: str
    since: datetime  # naive UTC


@dataclass
class Digest:
    """What one channel's digest says about one period."""

    channel_id: str | None
    period: Period
    lines: list[Line]
    regressions: list[Regression] = field(default_factory=list)
    worst: list[Example] = field(default_factory=list)
    changes: list[JudgeChange] = field(default_factory=list)
    weeks: list[Period] = field(default_factory=list)
    trend: dict[tuple[str | None, str], list[float | None]] = field(default_factory=dict)
    trust: list[WeekTrust] = field(default_factory=list)
    spend: Spend | None = None  # what the period's judgments cost, per rubric and judge

    @property
    def quiet(self) -> bool:
        """Nothing was judged in the channel during the period."""
        return not self.lines

    @property
    def judged(self) -> int:
        return sum(line.now.judged for line in self.lines)

    @property
    def reused(self) -> int:
        """Verdicts taken from the cache (not new judgments, not billed), counted apart from `judged`."""
        return sum(line.now.reused for line in self.lines)

    @property
    def errors(self) -> int:
        return sum(line.now.errors for line in self.lines)

    def series(self) -> dict[str, list[float | None]]:
        """The trend chart's lines: "model · rubric", or the model alone when the channel used one rubric."""
        rubrics = {rubric for _, rubric in self.trend}
        return {(model or "model not named") + ("" if len(rubrics) == 1 else f" · {rubric}"): values
                for (model, rubric), values in self.trend.items()}


def build_digest(store: Store, *, channel_id: str | None, period: Period, weeks: int = WEEKS_CHARTED,
                 team_id: str | None = None, bar: TrustBar | None = None) -> Digest:
    """The digest of one channel (None: the terminal's judgments) over `period`, from that channel's rows only.

    `team_id` narrows the labels to the workspace's; `bar` says when agreement with people earns a warning.
    """
    start, end = period.utc
    previous = period.previous()
    now = channel_stats(store, channel_id=channel_id, since=start, until=end)
    if not now:
        return Digest(channel_id, period, [])
    before = {(f.model_name, f.rubric_name): f for f in
              channel_stats(store, channel_id=channel_id, since=previous.utc[0], until=start)}
    lines = [Line(figures, before.get((figures.model_name, figures.rubric_name))) for figures in now]
    charted = period.weeks(weeks)
    trust = week_trust(store, channel_id=channel_id, team_id=team_id, period=period, bar=bar or TrustBar())
    spent = spend(store, channel_id=channel_id, since=start, until=end)
    with store.session() as session:
        return Digest(
            channel_id, period, lines,
            regressions=_regressions(session, channel_id, period),
            worst=_worst(session, channel_id, period),
            changes=_changes(session, channel_id, period),
            weeks=charted,
            trend=_trend(session, channel_id, charted),
            trust=trust,
            spend=spent,
        )


def week_trust(store: Store, *, channel_id: str | None, team_id: str | None, period: Period,
               bar: TrustBar) -> list[WeekTrust]:
    """Per rubric with labels in the period or the WEEKS_BEFORE weeks before it: the period's pass/fail agreement
    against theirs, and what to doubt."""
    start, end = period.utc
    return weekly_trust(store, channel_id=channel_id, team_id=team_id, since=period.weeks(WEEKS_BEFORE + 1)[0].utc[0],
                        cut=start, until=end, bar=bar)


def _example(row: Any) -> Example:
    return Example(row.id, row.model_name, row.rubric_name, float(row.headline), row.question, row.channel_id,
                   row.message_ts, row.thread_ts, row.row_number)


EXAMPLE_COLUMNS = (col(Judgment.id), col(Judgment.model_name), col(Judgment.rubric_name), col(Judgment.headline),
                   col(Judgment.question), col(Judgment.channel_id), col(Judgment.message_ts), col(Judgment.thread_ts),
                   col(Judgment.row_number))


def _worst(session: Any, channel_id: str | None, period: Period) -> list[Example]:
    order = (col(Judgment.headline), col(Judgment.id).desc())
    # The lowest found in the index of the channel's judgments first: only they are read whole.
    lowest = (select(col(Judgment.id)).where(*in_channel(channel_id, *period.utc), col(Judgment.status) == RowState.SCORED)
              .order_by(*order).limit(WORST_SHOWN))
    statement = select(*EXAMPLE_COLUMNS).where(col(Judgment.id).in_(lowest)).order_by(*order)
    return [_example(row) for row in session.execute(statement)]


def _regressions(session: Any, channel_id: str | None, period: Period) -> list[Regression]:
    """Questions a model scored lower on this week than last week, by their mean headline, biggest drop first."""
    start = period.utc[0]
    earlier = col(Judgment.judged_at) < start
    # The means are named in a subquery: repeated in HAVING and ORDER BY, each with its own parameters, SQLite would
    # not know them for the same aggregates and would work each out again.
    means = (select(col(Judgment.question_key).label("key"), func.avg(case((earlier, Judgment.headline))).label("before"),
                    func.avg(case((earlier, None), else_=Judgment.headline)).label("now"))
             .where(*in_channel(channel_id, period.previous().utc[0], period.utc[1]),
                    col(Judgment.status) == RowState.SCORED, col(Judgment.question_key).is_not(None))
             .group_by(col(Judgment.question_key)).subquery("means"))
    drop = means.c.before - means.c.now
    drops = (select(means.c.key, means.c.before, means.c.now).where(drop >= REGRESSION_POINTS)
             .order_by(drop.desc(), means.c.key).limit(REGRESSIONS_SHOWN))
    drops = session.execute(drops).all()
    examples = session.execute(  # each question's lowest judgment this week, to link to
        select(*EXAMPLE_COLUMNS, col(Judgment.question_key))
        .where(*in_channel(channel_id, *period.utc), col(Judgment.status) == RowState.SCORED,
               col(Judgment.question_key).in_([key for key, _, _ in drops]))
        .order_by(col(Judgment.headline).desc(), col(Judgment.id))).all()
    lowest = {row.question_key: row for row in examples}
    return [Regression(_example(lowest[key]), float(before), float(now)) for key, before, now in drops]


def _changes(session: Any, channel_id: str | None, period: Period) -> list[JudgeChange]:
    """What of the judge changed during the period, against what judged last before it (in the week before)."""
    start, end = period.utc
    rows = counted_in_channel(channel_id, period.previous().utc[0], end, cuts=(start,))
    found: list[JudgeChange] = []
    versions = select(rows.c.at, rows.c.rubric_name, rows.c.rubric_version, rows.c.rubric_hash).distinct()
    by_rubric: dict[str, list[tuple[datetime, str]]] = {}
    for at, rubric, version, digest in session.execute(versions):
        by_rubric.setdefault(rubric, []).append((at, f"{version}:{digest}"))
    for rubric, used in sorted(by_rubric.items()):
        names = _version_names(sorted({key for _, key in used}))
        for before, after, since in _switches(used, start):
            version, digest = after.rsplit(":", 1)
            exact = _first_judged(session, channel_id, since, Judgment.rubric_name == rubric,
                                  Judgment.rubric_version == version, Judgment.rubric_hash == digest)
            found.append(JudgeChange(f"rubric {rubric}", names[before], names[after], exact))
    judges = select(rows.c.at, rows.c.judge_model).distinct()
    for before, after, since in _switches(list(session.execute(judges)), start):
        exact = _first_judged(session, channel_id, since, Judgment.judge_model == after)
        found.append(JudgeChange("judge model", before, after, exact))
    return found


def _first_judged(session: Any, channel_id: str | None, hour: datetime, *matching: Any) -> datetime:
    """When the first matching row was judged, within the hour the tally places it in."""
    first = session.execute(select(func.min(Judgment.judged_at))
                            .where(*in_channel(channel_id, hour, hour_of(hour) + HOUR), *matching)).scalar()
    return first or hour


def _version_names(keys: list[str]) -> dict[str, str]:
    """"version 2", or with the text's hash when one version was used with different texts."""
    versions = [key.rsplit(":", 1)[0] for key in keys]
    return {key: f"version {version}" + (f" ({key.rsplit(':', 1)[1][:7]})" if versions.count(version) > 1 else "")
            for key, version in zip(keys, versions)}


def _switches(used: list[Any], start: datetime) -> list[tuple[str, str, datetime]]:
    """(before, after, since) for each switch from `start` on, walking the times (hours) each key was used at.

    Within one hour that saw two keys, the one in use before goes first and the one used on after it last: a
    switch, not a switch and back.
    """
    by_time: dict[datetime, list[str]] = {}
    for at, key in used:
        by_time.setdefault(at, []).append(key)
    times = sorted(by_time)
    current, switches = None, []
    for index, at in enumerate(times):
        following = set(by_time[times[index + 1]]) if index + 1 < len(times) else set()
        # what was in use goes first, what goes on being used last: a switch is counted once, where it happened
        for key in sorted(by_time[at], key=lambda key: (key != current, key in following, key)):
            if current is not None and key != current and at >= start:
                switches.append((current, key, at))
            current = key
    return switches


def _trend(session: Any, channel_id: str | None, weeks: list[Period]) -> dict[tuple[str | None, str], list[float | None]]:
    """Mean headline per model and rubric in each of `weeks`, added up from the hourly tallies."""
    rows = counted_in_channel(channel_id, weeks[0].utc[0], weeks[-1].utc[1],
                              cuts=tuple(week.utc[1] for week in weeks[:-1]))
    bucket = case(*[(rows.c.at < week.utc[1], index) for index, week in enumerate(weeks)])
    statement = (select(bucket, rows.c.model_key, rows.c.rubric_name, func.sum(rows.c.headline_total),
                        func.sum(rows.c.headlines))
                 .where(rows.c.status == RowState.SCORED).group_by(bucket, rows.c.model_key, rows.c.rubric_name))
    trend: dict[tuple[str | None, str], list[float | None]] = {}
    for index, key, rubric, total, headlines in session.execute(statement):
        mean = float(total) / int(headlines) if headlines else None
        trend.setdefault((model_of(key), rubric), [None] * len(weeks))[index] = mean
    return trend
