"""The figures of pairwise judging on fixed data: pair outcomes, consistency and the position bias over pairs, win
rates with their Wilson-type interval, and the Bradley-Terry ratings checked against a maximum of the same likelihood
found here by plain gradient ascent, their interval against statsmodels' robust logistic regression."""

from __future__ import annotations

import math

import numpy as np

from bot.trust.pairwise import JudgedPair, Shown, report
from bot.trust.pairwise_texts import position_text, win_rate_text
from bot.trust.stats.bradley_terry import BT_PRIOR, RATING_MIN_PAIRS, ranking
from bot.trust.stats.mcnemar import sign_test_p


def pair(a: str, b: str, *winners: tuple[bool, str | None], line: int = 1) -> JudgedPair:
    """A pair of models a and b, with one judgment per (swapped, winner as named by the judge)."""
    return JudgedPair(line, f"q{line}", a, b, tuple(Shown(swapped, winner) for swapped, winner in winners))


def test_a_pair_is_consistent_when_both_orders_name_the_same_answer() -> None:
    same = pair("x", "y", (False, "B"), (True, "A"))  # B wins as shown first and as shown second
    assert same.consistent is True and same.outcome == "B"
    changed = pair("x", "y", (False, "A"), (True, "A"))  # the first position wins both times
    assert changed.consistent is False and changed.outcome == "tie"
    half = pair("x", "y", (False, "B"), (True, None))  # one order errored: judged, consistency unknown
    assert half.consistent is None and half.outcome == "B" and not half.both
    nothing = pair("x", "y", (False, None), (True, None))
    assert nothing.outcome is None and not nothing.judged


def test_the_report_counts_positions_and_orients_every_matchup_as_first_given() -> None:
    pairs = [pair("x", "y", (False, "B"), (True, "A"), line=1),
             pair("y", "x", (False, "A"), (True, "B"), line=2),  # the other way round: y (A here) won
             pair("x", "y", (False, "A"), (True, "A"), line=3),
             pair("x", "y", (False, "tie"), (True, "tie"), line=4)]
    found = report(pairs)
    assert (found.pairs, found.judged, found.both, found.consistent) == (4, 4, 4, 3)
    assert [p.line for p in found.inconsistent] == [3]
    assert found.shown_first == {"A": 4, "B": 2, "tie": 2}
    # the position test counts pairs: only pair 3 went to one position (the first) in both orders
    assert found.first_rate == 4 / 6 and found.positions == {"first": 1} and found.first_p == 1.0
    assert found.position_bias is None
    [match] = found.matchups
    assert (match.a, match.b, match.wins, match.losses, match.ties, match.inconsistent) == ("x", "y", 2, 0, 2, 1)
    assert match.win_rate == 0.75
    assert found.ranking == []  # two models: the win rate says it all


def test_position_bias_is_a_sign_test_over_the_pairs_whose_two_orders_disagree() -> None:
    # 30 pairs seen in both orders: 6 went to the answer shown first both times, 24 to y whichever order
    pairs = ([pair("x", "y", (False, "A"), (True, "A"), line=n) for n in range(6)]
             + [pair("x", "y", (False, "B"), (True, "A"), line=n) for n in range(6, 30)])
    found = report(pairs)
    assert found.positions == {"first": 6} and found.first_p == 2 / 2**6  # scipy.stats.binomtest(6, 6): 0.03125
    assert found.position_bias == "first"
    assert position_text(found).startswith("the first answer won in both orders in 6 pairs, the second in 0, of 30 "
                                           "pairs judged in both orders (sign test p = 0.031): position bias toward "
                                           "the first answer; the first answer was picked in 60% of 60 judgments")
    # over judgments (36 firsts against 24 seconds) the same pairs would read p = 0.155: six pairs, not 60 judgments
    assert math.isclose(sign_test_p(36, 24) or 0, 0.1550019040032606)
    once = report([pair("x", "y", (n % 2 == 1, "A"), line=n) for n in range(8)], swapped=False)
    assert once.positions == {"first": 8} and once.first_p == 2 / 2**8  # judged once: each pair is one judgment
    assert position_text(once).startswith("the first answer won 8 of the 8 pairs whose one judgment named a winner")


def test_a_win_rate_has_an_interval_where_three_wins_or_twelve_ties_leave_room() -> None:
    [sweep] = report([pair("x", "y", (False, "B"), (True, "A"), line=n) for n in range(3)]).matchups
    # Wilson's interval of 3 of 3, statsmodels.stats.proportion.proportion_confint(3, 3, method="wilson")
    assert sweep.interval is not None and sweep.interval[1] == 1.0
    assert math.isclose(sweep.interval[0], 0.4385029682449544)
    assert win_rate_text(sweep) == "y over x: 100% (95% CI 44%-100%) of 3 pairs; won 3, lost 0, tied 0; sign test p = 0.25"
    [ties] = report([pair("x", "y", (False, "tie"), (True, "tie"), line=n) for n in range(12)]).matchups
    # twelve ties: the variance under p is p(1 - p) less the ties' spread 12 * 0.25 / 13, not zero
    assert ties.win_rate == 0.5 and ties.interval is not None
    assert win_rate_text(ties) == "y over x: 50% (95% CI 43%-57%) of 12 pairs; won 0, lost 0, tied 12"


