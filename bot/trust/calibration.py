"""How far the judge agrees with people: agreement, pass rates, kappa, a confusion matrix and score gaps, from labeled
verdicts, over cases: a case labeled by several people weighs one, its labels as shares of it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple, Protocol, TypeVar

from pydantic import BaseModel

from bot.trust.case_counts import CaseCounts, GapCases
from bot.trust.stats.case_tables import CaseTables
from bot.trust.stats.confusion import Confusion
from bot.trust.stats.intervals import score_interval
from bot.trust.stats.kappa import Kappa, Tables, alike, counted_kappa
from bot.trust.stats.mcnemar import majority, mcnemar_p

__all__ = ["Agreement", "Calibration", "Confusion", "Gap", "Kappa", "LabeledVerdict", "Verdict", "VerdictRow", "by_case",
           "calibrate", "cohen_kappa", "counted_kappa", "mean_abs_diff", "most_first", "wilson"]

Class = TypeVar("Class", bound=Hashable)  # what a rater's answers are: pass/fail, or a tag
PASS_NAMES = {True: "pass", False: "fail"}


def wilson(successes: int, n: int) -> tuple[float, float] | None:
    """The 95 % Wilson score interval of `successes` out of `n`, or None when n == 0."""
    return score_interval([1.0] * successes + [0.0] * (n - successes))


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of (judge, human) pairs over the classes either used; may be negative; None where undefined
    (`counted_kappa`)."""
    return counted_kappa(Counter(pairs))


def mean_abs_diff(pairs: Sequence[tuple[float, float]]) -> float | None:
    """The mean absolute difference of (judge, human) values, or None when there are none."""
    if not pairs:
        return None
    return sum(abs(first - second) for first, second in pairs) / len(pairs)


def by_case(items: Iterable[tuple[str | None, Class, Class, int]]) -> list[dict[tuple[Class, Class], int]]:
    """The (judge, human) pairs of each case, from (case, judge, human, how many) items: cases in the order of their
    keys, then each item without a case as that many cases of their own. Each case's pairs come in the order first
    given (plain dicts: thousands of cases of one label each cost a dict each, not a Counter)."""
    cases: dict[str, dict[tuple[Class, Class], int]] = {}
    alone: list[dict[tuple[Class, Class], int]] = []
    for case, judge, human, count in items:
        if case is None:
            alone += [{(judge, human): 1} for _ in range(count)]
            continue
        counts = cases.get(case)
        if counts is None:
            cases[case] = {(judge, human): count}
        else:
            counts[judge, human] = counts.get((judge, human), 0) + count
    return [*(cases[key] for key in sorted(cases)), *alone]


def kappa_of(items: Sequence[tuple[str | None, Class, Class]], *, scale: Sequence[Class] | None = None,
             names: Mapping[Class, str] | None = None) -> Kappa:
    """The kappa of (case, judge, human) items over their cases, weighted over `scale` when given."""
    return Kappa.of(by_case((case, judge, human, 1) for case, judge, human in items), scale=scale, names=names)


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


class Verdict(Protocol):
    """What calibration reads of one labeled verdict (a LabeledVerdict, or a VerdictRow read from the history)."""

    @property
    def judge_passed(self) -> bool | None: ...
    @property
    def judge_tag(self) -> str | None: ...
    @property
    def judge_values(self) -> Mapping[str, float]: ...
    @property
    def human_passed(self) -> bool | None: ...
    @property
    def human_tag(self) -> str | None: ...
    @property
    def human_values(self) -> Mapping[str, float]: ...
    @property
    def labeled_at(self) -> datetime: ...
    @property
    def judge_model(self) -> str: ...
    @property
    def rubric_hash(self) -> str: ...
    @property
    def case(self) -> str | None: ...


class VerdictRow(NamedTuple):
    """A LabeledVerdict as a plain row, as calibration reads thousands of them from the history (no validation: the
    history's own columns, already of their types)."""

    judge_passed: bool | None
    judge_tag: str | None
    judge_values: dict[str, float]
    human_passed: bool | None
    human_tag: str | None
    human_values: dict[str, float]
    labeled_at: datetime
    judge_model: str
    rubric_hash: str
    case: str | None


