"""A team's rubric files as the command line reports them: a broken file named as broken, with every problem by field,
whichever name of it a command types; and a file that replaces a shipped rubric marked in `judgebot rubrics`."""

from __future__ import annotations

import pytest

from tests.support.cli import flat, judgebot
from tests.support.rubric_files import mini, seed_data, write

TRIPLE = ["-q", "How do I register?", "-r", "In myStudies.", "-a", "Use myStudies."]


def test_a_rubric_whose_file_has_typos_is_called_broken_with_every_problem_by_field(tmp_path):
    team = tmp_path / "team"
    team.mkdir()
    typos = mini("house", aliases=["home", "stats"], version=1.0)
    typos["sytem"] = typos.pop("system")
    write(team, typos)

    for typed in ("house", "home"):  # its name, and an alias: both were "No rubric named 'home'" for the alias
        code, out = judgebot(tmp_path, "judge", "--rubric", typed, *TRIPLE, RUBRICS_DIR=str(team))
        assert code == 2, out
        text = flat(out)
        assert (f"error: The rubric file house.yaml in RUBRICS_DIR is broken, so the rubric '{typed}' cannot be used "
                "until it is fixed (4 problems):") in text
        for problem in ("- version: 1.0 was read as a number", "- system: Field required",
                        "- sytem: Extra inputs are not permitted. Did you mean 'system'?",
                        "- aliases.1: 'stats' is a word judgebot keeps for a command"):
            assert problem in text, text
        assert "No rubric named" not in text

    code, out = judgebot(tmp_path, "judge", "--rubric", "hose", *TRIPLE, RUBRICS_DIR=str(team))
    assert code == 2 and "Left out until fixed: " in flat(out) and "house.yaml (`judgebot rubrics` says why)" in flat(out)


@pytest.mark.slow
def test_every_formula_typo_of_a_file_is_reported_at_once(tmp_path):
    team = tmp_path / "team"
    team.mkdir()
    write(team, mini("house", rules=[{"check": "scor == 2", "message": "typo"}],
                     headline={"score": "score / 2 * 100", "pass": "score >= 1", "label": "{verdikt}", "tag": "verdict"},
                     generation_order=["wy"],
                     goldens=[{"name": "g", "question": "q", "reference": "r", "answer": "a", "expect": {"scores": 2}}]))

    code, out = judgebot(tmp_path, "judge", "--rubric", "house", *TRIPLE, RUBRICS_DIR=str(team))

    assert code == 2, out
    text = flat(out)
    assert "house.yaml in RUBRICS_DIR is broken, so the rubric 'house' cannot be used until it is fixed (4 problems)" in text
    for problem in ("- generation_order.0: no field 'wy' in the output", "Did you mean 'why'?",
                    "- rules.0.check: rule could not be checked: 'scor == 2' failed", "Did you mean 'score'?",
                    "- headline.label: label '{verdikt}': KeyError", "Did you mean 'verdict'?",
                    "- goldens.g.expect: no field 'scores'"):
        assert problem in text, text


def test_rubrics_marks_a_team_file_that_replaces_a_shipped_rubric(tmp_path):
    team = tmp_path / "team"
    team.mkdir()
    ours = seed_data("eth")
    ours["description"] = "Our own audit of ETH answers."
    write(team, ours)
    write(team, mini("mine"))

    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))

    assert code == 0, out
    text = flat(out)
    assert "Our own audit of ETH answers." in text and "Strict auditor" not in text  # the team's file is the one used
    assert f"eth: {team / 'eth.yaml'} replaces the shipped rubric of this name" in text
    assert "mine: " not in text and text.count("replaces the shipped rubric") == 1

    broken = seed_data("academic")
    broken["sytem"] = broken.pop("system")
    write(team, broken)
    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    assert code == 0, out
    text = flat(out)
    assert (f"academic: {team / 'academic.yaml'} replaces the shipped rubric of this name; it is broken, so academic "
            "cannot be used until it is fixed (or removed, to use the shipped one)") in text
    code, out = judgebot(tmp_path, "judge", "--rubric", "academic", *TRIPLE, RUBRICS_DIR=str(team))
    assert code == 2 and "It replaces the shipped rubric academic: fix it, or remove it to use the shipped one." in flat(out)
