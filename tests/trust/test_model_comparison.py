"""bot.trust.model_comparison and bot.trust.stats.intervals against scipy and statsmodels on random data: the t
quantile, the paired t interval, the sign test, McNemar, Pearson's r; and the comparison's rules: mirror images when
A and B swap, rubrics never pooled, each question once, a judge's failure never taken for an answer missing."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from bot.records import RowState
from bot.trust.model_comparison import (
    DIFFERENCES,
    Graded,
    ModelComparison,
    compare,
    compare_one,
    judges_text,
    summary_text,
    warnings,
)
from bot.trust.stats.intervals import mean_interval, t_quantile
from bot.trust.stats.mcnemar import sign_test_p

TAGS = ("Correct", "Generic", "Refusal")


def test_the_t_quantile_is_scipys() -> None:
    for df in [*range(1, 121), 200, 500, 1_000, 10_000, 1_000_000]:
        for p in (0.6, 0.9, 0.95, 0.975, 0.995, 0.9995):
            assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-8), (p, df)
    with pytest.raises(ValueError):
        t_quantile(0.4, 3)


def test_the_paired_t_interval_is_scipys_on_random_data() -> None:
    rng = np.random.default_rng(42)
    for trial in range(300):
        n = int(rng.integers(2, 80))
        a = rng.choice([0.0, 25.0, 100.0], n) if trial % 2 else rng.uniform(0, 100, n).round(1)
        b = np.clip(a + rng.normal(rng.uniform(-20, 20), rng.uniform(1, 40), n), 0, 100).round(1)
        if len(set(b - a)) == 1:
            continue
        expected = stats.ttest_rel(b, a).confidence_interval(0.95)
        found = mean_interval(list(b - a))
        assert found is not None and found.n == n
        assert found.mean == pytest.approx(float(np.mean(b - a)), abs=1e-9)
        assert (found.low, found.high) == (pytest.approx(expected.low, abs=1e-8), pytest.approx(expected.high, abs=1e-8))
        held = mean_interval(list(b - a), bounds=DIFFERENCES)
        assert held is not None and held.interval == (pytest.approx(max(expected.low, -100), abs=1e-8),
                                                      pytest.approx(min(expected.high, 100), abs=1e-8))


def test_no_interval_from_one_pair_or_pairs_that_all_differ_alike() -> None:
    assert mean_interval([]) is None
    one = mean_interval([40.0])
    assert one is not None and one.interval is None
    assert one.text() == "+40.0 (no interval from one question: no spread to estimate one from)"
    alike = mean_interval([100.0, 100.0, 100.0])
    assert alike is not None and alike.interval is None and alike.mean == 100.0
    assert alike.text("pairs") == ("+100.0 (no interval: the difference is +100.0 on each of the 3 pairs, no spread "
                                   "to estimate one from)")


def test_the_sign_test_is_scipys_binomial() -> None:
    for wins in range(41):
        for losses in range(41 - wins):
            found = sign_test_p(wins, losses)
            if wins + losses == 0:
                assert found is None
            else:
                assert found == pytest.approx(stats.binomtest(wins, wins + losses).pvalue, rel=1e-12)


def graded(n: int, side: str, rng: random.Random, rubric: str = "eth", judge: str = "judge-a",
           failures: float = 0.0) -> list[Graded]:
    """Answers of one side to questions q0..q(n-1), each scored with a random eth tag, or a judge's failure."""
    rows = []
    for question in range(n):
        if rng.random() < failures:
            status = rng.choice([RowState.INVALID, RowState.ERROR])
            rows.append(Graded(rng.randrange(10**6), rubric, f"q{question}", "ref", f"{side} {question}", None, None,
                               None, side, status, judge, "1.0", "h"))
            continue
        tag = rng.choice(TAGS)
        headline = {"Correct": 100.0, "Generic": 25.0, "Refusal": 0.0}[tag]
        answer = f"{side} " + "x" * rng.randrange(1, 400)
        rows.append(Graded(rng.randrange(10**6), rubric, f"q{question}", "ref", answer, headline, tag == "Correct",
                           tag, side, RowState.SCORED, judge, "1.0", "h"))
    return rows


