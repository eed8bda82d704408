"""The paired t interval of a mean difference, with Student's t quantile computed here rather than from scipy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

LEVEL = 0.95
_FRACTION_STEPS, _TINY = 300, 1e-300


@dataclass(frozen=True)
class MeanInterval:
    """The mean of paired differences over `n` pairs and its 95 % paired t interval; no interval (`low` and `high`
    None) from one pair, or from pairs that all differ by the same amount (no spread to estimate one from)."""

    n: int
    mean: float
    low: float | None = None
    high: float | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high), or None where there is no interval."""
        return None if self.low is None or self.high is None else (self.low, self.high)

    def text(self, unit: str = "questions") -> str:
        """"+29.2, 95% CI -20.8 to +75.0 (paired t over 6 questions)", or the mean and why it has no interval."""
        if self.interval is not None:
            return f"{self.mean:+.1f}, 95% CI {self.low:+.1f} to {self.high:+.1f} (paired t over {self.n} {unit})"
        if self.n == 1:
            return f"{self.mean:+.1f} (no interval from one {unit.removesuffix('s')}: no spread to estimate one from)"
        return (f"{self.mean:+.1f} (no interval: the difference is {self.mean:+.1f} on each of the {self.n} {unit}, no "
                "spread to estimate one from)")


def mean_interval(differences: Sequence[float], level: float = LEVEL,
                  bounds: tuple[float, float] | None = None) -> MeanInterval | None:
    """The mean of `differences` with its paired t interval: mean +/- t(level, n - 1) * sd / sqrt(n), which holds its
    coverage at small n where a percentile bootstrap does not, and is the mirror image when every sign flips. Held
    within `bounds` where the differences cannot leave them (the true mean cannot either, so no coverage is lost).
    None for no differences."""
    n = len(differences)
    if n == 0:
        return None
    mean = math.fsum(differences) / n
    if n == 1 or len(set(differences)) == 1:
        return MeanInterval(n, mean)
    spread = math.sqrt(math.fsum((value - mean) ** 2 for value in differences) / (n - 1))
    half = t_quantile((1 + level) / 2, n - 1) * spread / math.sqrt(n)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return MeanInterval(n, mean, low, high)


@lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the t with P(T <= t) = p for `df` degrees of freedom (p above 0.5), by bisection of the
    distribution function to machine precision."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError("t_quantile takes 0.5 < p < 1 and df >= 1")
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2
    while high - low > 1e-12 * high:
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, df) < p else (low, middle)
    return (low + high) / 2


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom, through the regularised incomplete beta function."""
    tail = _beta_regularised(df / 2, 0.5, df / (df + t * t)) / 2
    return 1 - tail if t >= 0 else tail


def _beta_regularised(a: float, b: float, x: float) -> float:
    """I_x(a, b) by its continued fraction (Numerical Recipes' betai), on the side where it converges fast."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _fraction(a, b, x) / a
    return 1 - front * _fraction(b, a, 1 - x) / b


def _fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by Lentz's method."""
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _FRACTION_STEPS):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > _TINY else _TINY)
            c = 1 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result
