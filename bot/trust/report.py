"""How far to trust the judge in a channel: people's labels of its judgments, per rubric, against the judge in use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import col, select

from bot.config import Settings
from bot.digest.week import Period
from bot.records import RowState
from bot.rubric import Rubric
from bot.store import Judgment, Store
from bot.store.labels import PassCount, counted_passes, labeled_verdicts
from bot.trust.calibration import Agreement, Calibration, LabeledVerdict, calibrate, most_first
from bot.trust.labels import numeric_paths, tag_order

WEEKS_BEFORE = 4  # the digest sets a week's labels against the labels of this many weeks before it together
HASH_SHOWN = 7  # characters of a rubric's hash shown to tell two texts of it apart


@dataclass(frozen=True)
class TrustBar:
    """When the figures earn a warning: agreement below `min_agreement` over at least `min_labels` labels."""

    min_agreement: float = 0.75
    min_labels: int = 20

    @classmethod
    def from_settings(cls, settings: Settings) -> TrustBar:
        """The bar the settings CALIBRATION_MIN_AGREEMENT and CALIBRATION_MIN_LABELS set."""
        return cls(settings.calibration_min_agreement, settings.calibration_min_labels)


@dataclass(frozen=True)
class JudgeInUse:
    """What judges a rubric in a channel now: the judge model and rubric text of its newest scored judgment."""

    judge_model: str
    rubric_hash: str
    rubric_version: str


@dataclass(frozen=True)
class GivenOn:
    """How many of `n` labels were given on each judge model and on each text of the rubric, most first."""

    n: int
    judge_models: dict[str, int]
    rubric_hashes: dict[str, int]

    @classmethod
    def of(cls, figures: Calibration) -> GivenOn:
        """The counts a calibration holds."""
        return cls(figures.n, figures.judge_models, figures.rubric_hashes)

    @classmethod
    def counted(cls, counts: list[PassCount]) -> GivenOn:
        """The counts of labels counted in groups."""
        return cls(sum(group.count for group in counts), most_first((group.judge_model, group.count) for group in counts),
                   most_first((group.rubric_hash, group.count) for group in counts))


@dataclass
class RubricTrust:
    """One rubric's labels in a channel over a period: the figures, the judge in use, and what to doubt."""

    rubric_name: str
    figures: Calibration
    now: JudgeInUse | None
    doubts: list[str]


@dataclass
class WeekTrust:
    """One rubric's labels of a digest's week against the weeks before it, and what to doubt."""

    rubric_name: str
    week: Agreement
    before: Agreement
    now: JudgeInUse | None
    given_on: GivenOn  # the labels of the week and the weeks before it together
    doubts: list[str]


def axes(rubric: Rubric | None, labels: list[LabeledVerdict]) -> tuple[list[str], list[str]]:
    """The tag classes (in the rubric's order) and numeric criteria a rubric's labels are compared on.

    A rubric no longer loaded is compared on the tags its labels hold, and on no criteria.
    """
    if rubric is None:
        seen = {tag for label in labels for tag in (label.judge_tag, label.human_tag) if tag is not None}
        return sorted(seen), []
    return tag_order(rubric), numeric_paths(rubric)


def judge_in_use(store: Store, *, rubric_name: str, channel_id: str | None, team_id: str | None,
                 until: datetime | None = None) -> JudgeInUse | None:
    """The judge of the rubric's newest scored judgment in the channel (before `until`), or None if it has none."""
    where = [col(Judgment.status) == RowState.SCORED, col(Judgment.rubric_name) == rubric_name,
             col(Judgment.channel_id).is_(None) if channel_id is None else col(Judgment.channel_id) == channel_id]
    if team_id is not None:
        where.append(col(Judgment.team_id) == team_id)
    if until is not None:
        where.append(col(Judgment.judged_at) < until)
    statement = (select(col(Judgment.judge_model), col(Judgment.rubric_hash), col(Judgment.rubric_version))
                 .where(*where).order_by(col(Judgment.judged_at).desc(), col(Judgment.id).desc()).limit(1))
    with store.session() as session:
        found = session.execute(statement).first()
    return JudgeInUse(*found) if found else None


