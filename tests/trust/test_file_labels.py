"""Labels in a CSV: human_ columns read against the rubric, saved as labels of the judged rows, and the judge measured
against them in the run's summary."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from bot.trust.labels import HumanValues, complete, label_columns, read_label
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.replies import eth_reply
from tests.support.scripted_judge import Script


def test_label_columns_are_matched_to_the_rubric_and_strangers_reported(rubrics) -> None:
    eth = rubrics.get("eth")
    columns, unknown = label_columns(["question", "human_pass", "human_result_tag", "human_correctness",
                                      "human_reasoning", "HUMAN_completeness", "human_colour"], eth)
    assert columns == {"human_pass": "pass", "human_result_tag": "result_tag", "human_correctness": "correctness",
                       "HUMAN_completeness": "completeness"}
    assert unknown == ["human_reasoning", "human_colour"]  # free text is not a label; an unknown field is reported


def test_label_cells_are_checked_like_a_judge_reply(rubrics) -> None:
    eth = rubrics.get("eth")
    columns, _ = label_columns(["human_pass", "human_result_tag", "human_correctness"], eth)
    label = read_label({"human_pass": "No", "human_result_tag": "generic", "human_correctness": "0"}, columns, eth)
    assert label == HumanValues(values={"result_tag": "Generic", "correctness": 0}, passed=False)
    assert read_label({"human_pass": " ", "human_result_tag": ""}, columns, eth).empty
    for cells, problem in [({"human_correctness": "3"}, "outside 0..2"), ({"human_correctness": "1.5"}, "whole"),
                           ({"human_result_tag": "Great"}, "not one of Correct, Generic"),
                           ({"human_pass": "maybe"}, "not true or false")]:
        with pytest.raises(ValueError, match=problem):
            read_label(cells, columns, eth)


def test_a_label_is_completed_from_the_persons_own_values_never_from_the_judge(rubrics) -> None:
    eth = rubrics.get("eth")
    # eth passes on Correct with completeness at least 1; the headline is (correctness + completeness) / 4 * 100
    generic = complete(HumanValues(values={"result_tag": "Generic", "correctness": 0}), eth)
    assert (generic.passed, generic.pass_from, generic.tag) == (False, "rule", "Generic")  # Generic fails, whatever else
    assert generic.headline is None  # completeness not given: no headline, and none borrowed from the judge
    correct = complete(HumanValues(values={"result_tag": "Correct"}), eth)
    assert (correct.passed, correct.pass_from, correct.tag) == (None, None, "Correct")  # completeness decides: not given
    full = complete(HumanValues(values={"result_tag": "Correct", "correctness": 1, "completeness": 1}), eth)
    assert (full.passed, full.pass_from, full.headline) == (True, "rule", 50.0)
    zeros = complete(HumanValues(values={"correctness": 0}), eth)
    assert (zeros.passed, zeros.pass_from) == (None, None)  # correctness 0 alone says nothing of pass/fail
    only_pass = complete(HumanValues(passed=True), eth)
    assert (only_pass.passed, only_pass.pass_from, only_pass.tag) == (True, "given", None)  # nothing said of the tag
    overruled = complete(HumanValues(values={"result_tag": "Generic"}, passed=True), eth)
    assert (overruled.passed, overruled.pass_from) == (True, "given")  # the person's own pass/fail stands


def test_cli_judges_a_file_with_labels_and_measures_the_judge_against_them(tmp_path: Path, judge_server) -> None:
    answers = {"a1": "Correct", "a2": "Generic", "a3": "Correct", "a4": "Refusal"}
    judge_server.responder = Script({"judge-cli": {answer: [tag] for answer, tag in answers.items()}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer", "human_result_tag",
                                             "human_completeness", "human_mood"], [
        ["q1", "Use myStudies.", "a1", "Correct", "2", ""],
        ["q2", "Use myStudies.", "a2", "Correct", "2", ""],   # the judge said Generic
        ["q3", "Use myStudies.", "a3", "", "", ""],           # not labeled
        ["q4", "Use myStudies.", "a4", "Sorta", "", ""],      # unreadable: reported, not guessed
    ])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server)

    assert code == 0, out
    text = flat(out)
    assert "column human_mood names no field of this rubric" in text
    assert "row 5 label not read: human_result_tag 'Sorta' is not one of Correct, Generic, Refusal, Hallucination" in text
    # two labels: (judge Correct, human Correct) and (judge Generic, human Correct); pass/fail follows eth's pass rule
    # on the person's own tag and completeness
    # agreement 1/2; kappa on pass/fail: people passed both, so it is undefined (it would be 0 whatever the agreement)
    # Wilson 95% for 1/2: centre 0.5, half-width 1.96 * sqrt(0.125 + 0.2401) / 2.9207 = 0.4055 -> 9%-91%
    # McNemar: the person alone passed one label, the judge alone none: exact two-sided p = 2 * 0.5 -> 1
    assert "The judge against the file's labels (2 labels)" in text
    assert "agreement on pass/fail 50% (1/2), 95% CI 9%-91% (Wilson); few labeled cases (n = 2)" in text
    assert "pass rates the judge passes 50%, people 100%, McNemar p = 1.0; few labeled cases (n = 2)" in text
    assert "kappa on pass/fail n/a (one class only: people said pass every time); few labeled cases (n = 2)" in text
    assert ("kappa on the tag n/a (one class only: people said Correct every time) over 2 labels; few labeled cases (n = 2)"
            in text)
    # completeness: the judge gave Correct 2 and Generic 1 against people's 2 and 2: (0 - 1) / 2 = -0.50
    assert ("completeness: the judge scores 0.50 lower, mean absolute difference 0.50 (2 labels); weighted kappa n/a "
            "(one class only: people said 2 every time); few labeled cases (n = 2)") in text
    me = getpass.getuser()[:32]
    assert history(tmp_path, "SELECT l.user_id, l.source, l.tag, l.passed, l.pass_from, j.row_number FROM label l "
                   "JOIN judgment j ON j.id = l.judgment_id ORDER BY j.row_number") == [
        (me, "file", "Correct", 1, "rule", 2), (me, "file", "Correct", 1, "rule", 3)]  # who ran the file labeled it
    # the labels never reach the judge
    assert all("human" not in str(body["messages"]) for body in judge_server.bodies())

    code, out = judgebot(tmp_path, "resume", "1", "--out", "again.csv", server=judge_server)  # a finished run: written again
    assert code == 0, out
    assert history(tmp_path, "SELECT COUNT(*) FROM label") == [(2,)]  # summarised again: replaced, not doubled


def test_label_columns_are_read_whatever_their_spelling_and_one_of_several_wins(rubrics) -> None:
    from bot.trust.labels import repeated_columns

    eth = rubrics.get("eth")
    headers = ["Human Pass", "human_pass", "HUMAN_PASS", "human- Correctness", "human_ result_tag"]
    columns, unknown = label_columns(headers, eth)
    assert columns == {"Human Pass": "pass", "human- Correctness": "correctness", "human_ result_tag": "result_tag"}
    assert unknown == [] and repeated_columns(headers, eth) == [("human_pass", "Human Pass"), ("HUMAN_PASS", "Human Pass")]


def test_a_label_cell_is_a_finite_number_and_every_bad_cell_is_named(rubrics) -> None:
    eth = rubrics.get("eth")
    columns, _ = label_columns(["human_correctness", "human_completeness", "human_pass"], eth)
    for text in ("nan", "inf", "-Infinity"):
        with pytest.raises(ValueError, match="is not a number"):
            read_label({"human_correctness": text}, columns, eth)
    with pytest.raises(ValueError) as raised:
        read_label({"human_correctness": "nan", "human_completeness": "7", "human_pass": "maybe"}, columns, eth)
    assert all(part in str(raised.value) for part in ("human_correctness 'nan'", "human_completeness '7'", "human_pass"))


def test_a_labeled_file_judged_twice_labels_its_cases_once(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: eth_reply("Correct")
    rows = [[f"Where is form {n}?", "In myStudies.", f"In myStudies, form {n}.", "yes" if n % 2 else "no"]
            for n in range(6)]
    rows += [["Where is the bad one?", "In myStudies.", f"bad {n}", "maybe"] for n in range(25)]
    write_rows(tmp_path / "labeled.csv", ["question", "reference", "answer", "human_pass"], rows)
    for _ in range(2):
        code, out = judgebot(tmp_path, "judge", "labeled.csv", "--rubric", "eth", "--fresh", server=judge_server)
        assert "... and 5 more rows whose label was not read" in flat(out), out
    assert history(tmp_path, "SELECT count(*) FROM label") == [(6,)]
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth")
    assert "labels 6" in flat(out), out
    code, out = judgebot(tmp_path, "labels", "export", "--rubric", "eth")
    assert out.count("In myStudies, form") == 6
