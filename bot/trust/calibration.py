"""How far the judge agrees with people: agreement, pass rates, kappa, a confusion matrix and score gaps, from labeled
verdicts, with intervals that count a case labeled by several people once."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel

from bot.figures import iso_week
from bot.trust import bootstrap
from bot.trust.confusion import Confusion
from bot.trust.kappa import Z95, Kappa, agreement_weights, counted_kappa, kappa_interval
from bot.trust.mcnemar import clustered_mcnemar_p, mcnemar_p

__all__ = ["Agreement", "Calibration", "Confusion", "Gap", "Kappa", "LabeledVerdict", "calibrate", "cohen_kappa",
           "counted_kappa", "kappa_interval", "mean_abs_diff", "most_first", "wilson"]

Class = TypeVar("Class", bound=Hashable)  # what a rater's answers are: pass/fail, or a tag
PASS_CLASSES = (True, False)
PASS_NAMES = {True: "pass", False: "fail"}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `successes` out of `n` (95 % by default), or None when n == 0."""
    if n == 0:
        return None
    p = successes / n
    spread = z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / n + spread / (4 * n)) / (1 + spread)
    # At 0 or n the bound is exactly 0 or 1; rounding would leave it a hair off.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of (judge, human) pairs over the classes either used; may be negative; None where undefined
    (`counted_kappa`)."""
    return counted_kappa(Counter(pairs))


def mean_abs_diff(pairs: Sequence[tuple[float, float]]) -> float | None:
    """The mean absolute difference of (judge, human) values, or None when there are none."""
    if not pairs:
        return None
    return sum(abs(first - second) for first, second in pairs) / len(pairs)


def by_case(items: Iterable[tuple[str | None, Class, Class, int]]) -> list[Mapping[tuple[Class, Class], int]] | None:
    """The (judge, human) pairs of each case, from (case, judge, human, how many) items, cases in the order of their
    keys (an item without a case is that many cases of their own); None when no case holds several labels, as when
    each case was labeled by one person, so that nothing is built per label then."""
    given = list(items)
    keyed: Counter[str] = Counter()
    for case, _, _, count in given:
        if case is not None:
            keyed[case] += count
    if all(total < 2 for total in keyed.values()):
        return None
    cases: dict[str, Counter[tuple[Class, Class]]] = {}
    alone: list[Mapping[tuple[Class, Class], int]] = []
    for case, judge, human, count in given:
        if case is None:
            alone += [{(judge, human): 1}] * count  # one mapping, read only, for each of them
        else:
            cases.setdefault(case, Counter())[judge, human] += count
    return [*(cases[key] for key in sorted(cases)), *alone]


def clustered(cases: Sequence[Mapping[tuple[Class, Class], int]]) -> bool:
    """Whether some case holds several labels (several people labeled it)."""
    return any(sum(counts.values()) > 1 for counts in cases)


def case_tables(cases: Sequence[Mapping[tuple[Class, Class], int]], classes: Sequence[Class]) -> list[list[list[int]]]:
    """Each case's pairs as a table of counts, judge's class in rows and the person's in columns, in `classes` order."""
    return [[[counts.get((judge, human), 0) for human in classes] for judge in classes] for counts in cases]


def _classes(counts: Mapping[tuple[Class, Class], int], order: Sequence[Class]) -> list[Class]:
    seen = {label for pair in counts for label in pair}
    return [*order, *sorted(seen - set(order), key=str)]


def kappa_of(items: Sequence[tuple[str | None, Class, Class]], *, order: Sequence[Class] = (),
             scale: Sequence[Class] | None = None, names: Mapping[Class, str] | None = None) -> Kappa:
    """The kappa of (case, judge, human) items, weighted over `scale` when given; its interval a bootstrap over cases
    where some case holds several labels, else analytic."""
    counts = Counter((judge, human) for _, judge, human in items)
    cases = by_case((case, judge, human, 1) for case, judge, human in items)
    boot = None
    if cases is not None and clustered(cases):
        classes = list(scale) if scale else _classes(counts, order)
        weights = agreement_weights([float(value) for value in scale]) if scale else None  # type: ignore[arg-type]
        tables = bootstrap.resampled_tables(case_tables(cases, classes))
        boot = (bootstrap.kappa_interval(tables, weights), len(cases))
    return Kappa.of(counts, scale=scale, bootstrap=boot, names=names)


