"""Print the coverage table of docs/trust.md: how often each interval judgebot prints holds the true value, at 5, 10,
20 and 50 cases (or pairs, or rows), over random sets drawn as tests/support/coverage.py draws them.

A set drawn with its own true value from a range ("random") says how an interval does over the values a team meets;
the fixed true values show how a discrete interval swings from one value to the next at small n. Sizes where
judgebot prints no interval (kappa and ratings under 20, the mean shift under 10) are measured too, and marked. Run
by hand, e.g.:

    python bench/coverage.py --sets 2000
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.trust.stats import bradley_terry as ratings
from bot.trust.stats import intervals, kappa
from bot.trust.stats.bradley_terry import RATING_MIN_PAIRS
from bot.trust.stats.intervals import MEAN_MIN_VALUES
from bot.trust.stats.kappa import KAPPA_MIN_CASES
from tests.support.coverage import (
    KAPPAS,
    Draw,
    bradley_terry,
    coverage,
    exact_wilson,
    several_labels,
    shifts,
    win_rates,
)

SIZES = (5, 10, 20, 50)


def row(name: str, cells: list[str]) -> str:
    return f"| {name} | " + " | ".join(cells) + " |"


@contextmanager
def every_size() -> Iterator[None]:
    """The minimum sizes lifted, to measure what an interval would cover where judgebot prints none."""
    saved = kappa.KAPPA_MIN_CASES, intervals.MEAN_MIN_VALUES, ratings.RATING_MIN_PAIRS
    kappa.KAPPA_MIN_CASES = intervals.MEAN_MIN_VALUES = ratings.RATING_MIN_PAIRS = 0
    try:
        yield
    finally:
        kappa.KAPPA_MIN_CASES, intervals.MEAN_MIN_VALUES, ratings.RATING_MIN_PAIRS = saved


def simulated(make: Callable[[int], Draw], sets: int, minimum: int = 0) -> list[str]:
    """One row of simulated coverages; sizes under `minimum` print no interval, and are shown in brackets."""
    cells = []
    for n in SIZES:
        if n < minimum:
            with every_size():
                cells.append(f"({coverage(make(n), sets, seed=n):.1%})")
        else:
            cells.append(f"{coverage(make(n), sets, seed=n):.1%}")
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=2000, help="random sets per cell")
    sets = parser.parse_args().sets
    print(row("interval (what the true value is)", [f"n = {n}" for n in SIZES]))
    print(row("---", ["---:"] * len(SIZES)))
    grid = np.linspace(0.5, 0.95, 200)
    print(row("agreement, one label a case (Wilson, exact): random 50%-95%",
              [f"{sum(exact_wilson(n, truth) for truth in grid) / len(grid):.1%}" for n in SIZES]))
    for truth in (0.5, 0.7, 0.8, 0.9):
        print(row(f"agreement, one label a case (Wilson, exact): {truth:.0%}",
                  [f"{exact_wilson(n, truth):.1%}" for n in SIZES]))
    print(row("agreement, 1-3 labels a case (score interval over cases): random",
              simulated(lambda n: several_labels(n, None), sets)))
    for right, noise in ((0.7, 0.1), (0.85, 0.05)):
        truth = right * (1 - noise) + (1 - right) * noise
        print(row(f"agreement, 2 labels a case: {truth:.0%}",
                  simulated(lambda n, r=right, e=noise: several_labels(n, 2, r, e), sets)))
    for name, make in KAPPAS.items():
        print(row(f"kappa, {name}", simulated(make, sets, KAPPA_MIN_CASES)))
    print(row("win rate, ties half (score interval): random, up to 50% ties", simulated(win_rates, sets)))
    for wins, ties in ((0.5, 0.0), (0.4, 0.2), (0.3, 0.5)):
        print(row(f"win rate: {wins + ties / 2:.0%} with {ties:.0%} ties",
                  simulated(lambda n, w=wins, t=ties: win_rates(n, w, t), sets)))
    print(row("mean headline shift (Student's t): random steps of 25 points",
              simulated(shifts, sets, MEAN_MIN_VALUES)))
    for spread, ties in ((100.0, 0.0), (200.0, 0.3)):
        print(row(f"Bradley-Terry rating, 3 models {spread:.0f} points apart, {ties:.0%} ties (pairs a matchup)",
                  simulated(lambda n, s=spread, t=ties: bradley_terry(n, s, t), max(sets // 2, 500),
                            RATING_MIN_PAIRS)))


if __name__ == "__main__":
    main()
