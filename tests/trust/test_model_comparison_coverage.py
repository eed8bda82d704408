"""The intervals `compare` prints hold their coverage at the sizes they are printed for: random sets of paired headlines
(continuous and on eth's three levels, a few true differences and spreads) at n = 5, 10, 20 and 50, each interval
computed by the real code, checked against the true difference. The fast tests draw thousands of sets; the slow ones
more, and print the table docs/trust.md shows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from bot.trust.model_comparison import DIFFERENCES, Graded, compare_one
from bot.trust.stats.intervals import mean_interval

SIZES = (5, 10, 20, 50)
LEVELS = np.array([100.0, 25.0, 0.0])  # eth's headlines: Correct, Generic, Refusal
Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]  # (A's headlines, B's) of n questions


def continuous(shift: float, spread: float) -> Draw:
    """Headlines on 0-100: a question's difficulty, B `shift` points above A, each with noise of `spread`."""
    def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        base = rng.uniform(20, 80, n)
        return (np.clip(base + rng.normal(0, spread, n), 0, 100),
                np.clip(base + shift + rng.normal(0, spread, n), 0, 100))
    return draw


def levels(a: list[float], b: list[float], same: float) -> Draw:
    """eth's three levels: A's drawn with shares `a`; B's the same as A's on a share `same` of questions (ties),
    else drawn with shares `b`."""
    def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        first = rng.choice(3, size=n, p=a)
        second = np.where(rng.random(n) < same, first, rng.choice(3, size=n, p=b))
        return LEVELS[first], LEVELS[second]
    return draw


SPREAD = {  # where pairs rarely tie: the interval holds 93-97 % at every size
    "continuous, +0 (spread 10)": continuous(0, 10),
    "continuous, +5 (spread 20)": continuous(5, 20),
    "continuous, +15 (spread 35)": continuous(15, 35),
    "three levels, independent": levels([0.4, 0.4, 0.2], [0.5, 0.3, 0.2], 0.0),
}
TIES = {  # where most pairs tie: at n <= 10 often no interval, and the one printed is wider than it needs to be
    "three levels, half tied": levels([0.5, 0.3, 0.2], [0.6, 0.3, 0.1], 0.5),
    "three levels, 80% tied": levels([0.5, 0.3, 0.2], [0.7, 0.2, 0.1], 0.8),
}


def truth(draw: Draw) -> float:
    """The true mean difference, from two million questions."""
    a, b = draw(np.random.default_rng(0), 2_000_000)
    return float((b - a).mean())


def coverage(draw: Draw, true: float, n: int, sets: int, seed: int) -> tuple[float, float]:
    """(share of the printed intervals holding the true difference, share of sets printed without one) over `sets`
    random sets of n questions."""
    a, b = draw(np.random.default_rng(seed), sets * n)
    held = shown = 0
    for differences in (b - a).reshape(sets, n):
        found = mean_interval(differences.tolist(), bounds=DIFFERENCES)
        assert found is not None
        if found.low is not None and found.high is not None:
            shown += 1
            held += found.low <= true <= found.high
    return held / shown, 1 - shown / sets


def check_mean(sets: int, report: bool = False) -> None:
    for number, (name, draw) in enumerate({**SPREAD, **TIES}.items()):
        true = truth(draw)
        found = {n: coverage(draw, true, n, sets, seed=100 * number + n) for n in SIZES}
        if report:
            print(f"| {name} | " + " | ".join(f"{held:.1%}" + (f" ({none:.0%} none)" if none >= 0.005 else "")
                                               for held, none in found.values()) + " |")
        for n, (held, _) in found.items():
            assert held >= 0.93, (name, n, held)  # never too sure
            if name in SPREAD or n >= 20:
                assert held <= 0.97, (name, n, held)


def test_the_paired_difference_covers_93_to_97_percent() -> None:
    check_mean(sets=2_000)


@pytest.mark.slow
def test_the_paired_difference_covers_93_to_97_percent_over_many_sets() -> None:
    print("\n| setting | n = 5 | n = 10 | n = 20 | n = 50 |")
    check_mean(sets=20_000, report=True)