class LabeledVerdict(BaseModel):
    """What calibration needs of one labeled verdict: the judge's side, the person's side, the case, and when and by
    what.

    A side's missing value (None, or a path absent from its values) leaves that label out of that figure only. Labels
    of the same `case` (several people's) are resampled together; a label without one is a case of its own.
    """

    judge_passed: bool | None = None
    judge_tag: str | None = None
    judge_values: dict[str, float] = {}
    human_passed: bool | None = None
    human_tag: str | None = None
    human_values: dict[str, float] = {}
    labeled_at: datetime
    judge_model: str
    rubric_hash: str
    case: str | None = None


class Agreement(BaseModel):
    """How far the judge and people agree on pass/fail: over `n` labels, the `pass_n` with pass/fail on both sides,
    of which `pass_agree` alike; how often each side passes, and McNemar's p of their difference; kappa.

    Where several people labeled some case, the intervals are a bootstrap over `cases` cases and McNemar's test is
    clustered by case; otherwise `cases` is None, agreement's interval is Wilson's and kappa's analytic.
    """

    n: int
    pass_n: int
    pass_agree: int
    agreement: float | None
    interval: tuple[float, float] | None
    cases: int | None = None
    judge_passes: int = 0
    human_passes: int = 0
    mcnemar_p: float | None = None
    kappa_pass: Kappa = Kappa()

    @property
    def judge_pass_rate(self) -> float | None:
        """The share of the labels with pass/fail on both sides that the judge passed."""
        return self.judge_passes / self.pass_n if self.pass_n else None

    @property
    def human_pass_rate(self) -> float | None:
        """The share of the labels with pass/fail on both sides that people passed."""
        return self.human_passes / self.pass_n if self.pass_n else None

    @classmethod
    def counted(cls, n: int, passes: Mapping[tuple[bool, bool], int],
                cases: Sequence[Mapping[tuple[bool, bool], int]] | None = None) -> Agreement:
        """The figures of `n` labels, whose (judge, human) pass/fail pairs occur as often as `passes` counts, and
        fall into `cases` so (the pairs of each case; by default each pair a case of its own)."""
        pass_n = sum(passes.values())
        agreed = sum(count for (judge, human), count in passes.items() if judge == human)
        judge_only, human_only = passes.get((True, False), 0), passes.get((False, True), 0)
        figures = {"n": n, "pass_n": pass_n, "pass_agree": agreed, "agreement": agreed / pass_n if pass_n else None,
                   "judge_passes": passes.get((True, True), 0) + judge_only,
                   "human_passes": passes.get((True, True), 0) + human_only}
        if cases is None or not clustered(cases):
            return cls(**figures, interval=wilson(agreed, pass_n),
                       mcnemar_p=mcnemar_p(judge_only, human_only) if pass_n else None,
                       kappa_pass=Kappa.of(passes, names=PASS_NAMES))
        tables = bootstrap.resampled_tables(case_tables(cases, PASS_CLASSES))
        return cls(**figures, interval=bootstrap.agreement_interval(tables), cases=len(cases),
                   mcnemar_p=clustered_mcnemar_p([(case.get((True, False), 0), case.get((False, True), 0))
                                                  for case in cases]),
                   kappa_pass=Kappa.of(passes, names=PASS_NAMES,
                                       bootstrap=(bootstrap.kappa_interval(tables), len(cases))))


class Gap(BaseModel):
    """How the judge's scores on one numeric criterion differ from people's, over `n` labels: the mean absolute
    difference, the mean signed one (judge less person: above 0 the judge scores higher), and for an ordinal integer
    scale the linearly weighted kappa."""

    n: int
    mean_abs: float
    mean_signed: float
    kappa: Kappa | None = None


