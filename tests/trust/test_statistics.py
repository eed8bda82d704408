"""Weighted kappa, McNemar's test, Krippendorff's alpha and the bootstrap over cases, each held to a reference
implementation: the expected numbers were computed once with scikit-learn 1.9.1, statsmodels 0.15.0, krippendorff
and scipy 1.17.1 (none of which judgebot needs to run) and are written here as literals."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from bot.trust import bootstrap
from bot.trust.alpha import AlphaTally, krippendorff_alpha
from bot.trust.calibration import LabeledVerdict, calibrate, wilson
from bot.trust.kappa import counted_kappa, kappa_interval
from bot.trust.mcnemar import clustered_mcnemar_p, mcnemar_p, p_text
from bot.trust.texts import agreement_text, gap_text, pass_rates_text

# Linear weighted kappa on eth's 0-2 scale, 30 labels (judge, person): as a table, judge in rows,
# [[5, 2, 0], [3, 5, 2], [3, 3, 7]]
JUDGE = [2] * 10 + [1] * 8 + [0] * 6 + [2] * 3 + [1] * 2 + [0] * 1
HUMAN = [2] * 7 + [1] * 3 + [1] * 5 + [0] * 3 + [0] * 5 + [1] * 1 + [0] * 3 + [2] * 2 + [1] * 1
MONDAY = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)


def label(**fields) -> LabeledVerdict:
    return LabeledVerdict(**{"labeled_at": MONDAY, "judge_model": "judge-a", "rubric_hash": "h1", **fields})


def test_linear_weighted_kappa_is_sklearns_and_its_interval_statsmodels() -> None:
    counts = Counter(zip(JUDGE, HUMAN))
    # sklearn.metrics.cohen_kappa_score(JUDGE, HUMAN, weights="linear", labels=[0, 1, 2]) = 0.40886699507389157
    assert counted_kappa(counts, [0, 1, 2]) == pytest.approx(0.40886699507389157)
    # unweighted, cohen_kappa_score(JUDGE, HUMAN, labels=[0, 1, 2]) = 0.3564356435643564
    assert counted_kappa(counts) == pytest.approx(0.3564356435643564)
    # statsmodels.stats.inter_rater.cohens_kappa(table, wt="linear"): kappa_low, kappa_upp
    assert kappa_interval(counts, [0, 1, 2]) == pytest.approx((0.1535681327949589, 0.6641658573528242))
    # A 1-5 scale on which nobody used 2: the weights follow the values, not the classes seen.
    # cohen_kappa_score(..., weights="linear", labels=[1, 2, 3, 4, 5]) = 0.631578947368421; statsmodels' interval
    # on the 5 x 5 table: (0.3705240355975213, 0.8926338591393208)
    judge = [5, 5, 4, 4, 3, 3, 1, 1, 5, 4, 3, 1, 5, 4]
    human = [5, 4, 4, 3, 3, 1, 1, 3, 5, 5, 3, 1, 4, 4]
    five = Counter(zip(judge, human))
    assert counted_kappa(five, [1, 2, 3, 4, 5]) == pytest.approx(0.631578947368421)
    assert kappa_interval(five, [1, 2, 3, 4, 5]) == pytest.approx((0.3705240355975213, 0.8926338591393208))


def test_calibration_weights_an_ordinal_criterion_and_signs_its_difference() -> None:
    labels = [label(judge_values={"correctness": judge}, human_values={"correctness": human})
              for judge, human in zip(JUDGE, HUMAN)]
    gap = calibrate(labels, criteria=["correctness"], scales={"correctness": [0, 1, 2]}).gaps["correctness"]
    # judge's total 2*13 + 1*10 = 36, people's 2*9 + 1*10 = 28: the judge scores (36 - 28) / 30 = 0.27 higher;
    # absolute, cell by cell (judge, person): (0,1) 2, (1,0) 3, (1,2) 2, (2,0) 3*2, (2,1) 3 -> 16 / 30 = 0.53
    assert (gap.n, gap.mean_signed, gap.mean_abs) == (30, pytest.approx(8 / 30), pytest.approx(16 / 30))
    assert gap.kappa is not None and gap.kappa.value == pytest.approx(0.40886699507389157)
    assert gap_text(gap) == ("the judge scores 0.27 higher, mean absolute difference 0.53 (30 labels); weighted kappa "
                             "0.41, 95% CI 0.15-0.66: slight to substantial")


@pytest.mark.parametrize(("judge_only", "human_only", "p"), [
    # statsmodels.stats.contingency_tables.mcnemar([[10, b], [c, 10]], exact=b + c < 25, correction=True).pvalue
    (3, 10, 0.09228515625),
    (0, 5, 0.0625),
    (12, 12, 1.0),
    (1, 23, 2.9802322387695312e-06),
    (13, 12, 1.0),  # 25 discordant: chi-square, corrected
    (20, 40, 0.014171388254012323),
    (30, 5, 4.976233487907417e-05),
    (0, 0, 1.0),
])
def test_mcnemar_is_statsmodels(judge_only: int, human_only: int, p: float) -> None:
    assert mcnemar_p(judge_only, human_only) == pytest.approx(p)


def test_clustered_mcnemar_is_mcnemar_without_correction_when_each_case_has_one_label() -> None:
    # mcnemar([[10, 20], [40, 10]], exact=False, correction=False).pvalue = 0.009823274507519235
    assert clustered_mcnemar_p([(1, 0)] * 20 + [(0, 1)] * 40 + [(0, 0)] * 20) == pytest.approx(0.009823274507519235)
    # mcnemar([[10, 3], [10, 10]], exact=False, correction=False).pvalue = 0.0522036353413146
    assert clustered_mcnemar_p([(1, 0)] * 3 + [(0, 1)] * 10) == pytest.approx(0.0522036353413146)
    # The same 20 against 40 as ten cases each labeled by six people alike: the evidence is ten cases, not 60 labels.
    # Durkalski's statistic (sum of d)^2 / sum of d^2 with d = +6 four times, -6 six times: 144 / 360 = 0.4, whose
    # upper tail scipy.stats.chi2.sf(0.4, 1) = 0.5270892568655381
    clustered = clustered_mcnemar_p([(6, 0)] * 4 + [(0, 6)] * 6)
    assert clustered == pytest.approx(0.5270892568655381)
    assert clustered_mcnemar_p([(0, 0), (1, 1)]) == 1.0


@pytest.mark.parametrize(("p", "text"), [(0.0004, "p < 0.001"), (0.001, "p = 0.001"), (0.0041, "p = 0.004"),
                                         (0.0312, "p = 0.03"), (1.0, "p = 1.00")])
def test_p_reads_as_a_statistician_writes_it(p: float, text: str) -> None:
    assert p_text(p) == text


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


def test_the_bootstrap_over_cases_matches_scipys_and_is_reproducible() -> None:
    # scipy.stats.bootstrap((agree,), np.mean, n_resamples=20000, method="percentile", random_state=1) over 200
    # cases, 150 agreeing: (0.69, 0.81); over 40 cases, 30 agreeing: (0.6, 0.875)
    two_hundred = [[[1, 0], [0, 0]]] * 150 + [[[0, 1], [0, 0]]] * 50
    low, high = bootstrap.agreement_interval(bootstrap.resampled_tables(two_hundred))  # type: ignore[misc]
    assert (low, high) == (pytest.approx(0.69, abs=0.01), pytest.approx(0.81, abs=0.01))
    forty = [[[1, 0], [0, 0]]] * 30 + [[[0, 1], [0, 0]]] * 10
    interval = bootstrap.agreement_interval(bootstrap.resampled_tables(forty))
    assert interval == (pytest.approx(0.6, abs=0.02), pytest.approx(0.875, abs=0.02))
    assert bootstrap.agreement_interval(bootstrap.resampled_tables(forty)) == interval  # seeded: the same every time
    # Kappa over 100 cases, (judge, person) TT 40, TF 10, FT 15, FF 35: kappa 0.5; scipy.stats.bootstrap((judge,
    # human), kappa, paired=True, n_resamples=5000, method="percentile", random_state=1): (0.32, 0.6603)
    hundred = ([[[1, 0], [0, 0]]] * 40 + [[[0, 1], [0, 0]]] * 10 + [[[0, 0], [1, 0]]] * 15
               + [[[0, 0], [0, 1]]] * 35)
    assert bootstrap.kappa_interval(bootstrap.resampled_tables(hundred)) == (pytest.approx(0.32, abs=0.02),
                                                                            pytest.approx(0.6603, abs=0.02))


def test_labels_of_one_case_by_several_people_count_as_one_case_in_the_interval() -> None:
    # 40 cases, each labeled alike by three people: 120 labels, 105 agreeing (35 cases). As if independent, Wilson
    # over 120 labels would claim 80%-92%; the evidence is 40 cases, whose interval is the bootstrap over 40 cases
    # of one label each.
    labels = [label(case=f"c{case}", judge_passed=True, human_passed=case < 30 or case >= 35)
              for case in range(40) for _ in range(3)]
    figures = calibrate(labels)
    assert (figures.n, figures.pass_n, figures.pass_agree, figures.cases) == (120, 120, 105, 40)
    naive = wilson(105, 120)
    # statsmodels.stats.proportion.proportion_confint(105, 120, method="wilson")
    assert naive == (pytest.approx(0.8039705979199261), pytest.approx(0.9227650272660464))
    alone = calibrate([label(case=f"c{case}", judge_passed=True, human_passed=case < 30 or case >= 35)
                       for case in range(40)])
    assert alone.cases is None and alone.interval == wilson(35, 40)
    # the same forty cases labeled once each, in the order of their keys (c0, c1, c10, ...) as the bootstrap takes them
    keys = sorted(f"c{case}" for case in range(40))
    one_each = bootstrap.agreement_interval(bootstrap.resampled_tables(
        [[[1, 0], [0, 0]] if not 30 <= int(key[1:]) < 35 else [[0, 1], [0, 0]] for key in keys]))
    assert figures.interval == one_each  # three alike labels a case weigh as one: the same draws, the same interval
    assert one_each is not None and one_each[1] - one_each[0] > naive[1] - naive[0] + 0.05  # wider than the naive one
    assert agreement_text(figures).endswith("(bootstrap over 40 cases)")
    # the judge passes all: kappa undefined; McNemar clustered by case, 5 cases of 3 discordant labels each:
    # (5 * 3)^2 / (5 * 3^2) = 5, scipy.stats.chi2.sf(5, 1) = 0.0253
    assert figures.kappa_pass.value is None
    assert pass_rates_text(figures) == "the judge passes 100%, people 88%, McNemar p = 0.03 (clustered by case)"
