"""Cohen's kappa over cases, plain or linearly weighted for ordinal scores, with its 95 % interval, its bands and why it
is n/a."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel

from bot.trust.stats.intervals import kappa_from_agreement, score_interval

KAPPA_BANDS = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))  # Landis & Koch
FEW_CASES = 20  # below this many labeled cases a figure says "few labeled cases (n = 12)"
KAPPA_MIN_CASES = 20  # under this many cases kappa's interval did not hold its coverage (docs/trust.md)
Class = TypeVar("Class", bound=Hashable)  # what a rater's answers are: pass/fail, a tag, or a score


def few_cases(n: int) -> str:
    """"few labeled cases (n = 12)" below FEW_CASES distinct cases (and some), else ""."""
    return f"few labeled cases (n = {n})" if 0 < n < FEW_CASES else ""


def noted(text: str, n: int) -> str:
    """A figure's text, with "; few labeled cases (n = 12)" when it rests on few (`n`) distinct cases."""
    few = few_cases(n)
    return f"{text}; {few}" if few else text


def agreement_weights(scale: Sequence[float]) -> list[list[float]]:
    """Linear agreement weights over an ordinal scale: 1 for the same score, 0 for its two ends, 1 - |a - b| / range
    between (sklearn's and statsmodels' linear weighted kappa)."""
    span = (max(scale) - min(scale)) or 1.0
    return [[1.0 - abs(first - second) / span for second in scale] for first in scale]


def _margins(counts: Mapping[tuple[Class, Class], float]) -> tuple[float, dict[Class, float], dict[Class, float]]:
    """How much each side gave each class (the classes it gave only), and the total."""
    judge: dict[Class, float] = {}
    human: dict[Class, float] = {}
    for (first, second), count in counts.items():
        if count > 0:
            judge[first] = judge.get(first, 0.0) + count
            human[second] = human.get(second, 0.0) + count
    return sum(counts.values()), judge, human


def _weights(counts: Mapping[tuple[Class, Class], float], scale: Sequence[Class] | None
             ) -> dict[tuple[Class, Class], float]:
    """The agreement weight of each (judge, human) pair of the classes `counts` holds: linear over `scale` (numbers)
    when given, else 1 for the same class and 0 for any other."""
    if not scale:
        classes = {label for pair in counts for label in pair}
        return {(first, second): float(first == second) for first in classes for second in classes}
    grid = agreement_weights([float(value) for value in scale])  # type: ignore[arg-type]  # a scale holds numbers
    return {(first, second): grid[i][j] for i, first in enumerate(scale) for j, second in enumerate(scale)}


def counted_kappa(counts: Mapping[tuple[Class, Class], float], scale: Sequence[Class] | None = None) -> float | None:
    """Cohen's kappa of (judge, human) pairs given as how many times (or how much) each pair occurs; with `scale`
    (the ordered numeric values of an ordinal score), kappa with linear weights over it.

    None when there are no pairs, or when either rater used one class only (a judge that passes everything): kappa
    then says nothing of agreement (0/0 when both used the same class, 0 whatever the agreement otherwise), and is
    shown as "n/a (one class only)". Perfect agreement over two or more classes is 1.0.
    """
    n, judge, human = _margins(counts)
    if n == 0 or len(judge) < 2 or len(human) < 2:
        return None
    weight = _weights(counts, scale)
    observed = sum(count * weight[pair] for pair, count in counts.items()) / n
    chance = _chance(counts, weight)
    return (observed - chance) / (1 - chance)


def _chance(counts: Mapping[tuple[Class, Class], float], weight: Mapping[tuple[Class, Class], float]) -> float:
    """The (weighted) agreement that chance gives with the two sides' margins."""
    n, judge, human = _margins(counts)
    return sum(j * h * weight[first, second] for first, j in judge.items() for second, h in human.items()) / (n * n)


Tables = list[tuple[Mapping[tuple[Class, Class], int], int]]  # distinct case tables, each with how many cases have it


def alike(cases: Sequence[Mapping[tuple[Class, Class], int]]) -> Tables[Class]:
    """The cases as their distinct tables of (judge, human) counts, each with how many cases have it: thousands of
    cases of one label each are a handful of tables, and every figure over cases reads those."""
    times: dict[tuple[tuple[tuple[Class, Class], int], ...], int] = {}
    for counts in cases:  # a table's items in its own order: two orders of one table are two keys, no harm done
        if any(counts.values()):
            key = tuple(counts.items())
            times[key] = times.get(key, 0) + 1
    return [(dict(key), count) for key, count in times.items()]


def case_weighted(tables: Tables[Class]) -> dict[tuple[Class, Class], float]:
    """The (judge, human) pairs of every case, each case's as shares of its labels: a case weighs one whatever the
    number of people who labeled it (one label a case: the plain counts)."""
    weighted: dict[tuple[Class, Class], float] = {}
    for counts, times in tables:
        total = sum(counts.values())
        for pair, count in counts.items():
            if count:
                weighted[pair] = weighted.get(pair, 0.0) + times * count / total
    return weighted


