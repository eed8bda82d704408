"""Every statistic of calibration held to a reference implementation: on random data against statsmodels and scipy
(test extras; judgebot never imports them), and on fixed data against literals computed once with scikit-learn 1.9.1
and krippendorff. Each figure is held to the function that makes it, so the coverage of those functions
(tests/trust/test_coverage.py) is the coverage of the figures."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from bot.trust.calibration import Agreement, LabeledVerdict, by_case, calibrate, wilson
from bot.trust.calibration_texts import agreement_text, gap_text, pass_rates_text
from bot.trust.stats.alpha import AlphaTally, krippendorff_alpha
from bot.trust.stats.intervals import kappa_from_agreement, mean_interval, score_interval, t_quantile
from bot.trust.stats.kappa import Kappa, alike, case_weighted, counted_kappa
from bot.trust.stats.mcnemar import by_chance, mcnemar_p, p_text, shown_p, sign_test_p

# Linear weighted kappa on eth's 0-2 scale, 30 labels (judge, person): as a table, judge in rows,
# [[5, 2, 0], [3, 5, 2], [3, 3, 7]]
JUDGE = [2] * 10 + [1] * 8 + [0] * 6 + [2] * 3 + [1] * 2 + [0] * 1
HUMAN = [2] * 7 + [1] * 3 + [1] * 5 + [0] * 3 + [0] * 5 + [1] * 1 + [0] * 3 + [2] * 2 + [1] * 1
MONDAY = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)
RNG_SEED = 20261116


def label(**fields) -> LabeledVerdict:
    return LabeledVerdict(**{"labeled_at": MONDAY, "judge_model": "judge-a", "rubric_hash": "h1", **fields})


def random_table(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    return rng.multinomial(n, rng.dirichlet(np.ones(size * size))).reshape(size, size)


# --- kappa ---------------------------------------------------------------------------------------------------------

def test_linear_weighted_kappa_is_sklearns() -> None:
    counts = Counter(zip(JUDGE, HUMAN))
    # sklearn.metrics.cohen_kappa_score(JUDGE, HUMAN, weights="linear", labels=[0, 1, 2]) = 0.40886699507389157
    assert counted_kappa(counts, [0, 1, 2]) == pytest.approx(0.40886699507389157)
    # unweighted, cohen_kappa_score(JUDGE, HUMAN, labels=[0, 1, 2]) = 0.3564356435643564
    assert counted_kappa(counts) == pytest.approx(0.3564356435643564)
    # A 1-5 scale on which nobody used 2: the weights follow the values, not the classes seen.
    # cohen_kappa_score(..., weights="linear", labels=[1, 2, 3, 4, 5]) = 0.631578947368421
    judge = [5, 5, 4, 4, 3, 3, 1, 1, 5, 4, 3, 1, 5, 4]
    human = [5, 4, 4, 3, 3, 1, 1, 3, 5, 5, 3, 1, 4, 4]
    assert counted_kappa(Counter(zip(judge, human)), [1, 2, 3, 4, 5]) == pytest.approx(0.631578947368421)


def test_kappa_plain_and_weighted_is_statsmodels_on_random_tables() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(200):
        size = int(rng.integers(2, 6))
        table = random_table(rng, size, int(rng.integers(10, 200)))
        if (table.sum(axis=1) > 0).sum() < 2 or (table.sum(axis=0) > 0).sum() < 2:
            continue  # one class on a side: undefined, said so (tests/trust/test_calibration.py)
        counts = {(i, j): int(table[i, j]) for i in range(size) for j in range(size)}
        assert counted_kappa(counts) == pytest.approx(cohens_kappa(table).kappa)
        assert counted_kappa(counts, list(range(size))) == pytest.approx(cohens_kappa(table, wt="linear").kappa)


def test_kappa_over_cases_weighs_each_case_once() -> None:
    rng = np.random.default_rng(RNG_SEED + 1)
    for _ in range(50):  # cases of 1 to 3 labels of three classes: the table of each case's shares is the reference's
        cases = [Counter((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(int(rng.integers(1, 4))))
                 for _ in range(30)]
        shares = np.zeros((3, 3))
        for counts in cases:
            for (judge, human), count in counts.items():
                shares[judge, human] += count / sum(counts.values())
        assert case_weighted(alike(cases)) == pytest.approx({(i, j): shares[i, j] for i in range(3) for j in range(3)
                                                      if shares[i, j]})
        found = Kappa.of(cases)
        assert found.value == pytest.approx(cohens_kappa(shares).kappa)
        assert (found.n, found.cases) == (sum(sum(counts.values()) for counts in cases), 30)
        # its interval: the score interval of each case's agreement, chance-corrected with the same margins
        agreed = score_interval([counts[(0, 0)] / sum(counts.values()) + counts[(1, 1)] / sum(counts.values())
                                 + counts[(2, 2)] / sum(counts.values()) for counts in cases])
        assert agreed is not None
        chance = float(shares.sum(axis=1) @ shares.sum(axis=0)) / 30 / 30
        assert found.interval == pytest.approx(kappa_from_agreement(agreed, chance))
        assert found.interval is not None and found.interval[0] <= found.value <= found.interval[1]


def test_kappa_has_no_interval_where_none_holds_and_says_to_between_negative_bounds() -> None:
    two = Kappa.counted({(True, True): 1, (False, False): 1}, names={True: "pass", False: "fail"})
    assert two.value == 1.0 and two.interval is None  # not "1.00, 95% CI 1.00-1.00"
    assert two.text() == "1.00 (no interval under 20 cases); few labeled cases (n = 2)"
    opposed = Kappa.counted({(True, False): 12, (False, True): 12})
    assert opposed.value == -1.0 and opposed.interval is not None
    low, high = opposed.interval
    assert low == -1.0 and high < 0
    assert opposed.text().startswith(f"-1.00, 95% CI -1.00 to {high:.2f}: poor")  # not "-1.00--1.00"


# --- McNemar, the sign test, and how p reads ------------------------------------------------------------------------

def test_mcnemar_is_statsmodels_exact_test_at_every_size() -> None:
    rng = np.random.default_rng(RNG_SEED + 2)
    for _ in range(300):
        judge_only, human_only = (int(value) for value in rng.integers(0, 80, size=2))
        reference = mcnemar([[10, judge_only], [human_only, 10]], exact=True).pvalue
        assert mcnemar_p(judge_only, human_only) == pytest.approx(reference, rel=1e-9, abs=1e-300)
        if judge_only + human_only:
            assert sign_test_p(judge_only, human_only) == pytest.approx(
                stats.binomtest(judge_only, judge_only + human_only).pvalue, rel=1e-9, abs=1e-300)
    assert sign_test_p(0, 0) is None and mcnemar_p(0, 0) == 1.0
    # past 5,000 cases the tail is summed in logarithms: still scipy's
    assert sign_test_p(2900, 3100) == pytest.approx(stats.binomtest(2900, 6000).pvalue, rel=1e-9)


def test_mcnemar_counts_cases_and_one_more_label_never_changes_its_method() -> None:
    # 4 cases the judge passes and people fail; one of them labeled by three people: 4 cases, p = 2 / 2^4
    cases = [f"c{n}" for n in range(4)]
    labels = [label(case=case, judge_passed=True, human_passed=False) for case in cases]
    one_each = calibrate(labels)
    three_on_one = calibrate(labels + [label(case="c0", judge_passed=True, human_passed=False)] * 2)
    assert one_each.mcnemar_p == three_on_one.mcnemar_p == 0.125
    assert (three_on_one.judge_only, three_on_one.pass_cases, three_on_one.pass_n) == (4, 4, 6)
    # 4 cases x 3 labels: still 4 cases (as labels it would read p = 0.0005)
    assert calibrate(labels * 3).mcnemar_p == 0.125
    # 25 discordant cases, then one more label: the exact test both times, as statsmodels' exact test
    many = [label(case=f"d{n}", judge_passed=n < 8, human_passed=n >= 8) for n in range(25)]
    exact = mcnemar([[0, 8], [17, 0]], exact=True).pvalue
    assert calibrate(many).mcnemar_p == pytest.approx(exact)
    assert calibrate(many + [label(case="d0", judge_passed=True, human_passed=False)]).mcnemar_p == pytest.approx(exact)
    # people split evenly on a case: it is out of the test, and said so
    split = calibrate(labels + [label(case="c0", judge_passed=True, human_passed=True)])
    assert (split.split, split.judge_only, split.mcnemar_p) == (1, 3, 0.25)
    assert pass_rates_text(split).endswith("McNemar p = 0.25 (over cases, by people's majority; 1 split evenly, left "
                                           "out); few labeled cases (n = 4)")


@pytest.mark.parametrize(("p", "text"), [(0.0004, "p < 0.001"), (0.001, "p = 0.0010"), (0.0041, "p = 0.0041"),
                                         (0.0312, "p = 0.031"), (0.03125, "p = 0.031"), (0.125, "p = 0.12"),
                                         (0.0625, "p = 0.062"), (0.0496, "p = 0.050"), (0.0494, "p = 0.049"), (0.5, "p = 0.50"),
                                         (0.9999, "p = 1.0"), (1.0, "p = 1.0")])
def test_p_reads_with_two_significant_digits_and_never_as_zero(p: float, text: str) -> None:
    assert p_text(p) == text
    # "not by chance" is read off the p as printed: 0.0496 prints 0.050, which is not below 0.05
    assert by_chance(p) == (shown_p(p) >= 0.05)
    assert by_chance(0.0496) and not by_chance(0.0494)


def test_calibration_weights_an_ordinal_criterion_and_signs_its_difference() -> None:
    labels = [label(judge_values={"correctness": judge}, human_values={"correctness": human})
              for judge, human in zip(JUDGE, HUMAN)]
    gap = calibrate(labels, criteria=["correctness"], scales={"correctness": [0, 1, 2]}).gaps["correctness"]
    # judge's total 2*13 + 1*10 = 36, people's 2*9 + 1*10 = 28: the judge scores (36 - 28) / 30 = 0.27 higher;
    # absolute, cell by cell (judge, person): (0,1) 2, (1,0) 3, (1,2) 2, (2,0) 3*2, (2,1) 3 -> 16 / 30 = 0.53
    assert (gap.n, gap.mean_signed, gap.mean_abs) == (30, pytest.approx(8 / 30), pytest.approx(16 / 30))
    assert gap.kappa is not None and gap.kappa.value == pytest.approx(0.40886699507389157)
    # Its interval: the score interval of the labels' linear weights (1 alike, 0.5 a step apart, 0 two apart; a
    # weight spreads less than a coin, as partial credit), chance-corrected with the margins' weighted agreement
    table = np.zeros((3, 3))
    np.add.at(table, (JUDGE, HUMAN), 1)
    weights = 1 - np.abs(np.subtract.outer(np.arange(3), np.arange(3))) / 2
    chance = float(table.sum(axis=1) @ weights @ table.sum(axis=0)) / 30 / 30
    agreed = score_interval([float(weights[judge, human]) for judge, human in zip(JUDGE, HUMAN)], partial=True)
    assert agreed is not None and gap.kappa.interval == pytest.approx(kappa_from_agreement(agreed, chance))
    low, high = gap.kappa.interval
    assert gap_text(gap) == ("the judge scores 0.27 higher, mean absolute difference 0.53 (30 labels); weighted kappa "
                             f"0.41, 95% CI {low:.2f}-{high:.2f}: slight to substantial")


def test_krippendorffs_alpha_is_the_krippendorff_packages() -> None:
    missing = None
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 coders x 12 units, as units; the last
    # unit has one value only and cannot be paired. krippendorff.alpha(reliability_data=..., level_of_measurement=)
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, missing, missing, missing],
              [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, missing, 3],
              [missing, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, missing],
              [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, missing]]
    units = [list(unit) for unit in zip(*coders)]
    assert krippendorff_alpha(units, "nominal") == (pytest.approx(0.743421052631579), 11)
    assert krippendorff_alpha(units, "interval") == (pytest.approx(0.8491071428571428), 11)
    # A jury of three on twelve rows: tags (nominal; one row judged once) and headlines (interval)
    tags = [["Correct"] * 3, ["Correct", "Correct", "Generic"], ["Generic"] * 3, ["Refusal"] * 3,
            ["Correct", "Generic", "Generic"], ["Hallucination", "Hallucination", "Correct"], ["Correct"] * 3,
            ["Generic", "Generic", missing], ["Correct", missing, missing], ["Refusal", "Generic", "Refusal"],
            ["Correct"] * 3, ["Hallucination"] * 3]
    assert krippendorff_alpha(tags, "nominal") == (pytest.approx(0.6574585635359116), 11)
    heads = [[100, 100, 75], [75, 50, 50], [25, 25, 0], [0, 0, 0], [100, 50, 75], [50, 25, 25], [100, 100, 100],
             [75, 75, missing], [100, missing, missing], [0, 25, 0], [100, 75, 100], [25, 0, 25]]
    assert krippendorff_alpha(heads, "interval") == (pytest.approx(0.867237687366167), 11)
    assert krippendorff_alpha(heads, "nominal") == (pytest.approx(0.34938271604938276), 11)


def test_alpha_is_undefined_without_pairs_or_variation() -> None:
    assert krippendorff_alpha([[1], [2, None]], "nominal") == (None, 0)
    assert krippendorff_alpha([["Correct", "Correct"], ["Correct", "Correct"]], "nominal") == (None, 2)
    tally = AlphaTally("interval")
    tally.add([50.0, 50.0])
    tally.add([0.0, 100.0])
    # two units, four values: observed 2 * (2 * 10000 - 100^2) / 1 = 20000; expected 2 * (4 * 15000 - 200^2) = 40000;
    # alpha = 1 - 3 * 20000 / 40000 = -0.5
    assert tally.alpha == pytest.approx(-0.5) and tally.units == 2


# --- intervals ------------------------------------------------------------------------------------------------------

def test_the_score_interval_of_zeros_and_ones_is_statsmodels_wilson() -> None:
    rng = np.random.default_rng(RNG_SEED + 3)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        agreed = int(rng.integers(0, n + 1))
        assert wilson(agreed, n) == pytest.approx(proportion_confint(agreed, n, method="wilson"), abs=1e-12)
    assert wilson(0, 0) is None


def test_the_score_interval_with_ties_solves_its_own_score_equation() -> None:
    # (mean - p)^2 = z^2 (p (1 - p) - spread) / n at both bounds, found here by scipy's root finder
    rng = np.random.default_rng(RNG_SEED + 4)
    z = stats.norm.ppf(0.975)
    for _ in range(100):
        scores = rng.choice([0.0, 0.5, 1.0], size=int(rng.integers(3, 60)), p=rng.dirichlet([1, 1, 1])).tolist()
        n, mean = len(scores), float(np.mean(scores))
        if mean in (0.0, 1.0):
            continue
        spread = sum(score * (1 - score) for score in scores) / (n + 1)

        def gap(p: float, mean: float = mean, spread: float = spread, n: int = n) -> float:
            return (mean - p) ** 2 - z * z * (p * (1 - p) - spread) / n

        low, high = score_interval(scores)  # type: ignore[misc]
        assert low == pytest.approx(optimize.brentq(gap, 0.0, mean) if gap(0.0) > 0 else 0.0, abs=1e-9)
        assert high == pytest.approx(optimize.brentq(gap, mean, 1.0) if gap(1.0) > 0 else 1.0, abs=1e-9)


def test_students_t_is_scipys() -> None:
    rng = np.random.default_rng(RNG_SEED + 5)
    for df in (1, 2, 3, 5, 9, 19, 30, 99, 500):
        assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)
    for _ in range(50):
        values = rng.normal(5, 20, size=int(rng.integers(10, 80))).tolist()
        found = mean_interval(values)
        assert found is not None and found.mean == pytest.approx(np.mean(values))
        assert found.interval == pytest.approx(stats.t.interval(0.95, len(values) - 1, loc=np.mean(values),
                                                          scale=stats.sem(values)))


def test_agreement_weighs_each_case_once_with_the_score_interval_over_cases() -> None:
    rng = np.random.default_rng(RNG_SEED + 6)
    for _ in range(50):
        items = [(f"c{int(rng.integers(0, 25))}", bool(rng.random() < 0.7), bool(rng.random() < 0.6))
                 for _ in range(60)]
        figures = calibrate([label(case=case, judge_passed=judge, human_passed=human) for case, judge, human in items])
        cases = by_case((case, judge, human, 1) for case, judge, human in items)
        shares = [sum(count for (judge, human), count in counts.items() if judge == human) / sum(counts.values())
                  for counts in cases]
        assert figures.agreement == pytest.approx(np.mean(shares))
        assert figures.interval == pytest.approx(score_interval(shares))  # summed in another order
        assert (figures.pass_n, figures.pass_cases, figures.clustered) == (60, len(cases), True)


def test_labels_of_one_case_by_several_people_count_as_one_case() -> None:
    # 40 cases, each labeled alike by three people: 120 labels, 35 cases agreeing. The evidence is 40 cases: the
    # interval is Wilson's over 40 (statsmodels' proportion_confint(35, 40, method="wilson")), not over 120 labels.
    labels = [label(case=f"c{case}", judge_passed=True, human_passed=case < 30 or case >= 35)
              for case in range(40) for _ in range(3)]
    figures = calibrate(labels)
    assert (figures.n, figures.pass_n, figures.pass_agree, figures.pass_cases) == (120, 120, 105, 40)
    assert figures.agreement == 35 / 40
    assert figures.interval == pytest.approx(proportion_confint(35, 40, method="wilson"))
    assert agreement_text(figures) == ("88% (120 labels of 40 cases, each case weighing one), 95% CI 74%-95% (score "
                                       "interval over cases)")
    # the judge passes all: kappa undefined; McNemar over the 5 cases people failed, exact: 2 / 2^5
    assert figures.kappa_pass.value is None
    assert pass_rates_text(figures) == ("the judge passes 100%, people 88%, McNemar p = 0.062 (over cases, by "
                                        "people's majority)")
    # a second person labeling ten cases does not turn them into twenty
    ten = [label(case=f"t{n}", judge_passed=True, human_passed=True) for n in range(10)]
    assert calibrate(ten * 2).pass_cases == 10 and agreement_text(calibrate(ten * 2)).endswith(
        "few labeled cases (n = 10)")
    assert Agreement.counted(3, Counter({(True, True): 3})).pass_cases == 3  # labels without a case: one case each


def test_case_tables_give_the_figures_of_the_cases_one_by_one() -> None:
    from bot.trust.calibration import Agreement, by_case, case_tables

    rng = np.random.default_rng(RNG_SEED + 11)
    for _ in range(200):
        items = [(None if rng.random() < 0.2 else f"c{int(rng.integers(0, 30))}", bool(rng.random() < 0.6),
                  bool(rng.random() < 0.5), int(rng.integers(0, 3))) for _ in range(int(rng.integers(0, 80)))]
        passes: Counter[tuple[bool, bool]] = Counter()
        for _, judge, human, count in items:
            passes[judge, human] += count
        one_by_one = Agreement.counted(sum(passes.values()), passes, by_case(items))
        tabled = Agreement.of_tables(sum(passes.values()), passes, case_tables(items))
        floats = {"agreement", "interval", "judge_pass_rate", "human_pass_rate", "kappa_pass"}
        assert tabled.model_dump(exclude=floats) == one_by_one.model_dump(exclude=floats)
        assert tabled.kappa_pass.model_dump(exclude={"value", "interval"}) == one_by_one.kappa_pass.model_dump(
            exclude={"value", "interval"})
        if one_by_one.agreement is not None:
            assert tabled.agreement == pytest.approx(one_by_one.agreement)
            assert tabled.interval == pytest.approx(one_by_one.interval)
            assert tabled.judge_pass_rate == pytest.approx(one_by_one.judge_pass_rate)
            assert tabled.kappa_pass.value == pytest.approx(one_by_one.kappa_pass.value)
            assert tabled.kappa_pass.interval == pytest.approx(one_by_one.kappa_pass.interval)
