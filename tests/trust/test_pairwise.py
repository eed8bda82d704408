"""The figures of pairwise judging on fixed data: pair outcomes, consistency and position, win rates, and the
Bradley-Terry ratings checked against a maximum of the same likelihood found here by plain gradient ascent."""

from __future__ import annotations

import math

import numpy as np

from bot.trust.pairwise import BT_PRIOR, JudgedPair, Shown, ranking, report


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
    assert found.first_rate == 4 / 6 and math.isclose(found.first_p or 0, 2 * (1 + 6 + 15) / 64)
    assert found.position_bias is None
    [match] = found.matchups
    assert (match.a, match.b, match.wins, match.losses, match.ties, match.inconsistent) == ("x", "y", 2, 0, 2, 1)
    assert match.win_rate == 0.75
    assert found.ranking == []  # two models: the win rate says it all


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
    pairs = [pair(a, b, (False, winner), (True, {"A": "B", "B": "A", "tie": "tie"}[winner]), line=n)
             for n, (a, b, winner) in enumerate(plan)]
    rated = ranking(pairs)
    assert [item.model for item in rated] == ["gold", "silver", "bronze"]
    expected = _gradient_ascent(["bronze", "gold", "silver"],
                                [(a, b, {"A": 0.0, "tie": 0.5, "B": 1.0}[w]) for a, b, w in plan])
    for item in rated:
        assert math.isclose(item.rating, 1000 + 400 * expected[item.model] / math.log(10), abs_tol=0.01)
        assert item.interval is not None and item.interval[0] <= item.rating <= item.interval[1]
    gold = rated[0]
    assert gold.pairs == 11 and gold.wins == 10  # 5 + 1 against silver, 4 of 5 against bronze
    # seeded: the same pairs give the same intervals
    assert [item.interval for item in ranking(pairs)] == [item.interval for item in rated]


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