class Agreement(BaseModel):
    """How far the judge and people agree on pass/fail, over `pass_cases` labeled cases: their `pass_n` labels with
    pass/fail on both sides (of `n` labels), `pass_agree` of them alike; agreement, each side's pass rate and kappa
    with every case weighing one (`clustered`: several people labeled some case, whose labels count as shares of it);
    McNemar's exact test over the cases each side decides by its majority.
    """

    n: int
    pass_n: int
    pass_agree: int
    pass_cases: int = 0
    clustered: bool = False
    agreement: float | None
    interval: tuple[float, float] | None
    judge_pass_rate: float | None = None
    human_pass_rate: float | None = None
    judge_only: int = 0  # cases the judge passes and most of their labels fail
    human_only: int = 0
    split: int = 0  # cases people (or the judge's verdicts) split evenly on: out of McNemar's test
    mcnemar_p: float | None = None
    kappa_pass: Kappa = Kappa()

    @classmethod
    def counted(cls, n: int, passes: Mapping[tuple[bool, bool], int],
                cases: Sequence[Mapping[tuple[bool, bool], int]] | None = None) -> Agreement:
        """The figures of `n` labels, whose (judge, human) pass/fail pairs occur as often as `passes` counts, and
        fall into `cases` so (the pairs of each case; by default each pair a case of its own)."""
        given = cases if cases is not None else by_case(
            (None, judge, human, count) for (judge, human), count in passes.items())
        return cls.of_tables(n, passes, alike(given))

    @classmethod
    def of_tables(cls, n: int, passes: Mapping[tuple[bool, bool], int], tables: Tables[bool]) -> Agreement:
        """`counted` over the cases' distinct tables (`alike`, or `case_tables`)."""
        cases = sum(times for _, times in tables)
        figures = {"n": n, "pass_n": sum(passes.values()), "pass_cases": cases,
                   "pass_agree": sum(count for (judge, human), count in passes.items() if judge == human),
                   "clustered": any(sum(counts.values()) > 1 for counts, _ in tables)}
        if not cases:
            return cls(**figures, agreement=None, interval=None)
        agreed: list[float] = []
        judge_passes = human_passes = 0.0
        judge_only = human_only = split = 0
        for counts, times in tables:  # a handful of distinct tables, however many cases
            agreed += [_share(counts, lambda judge, human: judge == human)] * times
            judge, human = majority(_sides(counts, 0)), majority(_sides(counts, 1))
            judge_only += times * (judge is True and human is False)
            human_only += times * (judge is False and human is True)
            split += times * (judge is None or human is None)
            judge_passes += times * _share(counts, lambda judge, _: judge)
            human_passes += times * _share(counts, lambda _, human: human)
        return cls(**figures, agreement=sum(agreed) / len(agreed), interval=score_interval(agreed),
                   judge_pass_rate=judge_passes / cases, human_pass_rate=human_passes / cases,
                   judge_only=judge_only, human_only=human_only, split=split,
                   mcnemar_p=mcnemar_p(judge_only, human_only), kappa_pass=Kappa.of_tables(tables, names=PASS_NAMES))


def case_tables(items: Iterable[tuple[str | None, bool, bool, int]]) -> Tables[bool]:
    """The distinct tables of the cases of (case, judge, human, how many) items (`alike` of `by_case`), read without a
    table a case: a case of one item, as most are, is its item."""
    grouped: dict[str, list[tuple[tuple[bool, bool], int]]] = {}
    times: dict[tuple[tuple[tuple[bool, bool], int], ...], int] = {}
    for case, judge, human, count in items:
        if case is None:
            times[(((judge, human), 1),)] = times.get((((judge, human), 1),), 0) + count
        else:
            grouped.setdefault(case, []).append(((judge, human), count))
    for parts in grouped.values():
        if len(parts) > 1:  # several items of one case: their pairs counted together, in one order
            merged: dict[tuple[bool, bool], int] = {}
            for pair, count in parts:
                merged[pair] = merged.get(pair, 0) + count
            parts = sorted(merged.items())
        key = tuple(parts)
        times[key] = times.get(key, 0) + 1
    return [(dict(key), count) for key, count in times.items() if any(dict(key).values())]


def _sides(counts: Mapping[tuple[bool, bool], int], side: int) -> list[bool]:
    """One side's pass/fail in each of a case's labels."""
    return [pair[side] for pair, count in counts.items() for _ in range(count)]


def _share(counts: Mapping[tuple[Class, Class], int], said: Callable[[Class, Class], bool]) -> float:
    """The share of a case's labels of which `said(judge, human)` holds."""
    return sum(count for (judge, human), count in counts.items() if said(judge, human)) / sum(counts.values())


