"""A channel's digest figures: each model's week against the week before, regressions, lowest scores, judge changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.digest.week import Period
from bot.records import checks_of
from bot.store import (
    ANY_TEAM,
    Figures,
    QueueState,
    Spend,
    Store,
    channel_stats,
    first_judged,
    judge_choices,
    judged_pairs,
    judges_used,
    lowest_scored,
    pair_labels,
    queue_state,
    revision_by_hash,
    rubric_texts_used,
    sampled_in_channel,
    score_drops,
    spend,
    weekly_means,
)
from bot.trust.pairwise import JudgedPair, Matchup, matchups, pairs_of, people_winner
from bot.trust.panel_agreement import JudgesAlpha, alphas_by_rubric
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
        """Share of the cases whose verdict was a judge's failure (an error, or a reply that broke the rubric's
        rules)."""
        return self.now.errors / self.now.cases if self.now.cases else None


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
    queue: QueueState | None = None  # the channel's review queue, with the cases labeled in the period
    alphas: list[tuple[str, JudgesAlpha, bool]] = field(default_factory=list)  # judges among themselves, by rubric
    warnings: list[str] = field(default_factory=list)  # the judge's coming shutdown, said by whoever shows it
    judge_marks: list[tuple[int, str]] = field(default_factory=list)  # (charted week, "judge: gpt-5.4-mini")
    pairwise: list[Matchup] = field(default_factory=list)  # win rates of the pairwise runs of the period

    @property
    def quiet(self) -> bool:
        """Nothing was judged in the channel during the period (neither answers nor pairs of answers)."""
        return not self.lines and not self.pairwise

    @property
    def cases(self) -> int:
        """Cases evaluated in the period, each once."""
        return sum(line.now.cases for line in self.lines)

    @property
    def rejudged(self) -> int:
        """Judgments of those cases that a later one replaced in the period (re-reads, re-runs): not counted."""
        return sum(line.now.rejudged for line in self.lines)

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
    pairwise = matchups(pairs_judged(store, channel_key=checks_of(channel_id), since=start, until=end))
    if not now:
        return Digest(channel_id, period, [], pairwise=pairwise)
    before = {(f.model_name, f.rubric_name): f for f in  # last week's people are not shown: not read
              channel_stats(store, channel_id=channel_id, since=previous.utc[0], until=start, said=False)}
    lines = [Line(figures, before.get((figures.model_name, figures.rubric_name))) for figures in now]
    charted = period.weeks(weeks)
    trust = week_trust(store, channel_id=channel_id, team_id=team_id, period=period, bar=bar or TrustBar())
    spent = spend(store, channel_id=channel_id, since=start, until=end)
    queue = queue_state(store, team_id=team_id if team_id is not None or channel_id is None else ANY_TEAM,
                        channel_id=channel_id, since=start, until=end)
    return Digest(
        channel_id, period, lines,
        regressions=[Regression(_example(row), before, after) for row, before, after in score_drops(
            store, channel_id=channel_id, since=previous.utc[0], cut=start, until=end, points=REGRESSION_POINTS,
            limit=REGRESSIONS_SHOWN)],
        worst=[_example(row) for row in lowest_scored(store, channel_id=channel_id, since=start, until=end,
                                                      limit=WORST_SHOWN)],
        changes=_changes(store, channel_id, period),
        weeks=charted,
        trend=weekly_means(store, channel_id=channel_id, weeks=[week.utc for week in charted]),
        trust=trust,
        judge_marks=judge_marks(store, channel_id, charted),
        spend=spent,
        queue=queue if queue.open or queue.labeled else None,
        alphas=alphas_by_rubric(sampled_in_channel(store, channel_id=channel_id, since=start, until=end)),
        pairwise=pairwise,
    )


def pairs_judged(store: Store, *, channel_key: str, since: datetime, until: datetime) -> list[JudgedPair]:
    """The pairs of the pairwise runs of a period, each with what people said of it."""
    rows = judged_pairs(store, channel_key=channel_key, since=since, until=until)
    said = pair_labels(store, (row.case_key for row in rows))
    return pairs_of(rows, {key: winner for key, winners in said.items() if (winner := people_winner(winners))})


def judge_marks(store: Store, channel_id: str | None, weeks: list[Period]) -> list[tuple[int, str]]:
    """The charted weeks in which the channel chose another judge, each with the judge it chose last that week."""
    if not weeks:
        return []
    marks: dict[int, str] = {}
    for choice in judge_choices(store, channel_id=channel_id, since=weeks[0].utc[0], until=weeks[-1].utc[1]):
        index = next(i for i, week in enumerate(weeks) if week.utc[0] <= choice.set_at < week.utc[1])
        marks[index] = f"judge: {choice.judge_model}" if choice.judge_model else "judge: back to the bot's"
    return sorted(marks.items())


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


def _changes(store: Store, channel_id: str | None, period: Period) -> list[JudgeChange]:
    """What of the judge changed during the period, against what judged last before it (in the week before)."""
    start, end = period.utc
    week_before = period.previous().utc[0]
    found: list[JudgeChange] = []
    by_rubric: dict[str, list[tuple[datetime, str]]] = {}
    for at, rubric, version, digest in rubric_texts_used(store, channel_id=channel_id, since=week_before, until=end, cut=start):
        by_rubric.setdefault(rubric, []).append((at, f"{version}:{digest}"))
    for rubric, used in sorted(by_rubric.items()):
        names = _version_names(sorted({key for _, key in used}))
        for before, after, since in _switches(used, start):
            version, digest = after.rsplit(":", 1)
            exact = first_judged(store, channel_id=channel_id, hour=since, rubric_name=rubric, rubric_version=version,
                                 rubric_hash=digest)
            found.append(JudgeChange(f"rubric {rubric}", names[before], names[after] + _revision_note(
                store, channel_id, digest), exact))
    judges = judges_used(store, channel_id=channel_id, since=week_before, until=end, cut=start)
    for before, after, since in _switches(judges, start):
        found.append(JudgeChange("judge model", before, after,
                                 first_judged(store, channel_id=channel_id, hour=since, judge_model=after)))
    return found


def _revision_note(store: Store, channel_id: str | None, content_hash: str) -> str:
    """", this channel's aligned revision, kept 27 Nov" when a rubric text is the channel's revision of its rubric."""
    revision = revision_by_hash(store, content_hash)
    if revision is None or revision.channel_id != channel_id or revision.decided_at is None:
        return ""
    return f", this channel's aligned revision, kept {revision.decided_at.day} {revision.decided_at:%b}"


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
