"""A channel's weekly digest: the week, and its figures against the week before, computed by the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import case, func
from sqlmodel import select

from bot.history import Figures, channel_stats, in_channel
from bot.models import Judgment
from bot.store import Store

WEEK = timedelta(days=7)
WEEKS_CHARTED = 8
WORST_SHOWN = 5
REGRESSIONS_SHOWN = 5
REGRESSION_POINTS = 10.0  # headline points a question must lose from one week to the next to count


class WeekError(ValueError):
    """A week written wrongly; the message shows how to write it."""


def iso_week(day: date) -> str:
    """The ISO week a day belongs to, such as 2026-W47."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def local_midnight(moment: datetime) -> datetime:
    """The start of the local day of an aware `moment`."""
    return datetime.combine(moment.date(), time(), moment.tzinfo)


@dataclass(frozen=True)
class Period:
    """Seven days of local time, [start, end); a week across a DST change is 167 or 169 hours long."""

    start: datetime
    end: datetime

    @classmethod
    def ending(cls, end: datetime) -> Period:
        """The seven days before an aware `end` (wall-clock days, as people in that timezone count them)."""
        start = (end.replace(tzinfo=None) - WEEK).replace(tzinfo=end.tzinfo)
        return cls(start, end)

    @classmethod
    def before_day_of(cls, moment: datetime) -> Period:
        """The seven days before the local day of `moment`: for a digest posted on Monday, last Monday to Sunday."""
        return cls.ending(local_midnight(moment))

    @classmethod
    def of_week(cls, text: str, zone: ZoneInfo) -> Period:
        """The ISO week `text` (such as 2026-W47), Monday to Sunday in `zone`."""
        try:
            year, week = text.strip().upper().split("-W")
            monday = date.fromisocalendar(int(year), int(week), 1)
        except ValueError:
            raise WeekError(f"`{text}` is not an ISO week: write it like 2026-W47.") from None
        start = datetime.combine(monday, time(), zone)
        return cls(start, datetime.combine(monday + WEEK, time(), zone))

    @property
    def last_day(self) -> date:
        """The last local day the period covers."""
        return (self.end - timedelta(microseconds=1)).date()

    @property
    def week(self) -> str:
        """The ISO week of the last day: the week the period's figures are of, on a Monday-to-Sunday period."""
        return iso_week(self.last_day)

    @property
    def posting_week(self) -> str:
        """The ISO week of the end: a scheduled digest is posted on that day, and a channel gets one per ISO week.

        Keyed so, a digest moved to another day still posts in the next week (Tuesday to Monday), and is not
        posted twice in a week it was posted in already (Monday to Friday).
        """
        return iso_week(self.end.date())

    @property
    def label(self) -> str:
        """Such as "16–22 Nov 2026"."""
        first, last = self.start.date(), self.last_day
        if (first.year, first.month) == (last.year, last.month):
            return f"{first.day}–{last.day} {last:%b %Y}"
        if first.year == last.year:
            return f"{first.day} {first:%b}–{last.day} {last:%b %Y}"
        return f"{first.day} {first:%b %Y}–{last.day} {last:%b %Y}"

    @property
    def utc(self) -> tuple[datetime, datetime]:
        """(start, end) as the naive UTC the history stores."""
        return _naive_utc(self.start), _naive_utc(self.end)

    def previous(self) -> Period:
        """The seven days before this one."""
        return Period.ending(self.start)

    def weeks(self, count: int) -> list[Period]:
        """`count` periods of seven days ending with this one, oldest first."""
        periods = [self]
        while len(periods) < count:
            periods.insert(0, periods[0].previous())
        return periods


def signed(change: float | None, unit: str = "") -> str:
    """A change as ▲ 5.3, ▼ 2.0 or = 0; empty when there is nothing to compare with."""
    if change is None:
        return ""
    if round(change, 1) == 0:
        return f"= 0{unit}"
    return f"{'▲' if change > 0 else '▼'} {abs(change):.1f}{unit}"


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


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

    @property
    def quiet(self) -> bool:
        """Nothing was judged in the channel during the period."""
        return not self.lines

    @property
    def judged(self) -> int:
        return sum(line.now.judged for line in self.lines)

    @property
    def errors(self) -> int:
        return sum(line.now.errors for line in self.lines)

    def series(self) -> dict[str, list[float | None]]:
        """The trend chart's lines: "model · rubric", or the model alone when the channel used one rubric."""
        rubrics = {rubric for _, rubric in self.trend}
        return {(model or "model not named") + ("" if len(rubrics) == 1 else f" · {rubric}"): values
                for (model, rubric), values in self.trend.items()}


def build_digest(store: Store, channel_id: str | None, period: Period, *, weeks: int = WEEKS_CHARTED) -> Digest:
    """The digest of one channel (None: the terminal's judgments) over `period`, from that channel's rows only."""
    start, end = period.utc
    previous = period.previous()
    now = channel_stats(store, channel_id, since=start, until=end)
    if not now:
        return Digest(channel_id, period, [])
    before = {(f.model_name, f.rubric_name): f for f in
              channel_stats(store, channel_id, since=previous.utc[0], until=start)}
    lines = [Line(figures, before.get((figures.model_name, figures.rubric_name))) for figures in now]
    charted = period.weeks(weeks)
    with store.session() as session:
        return Digest(
            channel_id, period, lines,
            regressions=_regressions(session, channel_id, period),
            worst=_worst(session, channel_id, period),
            changes=_changes(session, channel_id, period),
            weeks=charted,
            trend=_trend(session, channel_id, charted),
        )


