"""Tests for bot.calibration: every figure checked against a hand computation on a small set of labels."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.figures import iso_week
from bot.trust.calibration import (
    PASS_NAMES,
    Confusion,
    Gap,
    Kappa,
    LabeledVerdict,
    calibrate,
    cohen_kappa,
    mean_abs_diff,
    wilson,
)
from bot.trust.stats.kappa import band

ETH_TAGS = ("Correct", "Generic", "Refusal", "Hallucination")
ETH_CRITERIA = ("correctness", "completeness")
MONDAY = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)  # 2026-W47


def label(**fields: Any) -> LabeledVerdict:
    """A label given on MONDAY by judge-a under rubric h1, unless told otherwise."""
    return LabeledVerdict(**{"labeled_at": MONDAY, "judge_model": "judge-a", "rubric_hash": "h1", **fields})


# --- Cohen's kappa --------------------------------------------------------------------------------------------------

def test_kappa_two_classes_textbook():
    # 50 proposals read by A (judge) and B (human): both yes 20, both no 15, A yes B no 5, A no B yes 10.
    pairs = [("yes", "yes")] * 20 + [("no", "no")] * 15 + [("yes", "no")] * 5 + [("no", "yes")] * 10
    # p_o = (20 + 15) / 50 = 0.70
    # A says yes 25/50 = 0.5, B says yes 30/50 = 0.6
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.30 + 0.20 = 0.50
    # kappa = (0.70 - 0.50) / (1 - 0.50) = 0.40
    assert cohen_kappa(pairs) == pytest.approx(0.40)


def test_kappa_three_classes():
    # judge \ human   A  B  C | row
    #   A             3  1  0 |  4
    #   B             0  2  1 |  3
    #   C             1  0  2 |  3
    #   column        4  3  3 | 10
    pairs = ([("A", "A")] * 3 + [("A", "B")] + [("B", "B")] * 2 + [("B", "C")] + [("C", "A")] + [("C", "C")] * 2)
    # p_o = (3 + 2 + 2) / 10 = 0.70
    # p_e = (4*4 + 3*3 + 3*3) / 100 = 34/100 = 0.34
    # kappa = (0.70 - 0.34) / (1 - 0.34) = 0.36 / 0.66 = 6/11 = 0.545454...
    assert cohen_kappa(pairs) == pytest.approx(6 / 11)


def test_kappa_negative():
    pairs = [("A", "B"), ("B", "A"), ("A", "A")]
    # p_o = 1/3; judge A 2/3 B 1/3, human A 2/3 B 1/3
    # p_e = (2/3)(2/3) + (1/3)(1/3) = 5/9
    # kappa = (1/3 - 5/9) / (1 - 5/9) = (-2/9) / (4/9) = -0.5
    assert cohen_kappa(pairs) == pytest.approx(-0.5)


def test_kappa_undefined_with_one_class_only():
    # Both raters said "A" every time: p_o = 1, p_e = 1 * 1 = 1, and kappa = 0/0.
    assert cohen_kappa([("A", "A")] * 4) is None
    assert cohen_kappa([(True, True)]) is None


def test_kappa_of_a_rater_with_one_class_only_is_undefined():
    # Judge always A, human always B: p_o = 0, p_e = 0, and (0 - 0) / (1 - 0) = 0 would say "slight" at 0% agreement.
    assert cohen_kappa([("A", "B")] * 3) is None
    # A judge that passes everything: kappa 0 whatever the agreement, so none is given.
    assert cohen_kappa([(True, True)] * 17 + [(True, False)] * 3) is None
    assert Kappa.counted({(True, False): 25}, names=PASS_NAMES).text() == (
        "n/a (one class only: the judge said pass every time, people said fail every time)")
    lenient = Kappa.counted({(True, True): 17, (True, False): 3}, names=PASS_NAMES)
    assert lenient.text() == "n/a (one class only: the judge said pass every time)"
    assert Kappa.counted({("Correct", "Correct"): 2, ("Generic", "Correct"): 3}).text() == (
        "n/a (one class only: people said Correct every time); few labeled cases (n = 5)")


def test_kappa_perfect_agreement():
    # p_o = 1, p_e = (2/5)^2 + (3/5)^2 = 13/25, kappa = (1 - 13/25) / (1 - 13/25) = 1.
    assert cohen_kappa([(True, True)] * 2 + [(False, False)] * 3) == 1.0


def test_kappa_no_pairs():
    assert cohen_kappa([]) is None


@pytest.mark.parametrize(("kappa", "name"), [
    (-0.5, "poor"), (0.0, "slight"), (0.20, "slight"), (0.21, "fair"), (0.40, "fair"), (6 / 11, "moderate"),
    (0.8, "substantial"), (0.81, "almost perfect"), (1.0, "almost perfect"),
])
def test_landis_and_koch_bands(kappa: float, name: str):
    assert band(kappa) == name


@pytest.mark.parametrize(("kappa", "text"), [
    # the band is named only when the whole interval lies in it; else the bands from its low end to its high end
    (Kappa(n=50, cases=50, value=0.55, interval=(0.40, 0.70)), "0.55, 95% CI 0.40-0.70: fair to substantial"),
    (Kappa(n=50, cases=50, value=0.66, interval=(0.61, 0.70)), "0.66, 95% CI 0.61-0.70: substantial"),
    (Kappa(n=50, cases=50, value=0.9, interval=(0.804, 0.95)), "0.90, 95% CI 0.80-0.95: substantial to almost "
                                                               "perfect"),
    # "to" between the bounds once one is negative: "-0.30-0.30" would read as a range from -0.30 to -0.30
    (Kappa(n=50, cases=50, value=0.0, interval=(-0.3, 0.3)), "0.00, 95% CI -0.30 to 0.30: poor to fair"),
    (Kappa(n=50, cases=50, value=-0.7, interval=(-1.0, -0.4)), "-0.70, 95% CI -1.00 to -0.40: poor"),
    (Kappa(n=50, cases=50, value=-0.001, interval=(-0.001, 0.1)), "0.00, 95% CI 0.00-0.10: slight"),  # not "-0.00"
    (Kappa(n=40, cases=25, clustered=True, value=0.6, interval=(0.5, 0.7)),
     "0.60, 95% CI 0.50-0.70 (25 cases, each weighing one): moderate to substantial"),
    (Kappa(n=30, cases=12, clustered=True, value=0.6), "0.60 (no interval under 20 cases); few labeled cases (n = 12)"),
    (Kappa(n=4, cases=4, judge_only="pass", human_only="pass"),
     "n/a (one class only: the judge and people said pass every time); few labeled cases (n = 4)"),
    (Kappa(), "n/a (no labels)"),
])
def test_kappa_text(kappa: Kappa, text: str):
    assert kappa.text() == text


# --- Wilson interval ------------------------------------------------------------------------------------------------
# z = 1.959964, z² = 3.841459; with n = 10: z²/n = 0.3841459, denominator 1 + z²/n = 1.3841459, z²/(2n) = 0.1920729,
# z²/(4n²) = 0.0096036.

def test_wilson_eight_of_ten():
    # p = 0.8; centre = (0.8 + 0.1920729) / 1.3841459 = 0.9920729 / 1.3841459 = 0.7167398
    # half = 1.959964 * sqrt(0.8 * 0.2 / 10 + 0.0096036) / 1.3841459
    #      = 1.959964 * sqrt(0.0256036) / 1.3841459 = 1.959964 * 0.1600114 / 1.3841459 = 0.2265774
    # interval = (0.7167398 - 0.2265774, 0.7167398 + 0.2265774) = (0.4902, 0.9433)
    interval = wilson(8, 10)
    assert interval is not None
    assert (round(interval[0], 4), round(interval[1], 4)) == (0.4902, 0.9433)


def test_wilson_none_of_ten():
    # p = 0; centre = 0.1920729 / 1.3841459 = 0.1387664; half = 1.959964 * sqrt(0.0096036) / 1.3841459
    #      = 1.959964 * 0.0979982 / 1.3841459 = 0.1387664; interval = (0, 0.2775)
    assert wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=5e-5))


def test_wilson_ten_of_ten():
    # The mirror image of 0/10: (1 - 0.2775, 1) = (0.7225, 1)
    assert wilson(10, 10) == (pytest.approx(0.7225, abs=5e-5), 1.0)


def test_wilson_no_trials():
    assert wilson(0, 0) is None


# --- Confusion matrix -----------------------------------------------------------------------------------------------

def test_confusion_counts_and_order():
    pairs = [("Correct", "Correct"), ("Correct", "Correct"), ("Generic", "Other"), ("Bogus", "Generic"),
             ("Refusal", "Refusal")]
    confusion = Confusion.build(pairs, order=ETH_TAGS)
    # The rubric's order, every class of it even if unused (Hallucination), then the unknown ones sorted.
    assert confusion.classes == ["Correct", "Generic", "Refusal", "Hallucination", "Bogus", "Other"]
    assert confusion.counts == [
        # Cor Gen Ref Hal Bog Oth   (human)
        [2, 0, 0, 0, 0, 0],  # Correct (judge)
        [0, 0, 0, 0, 0, 1],  # Generic
        [0, 0, 1, 0, 0, 0],  # Refusal
        [0, 0, 0, 0, 0, 0],  # Hallucination
        [0, 1, 0, 0, 0, 0],  # Bogus
        [0, 0, 0, 0, 0, 0],  # Other
    ]
    assert confusion.total == 5
    assert confusion.diagonal == 3  # Correct 2 + Refusal 1
    assert confusion.row_totals() == [2, 1, 1, 0, 1, 0]
    assert confusion.column_totals() == [2, 1, 1, 0, 0, 1]


def test_confusion_table_small():
    pairs = [("Correct", "Correct")] * 3 + [("Correct", "Generic")] + [("Generic", "Generic")] * 2
    assert Confusion.build(pairs, order=("Correct", "Generic")).table() == [
        "judge \\ human  Correct  Generic  total",
        "Correct              3        1      4",
        "Generic              0        2      2",
        "total                3        3      6",
    ]


def test_confusion_table_fits_sixty_columns_with_long_names():
    names = ["Alpha-long-13", "Bravo-long-1234", "Charlie-long-", "Delta"]  # the second is cut to 13: "Bravo-long-1…"
    lines = Confusion.build([(judge, human) for judge in names for human in names], order=names).table()
    assert max(len(line) for line in lines) <= 60
    assert lines[0] == "judge \\ human  Alpha-l…  Bravo-l…  Charlie…  Delta  total"
    assert [line[:13] for line in lines[1:]] == ["Alpha-long-13", "Bravo-long-1…", "Charlie-long-", "Delta        ",
                                                 "total        "]
    assert lines[-1].split() == ["total", "4", "4", "4", "4", "16"]


def test_confusion_rejects_a_ragged_matrix():
    with pytest.raises(ValueError):
        Confusion(classes=["A", "B"], counts=[[1, 0]])


# --- Mean absolute difference ---------------------------------------------------------------------------------------

def test_mean_abs_diff():
    # |5-4| + |2-2| + |1-3| + |4-4| = 1 + 0 + 2 + 0 = 3; 3 / 4 = 0.75
    assert mean_abs_diff([(5, 4), (2, 2), (1, 3), (4, 4)]) == pytest.approx(0.75)
    assert mean_abs_diff([(2.5, 1.0)]) == pytest.approx(1.5)
    assert mean_abs_diff([]) is None


# --- calibrate ------------------------------------------------------------------------------------------------------

def test_calibrate_no_labels():
    result = calibrate([], tags=ETH_TAGS, criteria=ETH_CRITERIA)
    assert (result.n, result.pass_n, result.pass_agree, result.agreement, result.interval, result.pass_cases) == (
        0, 0, 0, None, None, 0)
    assert (result.judge_pass_rate, result.human_pass_rate, result.mcnemar_p) == (None, None, None)
    assert (result.kappa_pass, result.kappa_tag, result.tag_n, result.confusion) == (Kappa(), Kappa(), 0, None)
    assert (result.gaps, result.by_week, result.judge_models, result.rubric_hashes) == ({}, [], {}, {})


def mixed_labels() -> list[LabeledVerdict]:
    """Four labels, each side missing something different."""
    return [
        # Agree: the person's side is the judge's.
        label(judge_passed=True, judge_tag="Correct", judge_values={"correctness": 2, "completeness": 2},
              human_passed=True, human_tag="Correct", human_values={"correctness": 2, "completeness": 2}),
        # Disagree: only pass/fail, the other way.
        label(judge_passed=False, judge_tag="Generic", judge_values={"correctness": 0, "completeness": 1},
              human_passed=True),
        # A full correction.
        label(judge_passed=True, judge_tag="Correct", judge_values={"correctness": 2, "completeness": 1},
              human_passed=False, human_tag="Hallucination", human_values={"correctness": 0, "completeness": 1}),
        # A correction of the tag and one score only, no pass/fail.
        label(judge_passed=False, judge_tag="Refusal", judge_values={"correctness": 0, "completeness": 0},
              human_tag="Generic", human_values={"correctness": 0}),
    ]


def test_calibrate_skips_missing_human_values_per_figure():
    result = calibrate(mixed_labels(), tags=ETH_TAGS, criteria=(*ETH_CRITERIA, "clarity"))
    assert result.n == 4
    # pass/fail: labels 1-3 (T,T) (F,T) (T,F); label 4 has no human pass/fail
    assert (result.pass_n, result.pass_agree) == (3, 1)
    assert result.agreement == pytest.approx(1 / 3)
    assert result.interval == wilson(1, 3)
    # kappa_pass: judge T 2 F 1, human T 2 F 1; p_o = 1/3, p_e = (2/3)(2/3) + (1/3)(1/3) = 5/9
    # kappa = (1/3 - 5/9) / (4/9) = -0.5
    assert result.kappa_pass.value == pytest.approx(-0.5)
    # both pass 2 of 3; the judge alone passed one (label 3), the person alone one (label 2)
    assert (result.judge_pass_rate, result.human_pass_rate) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert (result.judge_only, result.human_only, result.mcnemar_p) == (1, 1, 1.0)
    # tags: labels 1, 3, 4 (Correct,Correct) (Correct,Hallucination) (Refusal,Generic); label 2 has no human tag
    assert result.tag_n == 3
    # p_o = 1/3; judge Correct 2/3 Refusal 1/3; human Correct 1/3 Hallucination 1/3 Generic 1/3
    # p_e = (2/3)(1/3) + (1/3)(0) = 2/9; kappa = (1/3 - 2/9) / (1 - 2/9) = (1/9) / (7/9) = 1/7
    assert result.kappa_tag.value == pytest.approx(1 / 7)
    assert result.confusion is not None
    assert result.confusion.classes == list(ETH_TAGS)
    assert result.confusion.counts == [[1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]]
    # correctness: labels 1, 3, 4: |2-2| + |2-0| + |0-0| = 2, over 3 = 0.6667; signed (2-2) + (2-0) + (0-0) = +2
    # completeness: labels 1, 3: |2-2| + |1-1| = 0, over 2 = 0; clarity: on no label, left out
    assert list(result.gaps) == ["correctness", "completeness"]
    correctness, completeness = result.gaps["correctness"], result.gaps["completeness"]
    assert (correctness.n, correctness.mean_abs, correctness.mean_signed) == (3, pytest.approx(2 / 3),
                                                                              pytest.approx(2 / 3))
    assert completeness == Gap(n=2, cases=2, mean_abs=0.0, mean_signed=0.0)  # no scales given: no weighted kappa
    assert result.by_week == [("2026-W47", 4, 3, pytest.approx(1 / 3))]


def test_calibrate_without_a_tag():
    result = calibrate(mixed_labels(), tags=(), criteria=ETH_CRITERIA)
    assert (result.tag_n, result.kappa_tag, result.confusion) == (0, Kappa(), None)
    assert result.pass_n == 3  # the other figures stay


def test_calibrate_no_label_with_both_tags():
    labels = [label(judge_passed=True, human_passed=True),
              label(judge_passed=True, judge_tag="Correct", human_passed=False)]
    result = calibrate(labels, tags=ETH_TAGS)
    assert (result.tag_n, result.kappa_tag, result.confusion) == (0, Kappa(), None)
    # pass/fail: (T,T) (T,F): one class for the judge; p_o = p_e = 1/2, so (p_o - p_e) would be 0 whatever happened
    assert result.kappa_pass.value is None  # the judge said pass only: "n/a (one class only)", not 0.00 (slight)
    assert result.kappa_pass.text() == ("n/a (one class only: the judge said pass every time); few labeled cases "
                                        "(n = 2)")


def test_calibrate_one_class_only():
    labels = [label(judge_passed=True, human_passed=True)] * 3
    result = calibrate(labels)
    assert (result.pass_n, result.pass_agree, result.agreement, result.kappa_pass.value) == (3, 3, 1.0, None)
    assert result.kappa_pass.text() == "n/a (one class only: the judge and people said pass every time); few " \
                                       "labeled cases (n = 3)"


def test_by_week_across_a_year_boundary():
    def on(day: datetime, judge: bool, human: bool) -> LabeledVerdict:
        return label(labeled_at=day, judge_passed=judge, human_passed=human)

    labels = [
        on(datetime(2027, 1, 4, tzinfo=UTC), True, True),  # Monday: 2027-W01
        on(datetime(2026, 12, 27, tzinfo=UTC), True, False),  # Sunday: 2026-W52
        on(datetime(2027, 1, 1, tzinfo=UTC), True, True),  # Friday: still 2026-W53 (1 January 2026 is a Thursday)
        on(datetime(2026, 12, 28, tzinfo=UTC), False, True),  # Monday: 2026-W53
        on(datetime(2027, 1, 3, tzinfo=UTC), False, False),  # Sunday: 2026-W53
        on(datetime(2025, 12, 29, tzinfo=UTC), True, True),  # Monday: 2026-W01, though in 2025
        label(labeled_at=datetime(2027, 1, 5, tzinfo=UTC), judge_passed=True),  # 2027-W01, no human pass/fail
    ]
    assert iso_week(datetime(2027, 1, 1)) == "2026-W53"
    assert calibrate(labels).by_week == [  # (week, labels, cases with pass/fail on both sides, agreement)
        ("2026-W01", 1, 1, 1.0),  # 1 of 1 agree
        ("2026-W52", 1, 1, 0.0),  # 0 of 1
        ("2026-W53", 3, 3, pytest.approx(2 / 3)),  # (T,T) (F,T) (F,F): 2 of 3
        ("2027-W01", 2, 1, 1.0),  # 2 labels, 1 with both sides, which agrees
    ]


def test_by_week_without_pass_fail_has_no_agreement():
    result = calibrate([label(human_tag="Generic", judge_tag="Correct")], tags=ETH_TAGS)
    assert result.by_week == [("2026-W47", 1, 0, None)]


def test_labels_per_judge_model_and_rubric_hash_most_first():
    labels = [label(judge_model="judge-b", rubric_hash="h2")] + [label()] * 3 + [label(judge_model="judge-c")]
    result = calibrate(labels)
    assert list(result.judge_models.items()) == [("judge-a", 3), ("judge-b", 1), ("judge-c", 1)]
    assert list(result.rubric_hashes.items()) == [("h1", 4), ("h2", 1)]


def test_the_drift_gate_holds_a_lenient_judge_and_a_handful_of_cases_to_the_evidence() -> None:
    from bot.trust.drift import Gate

    lenient = calibrate([label(judge_passed=True, human_passed=True)] * 17 + [label(judge_passed=True,
                                                                                   human_passed=False)] * 3)
    assert lenient.agreement == pytest.approx(0.85) and lenient.kappa_pass.value is None
    assert not Gate().passes(lenient)  # 85%, but the interval reaches down to 64%
    # the point alone clears 80%, but a judge that passes everything where people do not fails by default
    conditions = Gate(point=True).conditions(lenient)
    assert [c.met for c in conditions] == [True, True, False]
    assert (conditions[2].asked, conditions[2].found) == ("the judge both passes and fails where people do",
                                                          "the judge said pass every time, people passed 85%")
    gated = Gate(point=True, min_kappa=0.2)
    assert [c.found for c in gated.conditions(lenient)][-1] == "n/a (one class only: the judge said pass every time)"
    # the judge: passes all 40 cases, people failed 2; agreement 95%, its interval's low end 83.5% clears
    # --min-agreement 0.8, and it still fails
    forty = calibrate([label(case=f"c{n}", judge_passed=True, human_passed=n >= 2) for n in range(40)])
    assert [c.met for c in Gate(min_agreement=0.8).conditions(forty)] == [True, True, False]
    few = calibrate([label(judge_passed=True, human_passed=True)] * 3)
    assert not Gate(min_agreement=0.4).passes(few)  # 100% of 3 cases: interval 44%-100%, and fewer than 20
    assert [c.met for c in Gate(min_agreement=0.4).conditions(few)] == [False, True, True]  # people passed all too
    # ten cases labeled by two people each are ten cases, not twenty
    twice = calibrate([label(case=f"t{n}", judge_passed=n < 5, human_passed=n < 5) for n in range(10)] * 2)
    assert Gate(min_labels=20).conditions(twice)[0].found == "10 (20 labels)"
    good = calibrate([label(judge_passed=True, human_passed=True)] * 30 + [label(judge_passed=False,
                                                                                human_passed=False)] * 30)
    assert Gate(min_kappa=0.8).passes(good)
