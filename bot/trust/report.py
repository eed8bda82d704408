"""How far to trust the judge: people's labels of its judgments against the judge in use, and what to doubt, one
report for the terminal, Slack and the digest alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.store import PassGroup, Store, counted_passes, newest_judge
from bot.trust.calibration import Agreement, Calibration, Verdict, calibrate, most_first
from bot.trust.cases import verdict_rows
from bot.trust.labels import numeric_paths, ordinal_scales, tag_order
from bot.trust.people_agreement import agreement_of
from bot.trust.people_agreement import people_agreement as people_agreement  # where the stats' faces read it
from bot.trust.review_queue import random_share

if TYPE_CHECKING:  # a rubric comes with its package loaded: the stats' agreement with people loads none
    from bot.rubric import Rubric

WEEKS_BEFORE = 4  # the digest sets a week's labels against the labels of this many weeks before it together
HASH_SHOWN = 7  # characters of a rubric's hash shown to tell two texts of it apart


@dataclass(frozen=True)
class TrustBar:
    """When the figures earn a warning: agreement below `min_agreement` over at least `min_labels` distinct labeled
    cases (a second person's label of a case is not another case)."""

    min_agreement: float = 0.75
    min_labels: int = 20

    @classmethod
    def from_settings(cls, settings: Settings) -> TrustBar:
        """The bar the settings CALIBRATION_MIN_AGREEMENT and CALIBRATION_MIN_LABELS set."""
        return cls(settings.calibration_min_agreement, settings.calibration_min_labels)


@dataclass(frozen=True)
class JudgeInUse:
    """What judges a rubric now: in a channel, the judge model and rubric text of its newest scored judgment; in a
    terminal, the judge or jury the settings name and the rubric file loaded."""

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
    def counted(cls, counts: list[PassGroup]) -> GivenOn:
        """The counts of labels counted in groups."""
        return cls(sum(group.count for group in counts), most_first((group.judge_model, group.count) for group in counts),
                   most_first((group.rubric_hash, group.count) for group in counts))


@dataclass(frozen=True)
class LowAgreement:
    """The judge agrees with people on pass/fail in `agreement` of `cases` labeled cases, under the bar's `minimum`."""

    agreement: float
    cases: int
    minimum: float

    def __str__(self) -> str:
        return (f"The judge agrees with people on pass/fail in {self.agreement:.0%} of {self.cases} labeled cases, below "
                f"the {self.minimum:.0%} expected: read its verdicts with care, and look at where people disagree with "
                "it.")


@dataclass(frozen=True)
class OtherJudge:
    """Most labels (`labels` of `n`) were given on verdicts of another judge than the one in use."""

    given_on: str
    labels: int
    n: int
    now: str

    def __str__(self) -> str:
        return (f"Most labels ({self.labels} of {self.n}) were given on judge model {self.given_on}; the judge now is "
                f"{self.now}: these figures may not hold for it.")


@dataclass(frozen=True)
class OtherRubricText:
    """Most labels (`labels` of `n`) were given under another text of the rubric than the one in use."""

    given_on: str  # the rubric's hash
    labels: int
    n: int
    now: JudgeInUse

    def __str__(self) -> str:
        return (f"Most labels ({self.labels} of {self.n}) were given on another text of the rubric "
                f"({self.given_on[:HASH_SHOWN]}); it is now version {self.now.rubric_version} "
                f"({self.now.rubric_hash[:HASH_SHOWN]}): these figures may not hold for it.")


Doubt = LowAgreement | OtherJudge | OtherRubricText  # str() is the sentence Slack and the digest show


def doubts(figures: Agreement, now: JudgeInUse | None, bar: TrustBar, given_on: GivenOn) -> list[Doubt]:
    """Why the figures may not say much of the judge in use: agreement under the bar (over enough labeled cases), and
    a judge or a rubric text that is not the one most labels (`given_on`) were given on."""
    found: list[Doubt] = []
    if (figures.agreement is not None and figures.pass_cases >= bar.min_labels
            and figures.agreement < bar.min_agreement):
        found.append(LowAgreement(figures.agreement, figures.pass_cases, bar.min_agreement))
    if now is None or not given_on.n:
        return found
    model, model_n = next(iter(given_on.judge_models.items()))
    if model != now.judge_model:
        found.append(OtherJudge(model, model_n, given_on.n, now.judge_model))
    text, text_n = next(iter(given_on.rubric_hashes.items()))
    if text != now.rubric_hash:
        found.append(OtherRubricText(text, text_n, given_on.n, now))
    return found


@dataclass
class RubricTrust:
    """One rubric's labels over a period: the figures, the judge in use, and what to doubt."""

    rubric_name: str
    figures: Calibration
    now: JudgeInUse | None
    doubts: list[Doubt]
    random: Agreement | None = None  # the labels of cases picked at random for review


@dataclass
class WeekTrust:
    """One rubric's labels of a week against the weeks before it, and what to doubt."""

    rubric_name: str
    week: Agreement
    before: Agreement
    now: JudgeInUse | None
    given_on: GivenOn  # the labels of the week and the weeks before it together
    doubts: list[Doubt]


def axes(rubric: Rubric | None, labels: Sequence[Verdict]) -> tuple[list[str], list[str]]:
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
    found = newest_judge(store, rubric_name=rubric_name, channel_id=channel_id, team_id=team_id, until=until)
    return None if found is None else JudgeInUse(*found)


def rubric_trust(store: Store, *, rubric_name: str, rubric: Rubric | None, channel_id: str | None,
                 team_id: str | None, since: datetime | None, bar: TrustBar, judge_model: str | None = None,
                 everywhere: bool = False, now: JudgeInUse | None = None) -> RubricTrust:
    """The calibration of one rubric's labels since `since` (None: all time), with its doubts.

    The labels are those of the channel (None: the terminal's), or of every channel and the terminal with
    `everywhere`, on verdicts of `judge_model` when given. They are held against `now`, by default the judge of the
    channel's newest judgment of the rubric.
    """
    numeric = numeric_paths(rubric) if rubric is not None else []
    labels = verdict_rows(store, rubric_name=rubric_name, judge_model=judge_model, channel_id=channel_id,
                          team_id=team_id, since=since, numeric=numeric, everywhere=everywhere)
    tags, criteria = axes(rubric, labels)
    figures = calibrate(labels, tags=tags, criteria=criteria, scales=ordinal_scales(rubric) if rubric else None)
    if now is None:
        now = judge_in_use(store, rubric_name=rubric_name, channel_id=channel_id, team_id=team_id)
    share = random_share(store, rubric_name=rubric_name, channel_id=channel_id, team_id=team_id, since=since,
                         everywhere=everywhere, judge_model=judge_model)
    return RubricTrust(rubric_name, figures, now, doubts(figures, now, bar, GivenOn.of(figures)),
                       share if share.pass_n else None)


def weekly_trust(store: Store, *, channel_id: str | None, team_id: str | None, since: datetime, cut: datetime,
                 until: datetime, bar: TrustBar) -> list[WeekTrust]:
    """Per rubric with labels in [since, until): the pass/fail agreement of those given from `cut` on (the week)
    against those given before it (the weeks before).

    The labels are counted in the database, per case: a case many people voted on alike costs one group.
    """
    by_rubric: dict[str, list[PassGroup]] = {}
    for group in counted_passes(store, channel_id=channel_id, team_id=team_id, since=since, until=until, cut=cut):
        by_rubric.setdefault(group.rubric_name, []).append(group)
    found = []
    for name, counts in sorted(by_rubric.items()):
        week = agreement_of([group for group in counts if group.recent])
        before = agreement_of([group for group in counts if not group.recent])
        now = judge_in_use(store, rubric_name=name, channel_id=channel_id, team_id=team_id, until=until)
        given_on = GivenOn.counted(counts)
        found.append(WeekTrust(name, week, before, now, given_on, doubts(week, now, bar, given_on)))
    return found