def _example(row: Any) -> Example:
    return Example(row.id, row.model_name, row.rubric_name, float(row.headline), row.question, row.channel_id,
                   row.message_ts, row.thread_ts, row.row_number)


EXAMPLE_COLUMNS = (Judgment.id, Judgment.model_name, Judgment.rubric_name, Judgment.headline, Judgment.question,
                   Judgment.channel_id, Judgment.message_ts, Judgment.thread_ts, Judgment.row_number)


def _worst(session: Any, channel_id: str | None, period: Period) -> list[Example]:
    statement = (select(*EXAMPLE_COLUMNS)
                 .where(*in_channel(channel_id, *period.utc), Judgment.status == "scored")
                 .order_by(Judgment.headline, Judgment.id.desc()).limit(WORST_SHOWN))
    return [_example(row) for row in session.execute(statement)]


def _question_means(channel_id: str | None, period: Period) -> Any:
    """Per model, rubric and question: the mean headline over `period`, and its lowest judgment."""
    model = func.coalesce(Judgment.model_name, "")
    return (select(model.label("model"), Judgment.rubric_name.label("rubric"), Judgment.question.label("question"),
                   func.avg(Judgment.headline).label("mean"), func.min(Judgment.headline).label("lowest"))
            .where(*in_channel(channel_id, *period.utc), Judgment.status == "scored")
            .group_by(model, Judgment.rubric_name, Judgment.question).subquery())


def _regressions(session: Any, channel_id: str | None, period: Period) -> list[Regression]:
    now, before = _question_means(channel_id, period), _question_means(channel_id, period.previous())
    drop = before.c.mean - now.c.mean
    pairs = (select(now.c.model, now.c.rubric, now.c.question, before.c.mean, now.c.mean)
             .join(before, (now.c.model == before.c.model) & (now.c.rubric == before.c.rubric)
                   & (now.c.question == before.c.question))
             .where(drop >= REGRESSION_POINTS).order_by(drop.desc()).limit(REGRESSIONS_SHOWN))
    found = []
    for model, rubric, question, mean_before, mean_now in session.execute(pairs).all():
        lowest = session.execute(
            select(*EXAMPLE_COLUMNS)
            .where(*in_channel(channel_id, *period.utc), Judgment.status == "scored",
                   func.coalesce(Judgment.model_name, "") == model, Judgment.rubric_name == rubric,
                   Judgment.question == question)
            .order_by(Judgment.headline, Judgment.id.desc()).limit(1)).first()
        found.append(Regression(_example(lowest), float(mean_before), float(mean_now)))
    return found


def _changes(session: Any, channel_id: str | None, period: Period) -> list[JudgeChange]:
    """What of the judge changed during the period, against what judged last (in the week before it)."""
    start, end = period.utc
    scope = in_channel(channel_id, period.previous().utc[0], end)
    found: list[JudgeChange] = []
    versions = (select(Judgment.rubric_name, Judgment.rubric_version, Judgment.rubric_hash,
                       func.min(Judgment.created_at), func.max(Judgment.created_at))
                .where(*scope).group_by(Judgment.rubric_name, Judgment.rubric_version, Judgment.rubric_hash))
    by_rubric: dict[str, list[tuple[str, datetime, datetime]]] = {}
    for rubric, version, digest, first, last in session.execute(versions):
        by_rubric.setdefault(rubric, []).append((f"{version}:{digest}", first, last))
    for rubric, used in sorted(by_rubric.items()):
        names = _version_names([key for key, _, _ in used])
        found += [JudgeChange(f"rubric {rubric}", names[a], names[b], since)
                  for a, b, since in _switches(used, start)]
    judges = (select(Judgment.judge_model, func.min(Judgment.created_at), func.max(Judgment.created_at))
              .where(*scope).group_by(Judgment.judge_model))
    found += [JudgeChange("judge model", a, b, since) for a, b, since in _switches(list(session.execute(judges)), start)]
    return found


def _version_names(keys: list[str]) -> dict[str, str]:
    """"version 2", or with the text's hash when one version was used with different texts."""
    versions = [key.split(":", 1)[0] for key in keys]
    return {key: f"version {version}" + (f" ({key.split(':', 1)[1][:7]})" if versions.count(version) > 1 else "")
            for key, version in zip(keys, versions)}


def _switches(used: list[Any], start: datetime) -> list[tuple[str, str, datetime]]:
    """(before, after, since) for each switch to something first used after `start`, from what was used just before."""
    used = sorted(used, key=lambda item: item[1])
    earlier = [item for item in used if item[1] < start]
    current = max(earlier, key=lambda item: item[2])[0] if earlier else None
    switches = []
    for key, first, _ in used:
        if first >= start and current is not None and key != current:
            switches.append((current, key, first))
        if first >= start:
            current = key
    return switches


def _trend(session: Any, channel_id: str | None, weeks: list[Period]) -> dict[tuple[str | None, str], list[float | None]]:
    """Mean headline per model and rubric in each of `weeks`, in one pass over the rows."""
    bucket = case(*[(Judgment.created_at < week.utc[1], index) for index, week in enumerate(weeks)])
    statement = (select(bucket, Judgment.model_name, Judgment.rubric_name, func.avg(Judgment.headline))
                 .where(*in_channel(channel_id, weeks[0].utc[0], weeks[-1].utc[1]), Judgment.status == "scored")
                 .group_by(bucket, Judgment.model_name, Judgment.rubric_name))
    trend: dict[tuple[str | None, str], list[float | None]] = {}
    for index, model, rubric, mean in session.execute(statement):
        trend.setdefault((model, rubric), [None] * len(weeks))[index] = None if mean is None else float(mean)
    return trend
