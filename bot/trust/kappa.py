"""Cohen's kappa, plain or linearly weighted for ordinal scores, with its 95 % interval, its bands and why it is n/a."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel

Z95 = 1.959963984540054  # the standard normal quantile of 0.975
KAPPA_BANDS = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))  # Landis & Koch
FEW_LABELS = 20  # below this many labels a figure says "few labels (n = 12)"
Class = TypeVar("Class", bound=Hashable)  # what a rater's answers are: pass/fail, a tag, or a score


def few_labels(n: int) -> str:
    """"few labels (n = 12)" below FEW_LABELS labels (and some), else ""."""
    return f"few labels (n = {n})" if 0 < n < FEW_LABELS else ""


def noted(text: str, n: int) -> str:
    """A figure's text, with "; few labels (n = 12)" when it rests on few labels."""
    few = few_labels(n)
    return f"{text}; {few}" if few else text


def agreement_weights(scale: Sequence[float]) -> list[list[float]]:
    """Linear agreement weights over an ordinal scale: 1 for the same score, 0 for its two ends, 1 - |a - b| / range
    between (sklearn's and statsmodels' linear weighted kappa)."""
    span = (max(scale) - min(scale)) or 1.0
    return [[1.0 - abs(first - second) / span for second in scale] for first in scale]


def _margins(counts: Mapping[tuple[Class, Class], int]) -> tuple[int, Counter[Class], Counter[Class]]:
    judge: Counter[Class] = Counter()
    human: Counter[Class] = Counter()
    for (first, second), count in counts.items():
        judge[first] += count
        human[second] += count
    return sum(counts.values()), +judge, +human


def _weights(classes: Sequence[Class], scale: Sequence[Class] | None) -> dict[tuple[Class, Class], float]:
    """The agreement weight of each (judge, human) pair of `classes`: linear over `scale` (numbers) when given, else 1
    for the same class and 0 for any other."""
    if scale is None:
        return {(first, second): float(first == second) for first in classes for second in classes}
    grid = agreement_weights([float(value) for value in scale])  # type: ignore[arg-type]  # a scale holds numbers
    return {(first, second): grid[i][j] for i, first in enumerate(scale) for j, second in enumerate(scale)}


def counted_kappa(counts: Mapping[tuple[Class, Class], int], scale: Sequence[Class] | None = None) -> float | None:
    """Cohen's kappa of (judge, human) pairs given as how many times each pair occurs; with `scale` (the ordered
    numeric values of an ordinal score), kappa with linear weights over it.

    None when there are no pairs, or when either rater used one class only (a judge that passes everything): kappa
    then says nothing of agreement (0/0 when both used the same class, 0 whatever the agreement otherwise), and is
    shown as "n/a (one class only)". Perfect agreement over two or more classes is 1.0.
    """
    n, judge, human = _margins(counts)
    if n == 0 or len(judge) < 2 or len(human) < 2:
        return None
    if not scale:
        # In whole numbers times n²: with two classes or more on each side, the expected agreement is below 1.
        agreed = sum(count for (first, second), count in counts.items() if first == second)
        expected = sum(count * human[label] for label, count in judge.items())
        return (n * agreed - expected) / (n * n - expected)
    weight = _weights(scale, scale)
    observed = sum(count * weight[pair] for pair, count in counts.items()) / n
    chance = sum(j * h * weight[first, second] for first, j in judge.items() for second, h in human.items()) / (n * n)
    return (observed - chance) / (1 - chance)