def test_the_figures_of_a_comparison_are_the_reference_packages() -> None:
    rng = random.Random(3)
    for _ in range(60):
        a_rows, b_rows = graded(rng.randrange(3, 60), "A", rng), graded(rng.randrange(3, 60), "B", rng)
        [found] = compare(a_rows, b_rows)
        a = np.array([pair.a.headline for pair in found.pairs])
        b = np.array([pair.b.headline for pair in found.pairs])
        assert found.mean_a == pytest.approx(a.mean()) and found.mean_b == pytest.approx(b.mean())
        assert found.difference is not None and found.difference.mean == pytest.approx((b - a).mean())
        if found.difference.interval is not None:
            expected = stats.ttest_rel(b, a).confidence_interval(0.95)
            assert found.difference.interval == (pytest.approx(max(expected.low, -100)),
                                                 pytest.approx(min(expected.high, 100)))
        passes = np.array([[pair.a.passed, pair.b.passed] for pair in found.pairs])
        table = [[int(np.sum(passes[:, 0] & passes[:, 1])), int(np.sum(passes[:, 0] & ~passes[:, 1]))],
                 [int(np.sum(~passes[:, 0] & passes[:, 1])), int(np.sum(~passes[:, 0] & ~passes[:, 1]))]]
        discordant = table[0][1] + table[1][0]
        if discordant:
            reference = mcnemar(table, exact=True).pvalue  # the exact conditional test at every size
            assert found.mcnemar == pytest.approx(reference, rel=1e-9)
        lengths = [len(pair.a.answer) for pair in found.pairs]
        if found.length_r_a is not None:
            assert found.length_r_a == pytest.approx(stats.pearsonr(lengths, a).statistic)


def mirrored(forward: ModelComparison, backward: ModelComparison) -> None:
    """Every figure of B against A is the mirror image of A against B."""
    assert forward.difference is not None and backward.difference is not None
    assert backward.difference.mean == -forward.difference.mean
    if forward.difference.interval is None:
        assert backward.difference.interval is None
    else:
        assert backward.difference.interval == (-forward.difference.interval[1], -forward.difference.interval[0])
    assert (backward.wins, backward.ties, backward.losses) == (forward.losses, forward.ties, forward.wins)
    assert (backward.sign_p, backward.mcnemar) == (forward.sign_p, forward.mcnemar)
    assert (backward.a_only_passed, backward.b_only_passed) == (forward.b_only_passed, forward.a_only_passed)
    assert backward.transitions == {(after, before): n for (before, after), n in forward.transitions.items()}
    assert [(p.b, p.a) for p in backward.regressions] == [(p.a, p.b) for p in forward.improvements]
    assert [(p.b, p.a) for p in backward.improvements] == [(p.a, p.b) for p in forward.regressions]
    if forward.similar is None:
        assert backward.similar is None
    else:
        assert backward.similar is not None and backward.similar.mean == -forward.similar.mean
        assert backward.similar.interval == (None if forward.similar.interval is None else
                                             (-forward.similar.interval[1], -forward.similar.interval[0]))
    assert (backward.length_r_a, backward.length_r_b) == (forward.length_r_b, forward.length_r_a)
    assert (backward.only_a, backward.only_b) == (forward.only_b, forward.only_a)
    assert (backward.unscored_a, backward.unscored_b) == (forward.unscored_b, forward.unscored_a)
    assert (backward.judges_a, backward.judges_b) == (forward.judges_b, forward.judges_a)


def test_swapping_a_and_b_gives_mirror_images_whatever_the_order_of_rows() -> None:
    rng = random.Random(11)
    for _ in range(80):
        a_rows = graded(rng.randrange(2, 40), "A", rng, failures=0.1)
        b_rows = graded(rng.randrange(2, 40), "B", rng, judge=rng.choice(["judge-a", "judge-b"]), failures=0.1)
        [forward] = compare(a_rows, b_rows)
        [backward] = compare(rng.sample(b_rows, len(b_rows)), rng.sample(a_rows, len(a_rows)))
        if forward.pairs:
            mirrored(forward, backward)


