"""Random sets for coverage: each draws a set of cases (or pairs, or rows) with its own true value and gives the true
value beside the interval judgebot prints for the set, through the functions the figures use. Shared by
tests/trust/test_coverage.py (which holds every interval to 93-97%) and bench/coverage.py (which prints the table of
docs/trust.md)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import binom

from bot.trust.calibration import wilson
from bot.trust.stats.bradley_terry import ranking
from bot.trust.stats.intervals import mean_interval, score_interval
from bot.trust.stats.kappa import alike, counted_kappa, kappa_interval

Interval = tuple[float, float] | None
Draw = Callable[[np.random.Generator], tuple[float, Interval]]


def coverage(draw: Draw, sets: int, seed: int) -> float:
    """The share of `sets` random sets whose interval holds the set's own true value (`draw` gives both)."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(sets):
        truth, interval = draw(rng)
        assert interval is not None
        held += interval[0] <= truth <= interval[1]
    return held / sets


def exact_wilson(n: int, agreement: float) -> float:
    """The chance that Wilson's interval of n cases holds `agreement`: every outcome's chance, summed."""
    return sum(binom.pmf(agreed, n, agreement) for agreed in range(n + 1)
               if (interval := wilson(agreed, n)) is not None and interval[0] <= agreement <= interval[1])


def several_labels(n: int, labels: int | None, right: float | None = None, noise: float | None = None) -> Draw:
    """Cases labeled by `labels` people each (None: 1 to 3): the judge is right on a case with chance `right`, and
    each person says the opposite of the case's truth with chance `noise`, so a case's labels agree among themselves
    more than chance: they are not independent. The score is each case's share of agreeing labels."""
    def draw(rng: np.random.Generator) -> tuple[float, Interval]:
        judge_right = rng.uniform(0.5, 0.95) if right is None else right
        person_wrong = rng.uniform(0.02, 0.25) if noise is None else noise
        counts = np.full(n, labels) if labels else rng.integers(1, 4, size=n)
        agree_each = np.where(rng.random(n) < judge_right, 1 - person_wrong, person_wrong)
        shares = rng.binomial(counts, agree_each) / counts
        truth = judge_right * (1 - person_wrong) + (1 - judge_right) * person_wrong
        return truth, score_interval(shares.tolist())
    return draw


def kappa_set(table: np.ndarray, n: int, labels: int = 1, scale: Sequence[int] | None = None) -> Draw:
    """Cases whose (judge, human) classes are drawn from `table` (judge in rows); with `labels` > 1, each case's
    people share its true class and each one flips it with chance 0.1 (binary classes only)."""
    size = table.shape[0]
    truth_table = table @ np.array([[0.9, 0.1], [0.1, 0.9]]) if labels > 1 else table  # one label's population
    truth = counted_kappa({(i, j): float(truth_table[i, j]) for i in range(size) for j in range(size)}, scale)
    assert truth is not None

    def draw(rng: np.random.Generator) -> tuple[float, Interval]:
        while True:  # a set where a side used one class only prints "n/a": no interval to hold, drawn again
            cases = []
            for cell in rng.choice(table.size, size=n, p=table.ravel()):
                judge, human = divmod(int(cell), size)
                flips = rng.random(labels) < 0.1 if labels > 1 else np.zeros(1, dtype=bool)
                cases.append(Counter((judge, 1 - human if flip else human) for flip in flips))
            interval = kappa_interval(alike(cases), scale)
            if interval is not None:
                return truth, interval
    return draw


def binary(kappa: float, passes: float) -> np.ndarray:
    """The (judge, human) table of two raters who pass at rate `passes` each, with Cohen's kappa `kappa`."""
    both = passes * passes + kappa * passes * (1 - passes)
    apart = passes * (1 - passes) * (1 - kappa)
    return np.array([[both, apart], [apart, 1 - both - 2 * apart]])


TAGS = np.array([[0.30, 0.04, 0.02, 0.02], [0.05, 0.20, 0.02, 0.01], [0.01, 0.02, 0.15, 0.01],
                 [0.03, 0.02, 0.01, 0.09]])
SCORES = np.array([[0.20, 0.05, 0.02], [0.05, 0.25, 0.05], [0.02, 0.06, 0.30]])
KAPPAS: dict[str, Callable[[int], Draw]] = {  # how kappa's sets are drawn, at n cases
    "pass/fail, kappa 0.2": lambda n: kappa_set(binary(0.2, 0.5), n),
    "pass/fail, kappa 0.5": lambda n: kappa_set(binary(0.5, 0.5), n),
    "pass/fail, kappa 0.8": lambda n: kappa_set(binary(0.8, 0.5), n),
    "pass/fail, kappa 0.6, passing at 20%": lambda n: kappa_set(binary(0.6, 0.2), n),
    "four tags": lambda n: kappa_set(TAGS / TAGS.sum(), n),
    "a 0-2 scale, linear weights": lambda n: kappa_set(SCORES / SCORES.sum(), n, scale=[0, 1, 2]),
    "pass/fail, three labels a case": lambda n: kappa_set(binary(0.6, 0.5), n, labels=3)}


def win_rates(n: int, wins: float | None = None, ties: float | None = None) -> Draw:
    def draw(rng: np.random.Generator) -> tuple[float, Interval]:
        tied = rng.uniform(0.0, 0.5) if ties is None else ties
        won = rng.uniform(0.1, 0.9) * (1 - tied) if wins is None else wins
        outcome = rng.random(n)
        scores = np.where(outcome < won, 1.0, np.where(outcome < won + tied, 0.5, 0.0))
        return won + tied / 2, score_interval(scores.tolist())
    return draw


def shifts(n: int) -> Draw:
    moves = np.array([-50.0, -25.0, 0.0, 25.0, 50.0, 75.0])  # headlines move in steps, more often one way

    def draw(rng: np.random.Generator) -> tuple[float, Interval]:
        weights = rng.dirichlet(np.ones(len(moves)) * 2)
        while True:
            values = rng.choice(moves, size=n, p=weights)
            if len(set(values.tolist())) > 1:  # every shift alike prints no interval
                # The interval itself at every size: under MEAN_MIN_VALUES judgebot prints none, and the bench
                # measures why (its table marks those sizes).
                found = mean_interval(values.tolist())
                return float(weights @ moves), None if found is None else found.interval
    return draw


def bradley_terry(per: int, spread: float, ties: float) -> Draw:
    """Ratings 1000 + spread, 1000 and 1000 - spread; a pair is a tie with chance `ties`, else won as the model
    says. The true ratings are those the model gives with ties counted half (what the fit estimates)."""
    theta = np.array([spread, 0.0, -spread]) * math.log(10) / 400
    names = ["a", "b", "c"]
    matchups = [(0, 1), (0, 2), (1, 2)]
    beats = {(a, b): 1 / (1 + math.exp(theta[a] - theta[b])) for a, b in matchups}  # the chance b wins
    population = [(names[a], names[b], (1 - ties) * beats[a, b] + ties / 2) for a, b in matchups] * 20_000
    truth = {item.model: item.rating for item in ranking(population)}  # the virtual tie weighs nothing there

    def draw(rng: np.random.Generator) -> tuple[float, Interval]:
        games = [(names[a], names[b], 0.5 if rng.random() < ties else float(rng.random() < beats[a, b]))
                 for a, b in matchups for _ in range(per)]
        item = ranking(games)[int(rng.integers(0, 3))]  # one model's interval a set
        return truth[item.model], item.interval
    return draw
