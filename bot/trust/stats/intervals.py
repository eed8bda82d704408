"""Intervals that hold their coverage at small n: a Wilson-type score interval for a mean over cases of scores in
[0, 1] (a case's share of agreeing labels, a tie as a half), kappa's interval from it, and the paired t interval of a
mean difference, with Student's t quantile computed here rather than from scipy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

Z95 = 1.959963984540054  # the standard normal quantile of 0.975
MEAN_MIN_VALUES = 10  # headline shifts in steps of 25 points a t interval needs before it holds its coverage (92% at 5)
LEVEL = 0.95
_FRACTION_STEPS, _TINY = 300, 1e-300


def score_interval(scores: Sequence[float], *, partial: bool = False, z: float = Z95) -> tuple[float, float] | None:
    """The 95 % score interval of the mean of `scores`, one per case (or pair), each in [0, 1]: 1 or 0 for a case
    that agrees or not, the share of its labels that agree for a case several people labeled, a half for a tie;
    None without any.

    With scores of 0 and 1 only it is Wilson's interval. A score between 0 and 1 varies less than a coin: its
    variance is p (1 - p) less the scores' own spread (their mean s (1 - s), shrunk by one case so that twelve ties
    do not make 50% certain). Ties and the shares of a case's labels are outcomes of their own, whose spread holds
    as the mean moves; `partial` credit (weighted kappa's linear weights) spreads in proportion to p (1 - p) instead,
    so it counts as fewer cases. Each reading is the one that holds its coverage for its figure (docs/trust.md).
    """
    count = len(scores)
    if not count:
        return None
    mean = sum(scores) / count
    spread = sum([score * (1 - score) for score in scores]) / (count + 1)  # a list sums faster, in the same order
    if partial and 0 < mean < 1:
        share = max(1 - spread / (mean * (1 - mean)), 1 / (count + 1))  # of a coin's variance
        return _solved(mean, 0.0, count / share, z)
    return _solved(mean, spread, count, z)


def _solved(mean: float, spread: float, size: float, z: float) -> tuple[float, float]:
    """The p with (mean - p)² <= z² (p (1 - p) - spread) / size: a quadratic's roots (Wilson's when spread is 0)."""
    a = z * z / size
    lead, middle, last = 1 + a, 2 * mean + a, mean * mean + a * spread
    root = math.sqrt(max(middle * middle - 4 * lead * last, 0.0))
    low = 0.0 if mean <= 0 else max(0.0, (middle - root) / (2 * lead))
    high = 1.0 if mean >= 1 else min(1.0, (middle + root) / (2 * lead))
    return low, high


def kappa_from_agreement(interval: tuple[float, float], chance: float) -> tuple[float, float]:
    """Kappa's interval from the interval of (weighted) agreement, given the agreement chance gives with these
    margins: each bound chance-corrected as kappa is, kept at -1 and above."""
    low, high = ((bound - chance) / (1 - chance) for bound in interval)
    return max(-1.0, low), min(1.0, high)


@dataclass(frozen=True)
class MeanInterval:
    """The mean of paired differences over `n` pairs and its 95 % paired t interval; no interval (`low` and `high`
    None) from one pair, or from pairs that all differ by the same amount (no spread to estimate one from)."""

    n: int
    mean: float
    low: float | None = None
    high: float | None = None
    few: int = 0  # the differences an interval needs, when there were fewer

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high), or None where there is no interval."""
        return None if self.low is None or self.high is None else (self.low, self.high)

    def text(self, unit: str = "questions") -> str:
        """"+29.2, 95% CI -20.8 to +75.0 (paired t over 6 questions)", or the mean and why it has no interval."""
        if self.interval is not None:
            return f"{self.mean:+.1f}, 95% CI {self.low:+.1f} to {self.high:+.1f} (paired t over {self.n} {unit})"
        if self.few:
            return f"{self.mean:+.1f} (no interval under {self.few} {unit}: it would not hold its coverage)"
        if self.n == 1:
            return f"{self.mean:+.1f} (no interval from one {unit.removesuffix('s')}: no spread to estimate one from)"
        return (f"{self.mean:+.1f} (no interval: the difference is {self.mean:+.1f} on each of the {self.n} {unit}, no "
                "spread to estimate one from)")


def mean_interval(differences: Sequence[float], level: float = LEVEL, bounds: tuple[float, float] | None = None,
                  at_least: int = 2) -> MeanInterval | None:
    """The mean of `differences` with its paired t interval: mean +/- t(level, n - 1) * sd / sqrt(n), which holds its
    coverage at small n where a percentile bootstrap does not, and is the mirror image when every sign flips. Held
    within `bounds` where the differences cannot leave them (the true mean cannot either, so no coverage is lost).
    No interval under `at_least` differences (where it was measured not to hold), from one, or from differences all
    alike; None for no differences."""
    n = len(differences)
    if n == 0:
        return None
    mean = math.fsum(differences) / n
    if n == 1 or len(set(differences)) == 1:
        return MeanInterval(n, mean)
    if n < at_least:
        return MeanInterval(n, mean, few=at_least)
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