def length_population(shift: float, spread: float, seed: int) -> tuple[np.ndarray, ...]:
    """400,000 pairs where longer answers score higher and B's answers run longer: A's lengths, B's, A's headlines,
    B's, and which pairs are of similar length (within 20 %, as the length check reads it)."""
    rng = np.random.default_rng(seed)
    size = 400_000
    length_a = np.exp(rng.normal(5.5, 0.5, size)).astype(int) + 1
    length_b = (length_a * np.exp(rng.normal(0.15, 0.3, size))).astype(int) + 1
    a = np.clip(40 + 15 * np.log(length_a / 250) + rng.normal(0, spread, size), 0, 100)
    b = np.clip(40 + shift + 15 * np.log(length_b / 250) + rng.normal(0, spread, size), 0, 100)
    return length_a, length_b, a, b, np.abs(length_a - length_b) / np.maximum(length_a, length_b) < 0.2


def graded_sides(chosen: np.ndarray, population: tuple[np.ndarray, ...]) -> tuple[list[Graded], list[Graded]]:
    """The chosen pairs as A's and B's graded answers, each answer as long as the population says."""
    length_a, length_b, a, b, _ = population
    return ([Graded(int(i), "eth", f"q{i}", "r", "x" * int(length_a[i]), float(a[i]), None, None, "A")
             for i in chosen],
            [Graded(int(i), "eth", f"q{i}", "r", "y" * int(length_b[i]), float(b[i]), None, None, "B")
             for i in chosen])


def length_coverage(shift: float, spread: float, n: int, sets: int, seed: int, whole: bool) -> float:
    """How often the length check's interval (the paired difference over the pairs of similar length) holds the true
    difference among such pairs, over sets of n pairs of similar length: the interval of those n differences, or
    (`whole`) the real comparison's of sets holding n other pairs too."""
    population = length_population(shift, spread, seed)
    differences, similar = population[3] - population[2], population[4]
    true = float(differences[similar].mean())
    rng = np.random.default_rng(seed + 1)
    alike, unlike = np.flatnonzero(similar), np.flatnonzero(~similar)
    held = shown = 0
    for _ in range(sets):
        chosen = rng.choice(alike, n, replace=False)
        if whole:
            found = compare_one("eth", *graded_sides(np.concatenate([chosen, rng.choice(unlike, n, replace=False)]),
                                                     population)).similar
            assert found is not None and found.n == n
        else:
            found = mean_interval(differences[chosen].tolist(), bounds=DIFFERENCES)
        if found is not None and found.low is not None and found.high is not None:
            shown += 1
            held += found.low <= true <= found.high
    return held / shown


LENGTHS = {"+5 beyond length (spread 15)": (5.0, 15.0), "+0 beyond length (spread 30)": (0.0, 30.0)}


def check_length(sets: int, whole: bool, report: bool = False) -> None:
    for number, (name, (shift, spread)) in enumerate(LENGTHS.items()):
        found = {n: length_coverage(shift, spread, n, sets, seed=100 * number + n, whole=whole) for n in SIZES}
        if report:
            print(f"| length check, {name} | " + " | ".join(f"{held:.1%}" for held in found.values()) + " |")
        for n, held in found.items():
            assert 0.93 <= held <= 0.97, (name, n, held)


def test_the_length_check_covers_93_to_97_percent() -> None:
    check_length(sets=3_000, whole=False)


def test_the_length_check_is_the_interval_of_the_pairs_of_similar_length() -> None:
    population = length_population(5.0, 15.0, seed=1)
    rng = np.random.default_rng(2)
    for n in (3, 8, 30):
        chosen = rng.choice(len(population[0]), n, replace=False)
        found = compare_one("eth", *graded_sides(chosen, population)).similar
        alike = [i for i in chosen if population[4][i]]
        expected = mean_interval([float(population[3][i] - population[2][i]) for i in sorted(alike, key=lambda i:
                                                                                                 f"q{i}")],
                                 bounds=DIFFERENCES)
        assert found == expected


@pytest.mark.slow
def test_the_length_check_covers_93_to_97_percent_through_the_comparison() -> None:
    check_length(sets=2_000, whole=True, report=True)