def doubts(figures: Agreement, now: JudgeInUse | None, bar: TrustBar, given_on: GivenOn) -> list[str]:
    """Plain-text warnings: agreement under the bar, and a judge that is not the one most labels (`given_on`) were
    given on."""
    found = []
    if figures.agreement is not None and figures.pass_n >= bar.min_labels and figures.agreement < bar.min_agreement:
        found.append(f"The judge agrees with people on pass/fail in {figures.agreement:.0%} of {figures.pass_n} "
                     f"labels, below the {bar.min_agreement:.0%} expected: read its verdicts with care, and look at "
                     "where people disagree with it.")
    if now is None or not given_on.n:
        return found
    model, model_n = next(iter(given_on.judge_models.items()))
    if model != now.judge_model:
        found.append(f"Most labels ({model_n} of {given_on.n}) were given on judge model {model}; the judge now is "
                     f"{now.judge_model}: these figures may not hold for it.")
    text, text_n = next(iter(given_on.rubric_hashes.items()))
    if text != now.rubric_hash:
        found.append(f"Most labels ({text_n} of {given_on.n}) were given on another text of the rubric "
                     f"({text[:HASH_SHOWN]}); it is now version {now.rubric_version} ({now.rubric_hash[:HASH_SHOWN]}): "
                     "these figures may not hold for it.")
    return found


def rubric_trust(store: Store, *, rubric_name: str, rubric: Rubric | None, channel_id: str | None,
                 team_id: str | None, since: datetime | None, bar: TrustBar) -> RubricTrust:
    """The calibration of one rubric's labels in a channel since `since` (None: all time), with its doubts."""
    numeric = numeric_paths(rubric) if rubric is not None else []
    labels = labeled_verdicts(store, rubric_name=rubric_name, channel_id=channel_id, team_id=team_id, since=since,
                              numeric=numeric)
    tags, criteria = axes(rubric, labels)
    figures = calibrate(labels, tags=tags, criteria=criteria)
    now = judge_in_use(store, rubric_name=rubric_name, channel_id=channel_id, team_id=team_id)
    return RubricTrust(rubric_name, figures, now, doubts(figures, now, bar, GivenOn.of(figures)))


def week_trust(store: Store, *, channel_id: str | None, team_id: str | None, period: Period,
               bar: TrustBar) -> list[WeekTrust]:
    """Per rubric with labels in the period or the weeks before it: the week's pass/fail agreement against theirs.

    The labels are counted in the database: a week of thousands of votes costs what a few dozen groups cost.
    """
    start, end = period.utc
    earliest = period.weeks(WEEKS_BEFORE + 1)[0].utc[0]
    by_rubric: dict[str, list[PassCount]] = {}
    for group in counted_passes(store, channel_id=channel_id, team_id=team_id, since=earliest, until=end, cut=start):
        by_rubric.setdefault(group.rubric_name, []).append(group)
    found = []
    for name, counts in sorted(by_rubric.items()):
        week = _agreement([group for group in counts if group.recent])
        before = _agreement([group for group in counts if not group.recent])
        now = judge_in_use(store, rubric_name=name, channel_id=channel_id, team_id=team_id, until=end)
        given_on = GivenOn.counted(counts)
        found.append(WeekTrust(name, week, before, now, given_on, doubts(week, now, bar, given_on)))
    return found


def _agreement(counts: list[PassCount]) -> Agreement:
    passes: Counter[tuple[bool, bool]] = Counter()
    for group in counts:
        if group.judge_passed is not None and group.human_passed is not None:
            passes[group.judge_passed, group.human_passed] += group.count
    return Agreement.counted(sum(group.count for group in counts), passes)