def kappa_interval(tables: Tables[Class], scale: Sequence[Class] | None = None) -> tuple[float, float] | None:
    """The 95 % interval of kappa over the cases of `tables` (each case weighing one, as `case_weighted`), weighted
    over `scale` when given: the score interval of the cases' (weighted) agreement, chance-corrected as kappa is with
    the same margins. None where kappa is undefined, or under KAPPA_MIN_CASES cases, where no interval held its
    coverage."""
    weighted = case_weighted(tables)
    if sum(times for _, times in tables) < KAPPA_MIN_CASES or counted_kappa(weighted, scale) is None:
        return None
    weight = _weights(weighted, scale)
    scores = [(sum(count * weight[pair] for pair, count in counts.items()) / sum(counts.values()), times)
              for counts, times in tables]
    each: list[float] = []  # a score a case, each table's cases in a row
    for score, times in scores:
        each += [score] * times
    agreed = score_interval(each, partial=bool(scale))
    return None if agreed is None else kappa_from_agreement(agreed, _chance(weighted, weight))


def band(kappa: float) -> str:
    """Landis & Koch's name for a kappa."""
    if kappa < 0:
        return "poor"
    return next((name for top, name in KAPPA_BANDS if kappa <= top), "almost perfect")


def _shown(value: float) -> float:
    return round(value, 2) + 0.0  # the band follows the digits shown; + 0.0 turns -0.0 into 0.0


class Kappa(BaseModel):
    """Cohen's kappa over `cases` labeled cases (`n` (judge, human) labels) with its 95 % interval, or why there is
    none.

    Where several people labeled some case (`clustered`), each case weighs one: its labels count as shares of it.
    `judge_only` and `human_only` name the one class a side used, where it used one only.
    """

    n: int = 0
    cases: int = 0
    clustered: bool = False
    value: float | None = None
    interval: tuple[float, float] | None = None
    judge_only: str | None = None
    human_only: str | None = None

    @classmethod
    def of(cls, cases: Sequence[Mapping[tuple[Class, Class], int]], *, scale: Sequence[Class] | None = None,
           names: Mapping[Class, str] | None = None) -> Kappa:
        """The kappa of each case's counted (judge, human) pairs, weighted over `scale` when given, with its interval
        (`kappa_interval`). `names` say how a class reads (default str)."""
        return cls.of_tables(alike(cases), scale=scale, names=names)

    @classmethod
    def of_tables(cls, tables: Tables[Class], *, scale: Sequence[Class] | None = None,
                  names: Mapping[Class, str] | None = None) -> Kappa:
        """`of` over the cases' distinct tables (`alike`)."""
        weighted = case_weighted(tables)
        _, judge, human = _margins(weighted)

        def only(side: Mapping[Class, float]) -> str | None:
            if len(side) != 1:
                return None
            (label,) = side
            return names[label] if names and label in names else str(label)

        return cls(n=sum(times * sum(counts.values()) for counts, times in tables),
                   cases=sum(times for _, times in tables),
                   clustered=any(sum(counts.values()) > 1 for counts, _ in tables), value=counted_kappa(weighted, scale),
                   interval=kappa_interval(tables, scale), judge_only=only(judge), human_only=only(human))

    @classmethod
    def counted(cls, counts: Mapping[tuple[Class, Class], int], *, names: Mapping[Class, str] | None = None) -> Kappa:
        """The kappa of counted (judge, human) pairs, each of them a case of its own."""
        return cls.of([{pair: 1} for pair, count in counts.items() for _ in range(count)], names=names)

    def text(self, *, note: bool = True) -> str:
        """Such as "0.55, 95% CI 0.40-0.70: fair to substantial" (one band where the interval fits in one), or why
        there is none: "n/a (one class only: people said fail every time)"; with `note`, "few labeled cases (n = 12)"
        when they are few."""
        if self.n == 0:
            return "n/a (no labels)"
        if self.value is None:
            text = f"n/a (one class only: {self._one_class()})"
        elif self.interval is None:
            text = f"{_shown(self.value):.2f} (no interval under {KAPPA_MIN_CASES} cases)"
        else:
            low, high = _shown(self.interval[0]), _shown(self.interval[1])
            method = f" ({self.cases} cases, each weighing one)" if self.clustered else ""
            bands = band(low) if band(low) == band(high) else f"{band(low)} to {band(high)}"
            text = f"{_shown(self.value):.2f}, 95% CI {bounds_text(low, high)}{method}: {bands}"
        return noted(text, self.cases) if note else text

    def _one_class(self) -> str:
        if self.judge_only is not None and self.judge_only == self.human_only:
            return f"the judge and people said {self.judge_only} every time"
        sides = [f"the judge said {self.judge_only} every time" if self.judge_only is not None else "",
                 f"people said {self.human_only} every time" if self.human_only is not None else ""]
        return ", ".join(side for side in sides if side)


def bounds_text(low: float, high: float, digits: int = 2) -> str:
    """An interval's bounds: "0.15-0.66", or "-0.40 to -0.10" when either is negative (a dash would read as a
    minus)."""
    joint = " to " if min(low, high) < 0 else "-"
    return f"{low:.{digits}f}{joint}{high:.{digits}f}"
