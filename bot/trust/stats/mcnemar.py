"""Exact binomial tests over cases (McNemar's over the cases two sides decide differently, the sign test over wins and
losses), and how a p-value reads and decides."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from decimal import ROUND_HALF_EVEN, Decimal

BY_CHANCE = 0.05  # a difference is "not by chance" when the p-value shown is below this
EXACT_UP_TO = 5000  # up to this many cases the binomial tail is summed in whole numbers


def sign_test_p(wins: int, losses: int) -> float | None:
    """The two-sided exact binomial p of `wins` against `losses` at even odds (ties left out before); None without
    either. Exact at any size: the binomial coefficients are summed in whole numbers."""
    n = wins + losses
    if n == 0:
        return None
    low = min(wins, losses)
    if n > EXACT_UP_TO:  # in logarithms: whole numbers this large cost seconds
        logs = [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
                for k in range(low + 1)]
        top = max(logs)
        return min(1.0, 2 * math.exp(top) * math.fsum(math.exp(value - top) for value in logs))
    term, tail = 1, 1  # C(n, 0), and the running sum of C(n, k) for k <= low
    for k in range(1, low + 1):
        term = term * (n - k + 1) // k
        tail += term
    return min(1.0, 2 * tail / 2**n)


def mcnemar_p(first_only: int, second_only: int) -> float:
    """McNemar's exact (conditional) test: the two-sided binomial p of the cases only the first side passed against
    those only the second did; 1.0 when they never differ. statsmodels' mcnemar(exact=True) at any size."""
    return sign_test_p(first_only, second_only) or 1.0


def majority(said: Iterable[bool]) -> bool | None:
    """What most of a case's labels say (pass or fail); None for an even split, which leaves the case out of
    McNemar's test: people did not decide it."""
    counts = Counter(said)
    if counts[True] == counts[False]:
        return None
    return counts[True] > counts[False]


def shown_p(p: float) -> float:
    """A p-value as it is printed: two significant digits (a half to even, as Python prints 0.625: 0.62), 0 below
    0.001."""
    if p < 0.001:
        return 0.0
    return float(f"{_two_digits(p)}")


def _two_digits(p: float) -> str:
    value = Decimal(repr(float(p)))  # a numpy float too (its repr names its type)
    rounded = value.quantize(Decimal(1).scaleb(value.adjusted() - 1), rounding=ROUND_HALF_EVEN)
    if rounded.adjusted() > value.adjusted():  # 0.995 rounds up to 1.00: two digits are 1.0
        rounded = rounded.quantize(Decimal(1).scaleb(rounded.adjusted() - 1), rounding=ROUND_HALF_EVEN)
    return str(rounded)


def p_text(p: float) -> str:
    """"p < 0.001", or p with two significant digits: "p = 0.0041", "p = 0.031", "p = 0.50", "p = 1.0"."""
    return "p < 0.001" if p < 0.001 else f"p = {_two_digits(p)}"


def by_chance(p: float | None) -> bool:
    """Whether a difference could be chance, read from the p-value as printed (p = 0.0496 prints as 0.050, which
    is not below 0.05): the words beside a p never contradict it."""
    return p is None or shown_p(p) >= BY_CHANCE