def _gradient_ascent(names: list[str], games: list[tuple[str, str, float]]) -> dict[str, float]:
    """Log-strengths maximising the Bradley-Terry likelihood with the same virtual tie, by plain gradient ascent."""
    size = len(names)
    index = {name: i for i, name in enumerate(names)}
    wins = np.full((size, size), BT_PRIOR / 2) * (1 - np.eye(size))
    for a, b, score_of_b in games:
        wins[index[b], index[a]] += score_of_b
        wins[index[a], index[b]] += 1 - score_of_b
    theta = np.zeros(size)
    for _ in range(50_000):
        p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))  # chance i beats j
        gradient = (wins - (wins + wins.T) * p).sum(axis=1)
        theta += 0.05 * gradient
        theta -= theta.mean()
    return {name: float(theta[i]) for name, i in index.items()}


def test_bradley_terry_ratings_are_the_maximum_likelihood_with_the_virtual_tie() -> None:
    plan = ([("silver", "gold", "B")] * 5 + [("gold", "silver", "A")] + [("bronze", "gold", "B")] * 4
            + [("bronze", "gold", "A")] + [("bronze", "silver", "B")] * 3 + [("bronze", "silver", "tie")])
    games = [(a, b, {"A": 0.0, "tie": 0.5, "B": 1.0}[w]) for a, b, w in plan]
    rated = ranking(games)
    assert [item.model for item in rated] == ["gold", "silver", "bronze"]
    expected = _gradient_ascent(["bronze", "gold", "silver"], games)
    for item in rated:
        assert math.isclose(item.rating, 1000 + 400 * expected[item.model] / math.log(10), abs_tol=0.01)
        assert item.interval is None  # 4 to 6 pairs a matchup: under RATING_MIN_PAIRS, no interval held coverage
    gold = rated[0]
    assert gold.pairs == 11 and gold.wins == 10  # 5 + 1 against silver, 4 of 5 against bronze


def test_bradley_terry_intervals_are_statsmodels_robust_logistic_regression() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    strength = {"a": 0.6, "b": 0.0, "c": -0.6}
    games = []
    for a, b in (("a", "b"), ("a", "c"), ("b", "c")):
        for _ in range(300):  # many pairs: the virtual tie weighs next to nothing
            tie, won = rng.random() < 0.2, rng.random() < 1 / (1 + math.exp(strength[a] - strength[b]))
            games.append((a, b, 0.5 if tie else float(won)))
    rated = {item.model: item for item in ranking(games)}
    # The same model as a logistic regression of B's score on (b's strength - a's), strengths summing to 0, with
    # the sandwich covariance (HC0)
    column = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]), "c": np.array([-1.0, -1.0])}
    design = np.array([column[b] - column[a] for a, b, _ in games])
    fit = sm.GLM(np.array([score for *_, score in games]), design, family=sm.families.Binomial()).fit(cov_type="HC0")
    params, cov = fit.params, fit.cov_params()
    theta = {"a": params[0], "b": params[1], "c": -params.sum()}
    spread = {"a": cov[0, 0], "b": cov[1, 1], "c": cov.sum()}
    for name, item in rated.items():
        assert item.interval is not None
        assert math.isclose(item.rating, 1000 + 400 * theta[name] / math.log(10), abs_tol=0.5)
        half = (item.interval[1] - item.interval[0]) / 2
        assert math.isclose(half, 1.959963984540054 * 400 / math.log(10) * math.sqrt(spread[name]), rel_tol=0.01)
    few = ranking(games[:RATING_MIN_PAIRS - 1] + games[300:])  # a and b met 19 times: neither gets an interval
    assert {item.model: item.interval is None for item in few} == {"a": True, "b": True, "c": False}


def test_people_settle_a_pair_and_the_judge_is_measured_against_them() -> None:
    from bot.trust.pairwise import people_winner

    assert people_winner(["B", "B", "A"]) == "B" and people_winner(["A", "B"]) == "tie"
    assert people_winner([]) is None and people_winner(["nonsense"]) is None
    settled = JudgedPair(1, "q", "x", "y", (Shown(False, "A"), Shown(True, "A")), human="B")  # position won, twice
    agreed = JudgedPair(2, "q", "x", "y", (Shown(False, "B"), Shown(True, "A")), human="B")
    assert settled.outcome == "B" and settled.consistent is False  # people decide; the judge stays inconsistent
    found = report([settled, agreed])
    assert (found.settled, found.labeled, found.right_first, found.right_second) == (1, 2, 1, 2)
    [match] = found.matchups
    assert (match.wins, match.inconsistent, match.win_rate) == (2, 1, 1.0)