def test_rubrics_are_never_pooled_and_each_question_counts_once() -> None:
    rng = random.Random(5)
    a_rows = graded(10, "A", rng) + graded(10, "A", rng, rubric="academic")
    b_rows = graded(10, "B", rng) + graded(6, "B", rng, rubric="academic")
    academic, eth = compare(a_rows, b_rows)
    assert (academic.rubric, len(academic.pairs), len(academic.only_a)) == ("academic", 6, 4)
    assert (eth.rubric, len(eth.pairs), eth.only_a, eth.only_b) == ("eth", 10, [], [])
    assert all(pair.a.rubric == pair.b.rubric == "eth" for pair in eth.pairs)

    again = [Graded(row.judgment_id + 10**7, row.rubric, f"  {row.question} ", row.reference, row.answer + " again",
                    100.0, True, "Correct", "A") for row in a_rows if row.rubric == "eth"]
    [latest] = compare([*a_rows[:10], *again], b_rows[:10])  # answered twice: the latest scored answer counts
    assert (len(latest.pairs), latest.repeated_a) == (10, 10)
    assert all(pair.a.headline == 100.0 for pair in latest.pairs)


def test_a_judges_failure_is_not_scored_never_unanswered_and_never_replaces_a_score() -> None:
    def row(id_: int, question: str, side: str, status: str = RowState.SCORED, headline: float | None = 50.0,
            judge: str = "judge-a") -> Graded:
        return Graded(id_, "eth", question, "r", f"{side} on {question}", headline, None, None, side, status, judge)

    a_rows = [row(1, "q1", "A"), row(2, "q2", "A", RowState.INVALID, None), row(3, "q3", "A", RowState.ERROR, None),
              row(4, "q4", "A"), row(9, "q4", "A", RowState.ERROR, None)]  # q4: a failure after a score
    b_rows = [row(5, "q1", "B", headline=75.0, judge="judge-b"), row(6, "q2", "B"), row(7, "q3", "B"),
              row(8, "q4", "B"), row(10, "q5", "B")]
    found = compare_one("eth", a_rows, b_rows)
    assert [pair.a.question for pair in found.pairs] == ["q1", "q4"]
    assert [r.question for r in found.unscored_a] == ["q2", "q3"] and found.unscored_b == []
    assert found.only_a == [] and [r.question for r in found.only_b] == ["q5"]
    assert found.other_judge == 1 and (found.judges_a, found.judges_b) == ({"judge-a": 2}, {"judge-a": 1, "judge-b": 1})
    text = summary_text("A", "B", found)
    assert text.endswith("left out: 1 answered by B only, 2 not scored for A (invalid: 1, error: 1)")


def test_p_values_are_never_printed_as_zero() -> None:
    rng = random.Random(8)
    a_rows = [Graded(n, "eth", f"q{n}", "r", "a", 0.0, False, "Refusal", "A") for n in range(40)]
    b_rows = [Graded(100 + n, "eth", f"q{n}", "r", "b" * rng.randrange(1, 3), 100.0, True, "Correct", "B")
              for n in range(40)]
    [found] = compare(a_rows, b_rows)
    assert found.sign_p is not None and found.sign_p == pytest.approx(2 / 2**40)
    text = summary_text("A", "B", found)
    assert "p < 0.001" in text and "0.00)" not in text and "= 0.0" not in text
    assert not math.isnan(found.mcnemar or math.nan)


def test_versions_of_the_rubric_and_judges_are_named_where_the_sides_differ() -> None:
    def row(id_: int, side: str, judge: str, version: str, text: str) -> Graded:
        return Graded(id_, "eth", f"q{id_ % 10}", "r", f"{side} {id_}", 50.0 + id_ % 10, None, None, side,
                      RowState.SCORED, judge, version, text)

    a_rows = [row(n, "A", "judge-a", "1.0", "aaaaaaa1") for n in range(4)]
    b_rows = [row(10 + n, "B", "judge-a" if n < 2 else "judge-b", "1.0", "bbbbbbb2" if n else "aaaaaaa1")
              for n in range(4)]
    found = compare_one("eth", a_rows, b_rows)
    assert judges_text("A", "B", found) == "judged by: A judge-a (4); B judge-a (2), judge-b (2)"
    assert warnings("A", "B", found) == [
        "on 2 of the 4 pairs the two answers were judged by different judges: part of the difference may be the "
        "judges', not the models'",
        "on 3 of the 4 pairs the two answers were graded with different versions of rubric eth (A: version 1.0 "
        "(aaaaaaa) on 4; B: version 1.0 (bbbbbbb) on 3, version 1.0 (aaaaaaa) on 1): part of the difference may be "
        "the rubric's, not the models'"]
    same = compare_one("eth", a_rows, [row(10 + n, "B", "judge-a", "1.0", "aaaaaaa1") for n in range(4)])
    assert judges_text("A", "B", same) == "judged by judge-a on both sides" and warnings("A", "B", same) == []
