"""Intervals that hold their coverage at small n: a Wilson-type score interval for a mean over cases of scores in
[0, 1] (a case's share of agreeing labels, a tie as a half), kappa's interval from it, and Student's t."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

Z95 = 1.959963984540054  # the standard normal quantile of 0.975
MEAN_MIN_VALUES = 10  # paired differences a t interval needs before it holds its coverage


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
    spread = sum(score * (1 - score) for score in scores) / (count + 1)
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


@lru_cache(maxsize=256)
def t_quantile(probability: float, df: int) -> float:
    """Student's t quantile with `df` degrees of freedom, for `probability` above 0.5 (bisection on the CDF)."""
    low, high = 0.0, 1.0
    while t_cdf(high, df) < probability:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, df) < probability else (low, middle)
    return (low + high) / 2


def t_cdf(t: float, df: int) -> float:
    """Student's t distribution function, through the regularized incomplete beta function."""
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t >= 0 else tail


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), by its continued fraction (Lentz's method, as in Numerical Recipes' betai)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1 - front * _fraction(b, a, 1 - x) / b
    return front * _fraction(a, b, x) / a


def _fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    value = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            value *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return value


def mean_interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """The mean of paired differences and its 95 % Student t interval; no interval under MEAN_MIN_VALUES values
    (at 5 headline shifts in steps of 25 points it covered 92%), or when every value is the same (there is no
    spread to measure)."""
    if not values:
        return None, None
    count = len(values)
    mean = sum(values) / count
    if count < MEAN_MIN_VALUES:
        return mean, None
    deviation = math.sqrt(sum((value - mean) ** 2 for value in values) / (count - 1))
    if deviation == 0:
        return mean, None
    half = t_quantile(0.975, count - 1) * deviation / math.sqrt(count)
    return mean, (mean - half, mean + half)
