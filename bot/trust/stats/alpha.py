"""Krippendorff's alpha: how far several coders agree beyond chance, over units each coded several times, nominal or interval."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Metric = Literal["nominal", "interval"]


@dataclass
class AlphaTally:
    """Krippendorff's alpha built a unit (a row) at a time, from the coincidence matrix's sums only: nominal (a tag,
    pass/fail) or interval (a headline). Units with fewer than two values cannot be paired and are left out."""

    metric: Metric
    units: int = 0
    observed: float = 0.0  # sum over units of their disagreeing pairs' distance, over (values in the unit - 1)
    counts: Counter[Hashable] = field(default_factory=Counter)  # n_c: how often each value was paired

    def add(self, values: Iterable[Hashable | None]) -> None:
        """Count one unit: the values its coders gave (None: no value)."""
        given = [value for value in values if value is not None]
        if len(given) < 2:
            return
        self.units += 1
        unit = Counter(given)
        self.observed += _disagreement(unit, self.metric) / (len(given) - 1)
        self.counts.update(unit)

    @property
    def pairable(self) -> int:
        """Values in units of two or more (the n of the coincidence matrix)."""
        return sum(self.counts.values())

    @property
    def alpha(self) -> float | None:
        """1 - observed / expected disagreement; None when no unit was paired or every value is the same."""
        expected = _disagreement(self.counts, self.metric)
        if not self.units or expected == 0:
            return None
        return 1 - (self.pairable - 1) * self.observed / expected


def _disagreement(counts: Counter[Hashable], metric: Metric) -> float:
    """The sum of distances over every ordered pair of the counted values (a value is not paired with itself)."""
    n = sum(counts.values())
    if metric == "nominal":
        return float(n * n - sum(count * count for count in counts.values()))
    total = squares = 0.0
    for value, count in counts.items():
        number = float(value)  # type: ignore[arg-type]  # the interval metric is given numbers
        total += count * number
        squares += count * number * number
    return 2 * (n * squares - total * total)


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]], metric: Metric) -> tuple[float | None, int]:
    """Krippendorff's alpha of `units` (each the values its coders gave, None where one gave none) and how many
    units had two values or more."""
    tally = AlphaTally(metric)
    for unit in units:
        tally.add(unit)
    return tally.alpha, tally.units