def kappa_interval(counts: Mapping[tuple[Class, Class], int], scale: Sequence[Class] | None = None,
                   z: float = Z95) -> tuple[float, float] | None:
    """The 95 % interval of Cohen's kappa (as `counted_kappa`, weighted over `scale` when given) from its
    large-sample standard error (Fleiss, Cohen and Everitt 1969, as statsmodels' cohens_kappa gives it); None where
    kappa is undefined."""
    kappa = counted_kappa(counts, scale)
    if kappa is None:
        return None
    n, judge, human = _margins(counts)
    classes = list(scale) if scale else sorted({*judge, *human}, key=repr)
    weight = _weights(classes, scale or None)
    row = {label: judge[label] / n for label in classes}
    column = {label: human[label] / n for label in classes}
    expected = sum(row[first] * column[second] * weight[first, second] for first in classes for second in classes)
    by_row = {first: sum(column[second] * weight[first, second] for second in classes) for first in classes}
    by_column = {second: sum(row[first] * weight[first, second] for first in classes) for second in classes}
    spread = sum(count / n * (weight[first, second] - (by_row[first] + by_column[second]) * (1 - kappa)) ** 2
                 for (first, second), count in counts.items())
    variance = max(0.0, (spread - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2))
    half = z * math.sqrt(variance)
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def band(kappa: float) -> str:
    """Landis & Koch's name for a kappa."""
    if kappa < 0:
        return "poor"
    return next((name for top, name in KAPPA_BANDS if kappa <= top), "almost perfect")


def _shown(value: float) -> float:
    return round(value, 2) + 0.0  # the band follows the digits shown; + 0.0 turns -0.0 into 0.0


class Kappa(BaseModel):
    """Cohen's kappa of `n` (judge, human) pairs with its 95 % interval, or why there is none.

    The interval is a bootstrap over `cases` cases where several people labeled some case, else the analytic one.
    `judge_only` and `human_only` name the one class a side used, where it used one only.
    """

    n: int = 0
    value: float | None = None
    interval: tuple[float, float] | None = None
    cases: int | None = None
    judge_only: str | None = None
    human_only: str | None = None

    @classmethod
    def of(cls, counts: Mapping[tuple[Class, Class], int], *, scale: Sequence[Class] | None = None,
           bootstrap: tuple[tuple[float, float] | None, int] | None = None, names: Mapping[Class, str] | None = None
           ) -> Kappa:
        """The kappa of counted (judge, human) pairs, weighted over `scale` when given; its interval from
        `bootstrap` ((interval, cases)) when given, else analytic. `names` say how a class reads (default str)."""
        n, judge, human = _margins(counts)
        value = counted_kappa(counts, scale)

        def only(side: Counter[Class]) -> str | None:
            if len(side) != 1:
                return None
            (label,) = side
            return names[label] if names and label in names else str(label)

        if bootstrap is not None:
            interval, cases = bootstrap
            interval = interval if value is not None else None
        else:
            interval, cases = kappa_interval(counts, scale), None
        return cls(n=n, value=value, interval=interval, cases=cases, judge_only=only(judge), human_only=only(human))

    def text(self, *, note: bool = True) -> str:
        """Such as "0.55, 95% CI 0.40-0.70: fair to substantial" (one band where the interval fits in one), or why
        there is none: "n/a (one class only: people said fail every time)"; with `note`, "few labels (n = 12)" when
        they are few."""
        if self.n == 0:
            return "n/a (no labels)"
        if self.value is None:
            text = f"n/a (one class only: {self._one_class()})"
        elif self.interval is None:  # a bootstrap whose every resample had one class only
            text = f"{_shown(self.value):.2f} (no interval: the resamples have one class only)"
        else:
            low, high = _shown(self.interval[0]), _shown(self.interval[1])
            method = f" (bootstrap over {self.cases} cases)" if self.cases is not None else ""
            bands = band(low) if band(low) == band(high) else f"{band(low)} to {band(high)}"
            text = f"{_shown(self.value):.2f}, 95% CI {low:.2f}-{high:.2f}{method}: {bands}"
        return noted(text, self.n) if note else text

    def _one_class(self) -> str:
        if self.judge_only is not None and self.judge_only == self.human_only:
            return f"the judge and people said {self.judge_only} every time"
        sides = [f"the judge said {self.judge_only} every time" if self.judge_only is not None else "",
                 f"people said {self.human_only} every time" if self.human_only is not None else ""]
        return ", ".join(side for side in sides if side)