class Calibration(Agreement):
    """The calibration figures of a set of labels (see `calibrate`): pass/fail agreement, and the rest."""

    kappa_tag: Kappa = Kappa()
    confusion: Confusion | None
    gaps: dict[str, Gap]
    by_week: list[tuple[str, int, float | None]]
    judge_models: dict[str, int]
    rubric_hashes: dict[str, int]

    @property
    def tag_n(self) -> int:
        """Labels with a tag on both sides."""
        return self.kappa_tag.n


def calibrate(
    labels: Iterable[LabeledVerdict], *, tags: Sequence[str] = (), criteria: Sequence[str] = (),
    scales: Mapping[str, Sequence[int]] | None = None,
) -> Calibration:
    """The calibration figures of `labels`.

    `tags` is the rubric's tag order (empty: the rubric has no tag, and there is no tag kappa or matrix). `gaps` holds
    each of `criteria` that some label has on both sides, with a weighted kappa for those `scales` gives an ordinal
    integer scale (its values, lowest first). Weeks are the ISO weeks of `labeled_at` in its own time zone. Judge
    models and rubric hashes come most labels first.
    """
    given = list(labels)
    passes = _pass_items(given)
    tag_items = _tag_items(given) if tags else []
    return Calibration(
        **dict(Agreement.counted(len(given), Counter((judge, human) for _, judge, human in passes),
                                 by_case((case, judge, human, 1) for case, judge, human in passes))),
        kappa_tag=kappa_of(tag_items, order=tags) if tag_items else Kappa(),
        confusion=Confusion.build([(judge, human) for _, judge, human in tag_items], order=tags) if tag_items else None,
        gaps=_gaps(given, criteria, scales or {}),
        by_week=_by_week(given),
        judge_models=most_first((label.judge_model, 1) for label in given),
        rubric_hashes=most_first((label.rubric_hash, 1) for label in given),
    )


def _pass_items(labels: Sequence[LabeledVerdict]) -> list[tuple[str | None, bool, bool]]:
    return [(label.case, label.judge_passed, label.human_passed) for label in labels
            if label.judge_passed is not None and label.human_passed is not None]


def _tag_items(labels: Sequence[LabeledVerdict]) -> list[tuple[str | None, str, str]]:
    return [(label.case, label.judge_tag, label.human_tag) for label in labels
            if label.judge_tag is not None and label.human_tag is not None]


def _gaps(labels: Sequence[LabeledVerdict], criteria: Sequence[str],
          scales: Mapping[str, Sequence[int]]) -> dict[str, Gap]:
    figures: dict[str, Gap] = {}
    for path in criteria:
        items = [(label.case, label.judge_values[path], label.human_values[path]) for label in labels
                 if path in label.judge_values and path in label.human_values]
        if not items:
            continue
        pairs = [(judge, human) for _, judge, human in items]
        kappa = None
        if path in scales:
            scale = sorted({float(value) for value in scales[path]} | {value for pair in pairs for value in pair})
            kappa = kappa_of(items, scale=scale, names={value: f"{value:g}" for value in scale})
        figures[path] = Gap(n=len(pairs), mean_abs=mean_abs_diff(pairs) or 0.0,
                            mean_signed=sum(judge - human for judge, human in pairs) / len(pairs), kappa=kappa)
    return figures


def _by_week(labels: Sequence[LabeledVerdict]) -> list[tuple[str, int, float | None]]:
    weeks: dict[str, list[LabeledVerdict]] = {}
    for label in labels:
        weeks.setdefault(iso_week(label.labeled_at), []).append(label)
    rows: list[tuple[str, int, float | None]] = []
    for week in sorted(weeks):  # "YYYY-Www" sorts in time order
        passes = _pass_items(weeks[week])
        agreed = sum(judge == human for _, judge, human in passes)
        rows.append((week, len(weeks[week]), agreed / len(passes) if passes else None))
    return rows


def most_first(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(name, count) pairs added up by name: the most first, then by name."""
    totals: Counter[str] = Counter()
    for name, count in counts:
        totals[name] += count
    return dict(sorted(totals.items(), key=_by_count_then_name))


def _by_count_then_name(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]