class Gap(BaseModel):
    """How the judge's scores on one numeric criterion differ from people's, over `n` labels of `cases` cases (each
    case weighing one): the mean absolute difference, the mean signed one (judge less person: above 0 the judge
    scores higher), and for an ordinal integer scale the linearly weighted kappa."""

    n: int
    cases: int = 0
    mean_abs: float
    mean_signed: float
    kappa: Kappa | None = None


class Calibration(Agreement):
    """The calibration figures of a set of labels (see `calibrate`): pass/fail agreement, and the rest."""

    kappa_tag: Kappa = Kappa()
    tag_agree: int = 0  # labels with the same tag on both sides
    tag_agreement: float | None = None  # over cases, each weighing one
    tag_interval: tuple[float, float] | None = None
    confusion: Confusion | None
    gaps: dict[str, Gap]
    by_week: list[tuple[str, int, int, float | None]]  # (week, labels, cases, agreement)
    judge_models: dict[str, int]
    rubric_hashes: dict[str, int]

    @property
    def tag_n(self) -> int:
        """Labels with a tag on both sides."""
        return self.kappa_tag.n


def calibrate(
    labels: Iterable[Verdict], *, tags: Sequence[str] = (), criteria: Sequence[str] = (),
    scales: Mapping[str, Sequence[int]] | None = None,
) -> Calibration:
    """The calibration figures of `labels`.

    `tags` is the rubric's tag order (empty: the rubric has no tag, and there is no tag kappa or matrix). `gaps` holds
    each of `criteria` that some label has on both sides, with a weighted kappa for those `scales` gives an ordinal
    integer scale (its values, lowest first). Weeks are the ISO weeks of `labeled_at` in its own time zone. Judge
    models and rubric hashes come most labels first.

    The labels are put in their cases once, and every figure counts the cases in one pass, in the order `by_case`
    gives them (so each sum over cases adds in that order: the figures of building each figure's cases one by one).
    """
    given = list(labels)
    counts = CaseCounts(given, tagged=bool(tags), criteria=criteria)
    tag_counts, tag_shares = counts.tags.pairs(), counts.tag_shares
    return Calibration(
        **dict(Agreement.of_tables(len(given), counts.passes.pairs(), counts.passes.tables())),
        kappa_tag=Kappa.of_tables(counts.tags.tables()) if tag_counts else Kappa(),
        tag_agree=sum(count for (judge, human), count in tag_counts.items() if judge == human),
        tag_agreement=sum(tag_shares) / len(tag_shares) if tag_shares else None,
        tag_interval=score_interval(tag_shares),
        confusion=Confusion.build([pair for pair, count in tag_counts.items() for _ in range(count)], order=tags)
        if tag_counts else None,
        gaps={path: _gap(gap, (scales or {}).get(path)) for path, gap in counts.gaps.items() if gap.n},
        by_week=[(week, counts.weeks[week], *_week_figures(counts.weeks[week], counts.week_passes.get(week)))
                 for week in sorted(counts.weeks)],  # "YYYY-Www" sorts in time order
        judge_models=most_first(Counter(label.judge_model for label in given).items()),
        rubric_hashes=most_first(Counter(label.rubric_hash for label in given).items()),
    )


def _gap(cases: GapCases, scale: Sequence[int] | None) -> Gap:
    """A criterion's gap over its cases, with the weighted kappa over an ordinal `scale`."""
    kappa = None
    if scale is not None:
        points = sorted({float(value) for value in scale} | cases.values)
        kappa = Kappa.of_tables(cases.tables.tables(), scale=points, names={value: f"{value:g}" for value in points})
    return Gap(n=cases.n, cases=cases.tables.cases, mean_abs=sum(cases.absolute) / len(cases.absolute),
               mean_signed=sum(cases.signed) / len(cases.signed), kappa=kappa)


def _week_figures(labels: int, cases: CaseTables[bool] | None) -> tuple[int, float | None]:
    """A week's pass/fail cases and agreement."""
    figures = Agreement.of_tables(labels, cases.pairs(), cases.tables()) if cases else Agreement.of_tables(labels, {}, [])
    return figures.pass_cases, figures.agreement


def most_first(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(name, count) pairs added up by name: the most first, then by name."""
    totals: Counter[str] = Counter()
    for name, count in counts:
        totals[name] += count
    return dict(sorted(totals.items(), key=_by_count_then_name))


def _by_count_then_name(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]
