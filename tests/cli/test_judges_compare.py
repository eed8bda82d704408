"""`judgebot judges compare`: the candidate and the judge in use on people's labels and on recent judgments, through
the real command line against the local judge server; its runs kept out of every figure, its cost agreed first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import JUDGE_MODEL, flat, history, judgebot, judgebot_json, write_rows
from tests.support.openai_server import FakeJudgeServer
from tests.support.scripted_judge import Script

ANSWERS = [f"answer {n}" for n in range(8)]
IN_USE = ["Correct", "Correct", "Correct", "Correct", "Generic", "Generic", "Refusal", "Hallucination"]
CANDIDATE = ["Correct", "Correct", "Correct", "Generic", "Correct", "Generic", "Hallucination", "Hallucination"]
PEOPLE_PASS = ["yes", "yes", "yes", "no", "no", "no", "no", "no"]  # row 4: only the candidate is right; row 5: only
# the judge in use is
NEW = "judge-new"
LONG = " [red]Aisha[/red] asks\nwhere the room booking portal is, and whom to call when it is down"


def scripted(judge_server: FakeJudgeServer) -> Script:
    script = Script({JUDGE_MODEL: {a: [t] for a, t in zip(ANSWERS, IN_USE, strict=True)},
                     NEW: {a: [t] for a, t in zip(ANSWERS, CANDIDATE, strict=True)}})
    judge_server.responder = script
    return script


def judged_in_the_terminal(tmp_path: Path, judge_server: FakeJudgeServer) -> Path:
    """The eight rows judged by the judge in use, and a labels file of people's pass/fail for them."""
    rows = [[f"question {n}?" + (LONG if n == 3 else ""), "Use myStudies.", answer, "bot-v1"]
            for n, answer in enumerate(ANSWERS)]
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer", "model"], rows)
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server)
    assert code == 1 or code == 0, out
    return write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "model", "human_pass"],
                      [[*row, label] for row, label in zip(rows, PEOPLE_PASS, strict=True)])


def test_compare_shows_both_judges_against_people_and_against_each_other(tmp_path, judge_server) -> None:
    script = scripted(judge_server)
    labels = judged_in_the_terminal(tmp_path, judge_server)
    code, stats_before, _ = judgebot_json(tmp_path, "stats")

    code, found, stderr = judgebot_json(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels",
                                        str(labels), "--yes", server=judge_server)

    assert code == 0, stderr
    # the estimates come first, one per judge, said on stderr; the judge in use's verdicts are all in the history
    assert stderr.index(f"The judge in use, {JUDGE_MODEL}:") < stderr.index(f"The candidate, {NEW}:"), stderr
    assert sum(count for (model, _), count in script.seen.items() if model == JUDGE_MODEL) == 8  # none asked again
    assert sorted(answer for (model, answer), count in script.seen.items() if model == NEW for _ in range(count)) \
        == ANSWERS  # the labeled rows and the sample share texts: each is sent once
    assert (found["judge_in_use"], found["candidate"], found["labeled_cases"], found["recent_judgments"]) == \
        (JUDGE_MODEL, NEW, 8, 8)
    # against people: each right on 7 of 8, each where the other was wrong once
    people = found["against_people"]
    for judge in ("judge_in_use", "candidate"):
        pass_fail = people[judge]["pass_fail"]
        assert (pass_fail["agreeing_labels"], pass_fail["pass_fail_labels"], pass_fail["agreement"]) == (7, 8, 0.875)
    assert (people["candidate_right_cases"], people["judge_in_use_right_cases"], people["paired_cases"]) == (1, 1, 8)
    assert people["mcnemar_p"] == 1.0 and people["labels_from"] == "labels.csv"
    # against each other on the terminal's eight recent judgments
    other = found["against_each_other"]
    assert (other["rows"], other["same_pass_fail_rows"], other["pass_fail_rows"], other["agreement"]) == (8, 6, 8, 0.75)
    assert (other["to_fail_rows"], other["to_pass_rows"]) == (1, 1)
    assert (other["headline_shift"], other["headline_shift_interval"]) == (0.0, None)  # a t interval held from 10 rows
    assert [(flip["question"].split("?")[0], flip["model"], flip["judge_in_use"], flip["candidate"])
            for flip in other["flips"]] == [
        ("question 3", "bot-v1", {"passed": True, "tag": "Correct", "headline": 100.0},
         {"passed": False, "tag": "Generic", "headline": 25.0}),
        ("question 4", "bot-v1", {"passed": False, "tag": "Generic", "headline": 25.0},
         {"passed": True, "tag": "Correct", "headline": 100.0})]
    assert other["flips"][0]["question"].endswith("whom to call when it is down")  # the text as it is
    assert {"judge_in_use_tag": "Refusal", "candidate_tag": "Hallucination", "rows": 1} in other["tag_moves"]

    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels", str(labels),
                         "--yes", server=judge_server)  # as a person reads it: the verdicts are in the history now
    text = flat(out)
    assert code == 0, out
    assert text.index(f"The judge in use, {JUDGE_MODEL}:") < text.index(f"The candidate, {NEW}:") < \
        text.index("Against people's labels")
    assert f"Right where the other was wrong: {NEW} 1, {JUDGE_MODEL} 1 (McNemar p = 1.0, over 8 cases)" in text
    assert "mean headline shift +0.0 points (no interval under 10 rows)" in text
    # a flipped row is named by its question (the comparison's own row numbers open nowhere), with its model
    assert ('"question 3? [red]Aisha[/red] asks where the room booking portal is,…" (bot-v1): judge-cli pass, '
            'Correct, 100; judge-new fail, Generic, 25') in text  # in one line, cut, its markup shown as typed
    assert '"question 4?" (bot-v1): judge-cli fail, Generic, 25; judge-new pass, Correct, 100' in text
    assert "row 12" not in text and "row 13" not in text
    assert "question 6?" not in text.split("mean headline shift")[1].split("Tags")[0]  # a tag change, not a flip
    # the tag transitions: the judge in use's tags are the rows
    [matrix] = [line for line in out.splitlines() if "Refusal" in line and ("│" in line or "┃" in line)]
    assert flat(matrix) == "Refusal 0 0 1"  # Refusal -> Hallucination (the columns: Correct, Generic, Hallucination)
    # the comparison's runs stay out of the terminal's figures
    assert judgebot_json(tmp_path, "stats")[1]["figures"] == stats_before["figures"]
    assert history(tmp_path, "SELECT DISTINCT source FROM run ORDER BY 1") == [("check",), ("cli",)]


def test_mcnemar_between_the_judges_counts_cases_not_labels(tmp_path, judge_server) -> None:
    # Six cases: the candidate right on the first four where the judge in use is wrong, the last two both right. The
    # first case is labeled by three people: still four cases only the candidate got right, p = 2 / 2^4 = 0.125 (over
    # its six labels it would read 0.031, "not by chance")
    answers = [f"reply {n}" for n in range(6)]
    judge_server.responder = Script({JUDGE_MODEL: {answer: ["Generic"] for answer in answers},
                                     NEW: {answer: ["Correct" if n < 4 else "Generic"] for n, answer in
                                           enumerate(answers)}})
    rows = [[f"question {n}?", "Use myStudies.", answer, "yes" if n < 4 else "no", "ana"]
            for n, answer in enumerate(answers)]
    labels = write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "human_pass", "labeled_by"],
                        rows + [[*rows[0][:4], person] for person in ("ben", "eva")])

    code, found, stderr = judgebot_json(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels",
                                        str(labels), "--history", "0", "--yes", server=judge_server)

    assert code == 0, stderr
    people = found["against_people"]
    assert (people["candidate_right_cases"], people["judge_in_use_right_cases"], people["paired_cases"]) == (4, 0, 6)
    assert people["mcnemar_p"] == 0.125
    candidate = people["candidate"]["pass_fail"]
    assert (candidate["agreement"], candidate["pass_fail_labels"], candidate["cases"]) == (1.0, 8, 6)
    assert found["recent_judgments"] == 0 and found["against_each_other"]["rows"] == 0


def test_compare_agreed_to_nothing_judges_nothing(tmp_path, judge_server) -> None:
    script = scripted(judge_server)
    labels = judged_in_the_terminal(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels", str(labels),
                         server=judge_server, CONFIRM_ABOVE_REQUESTS="1")
    assert code == 2, out
    assert "pass --yes" in flat(out)
    assert not any(model == NEW for model, _ in script.seen)
    assert history(tmp_path, "SELECT status FROM run WHERE source = 'check'") == [("cancelled",), ("cancelled",)]


def test_compare_refuses_what_it_cannot_compare(tmp_path, judge_server) -> None:
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", JUDGE_MODEL, server=judge_server)
    assert code == 2 and f"{JUDGE_MODEL} is the judge in use already" in flat(out)
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, server=judge_server)
    assert code == 2 and "nothing to compare" in flat(out)
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--history", "-1",
                         server=judge_server)
    assert code == 2 and "--history is a count" in flat(out)


def test_what_a_comparison_costs_counts_against_the_monthly_budget(tmp_path, judge_server) -> None:
    priced = "gpt-4o-mini"
    judge_server.responder = Script({JUDGE_MODEL: {a: [t] for a, t in zip(ANSWERS, IN_USE, strict=True)},
                                     priced: {a: [t] for a, t in zip(ANSWERS, CANDIDATE, strict=True)}})
    labels = judged_in_the_terminal(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", priced, "--labels", str(labels),
                         "--yes", server=judge_server, JUDGE_MONTHLY_BUDGET="1")
    assert code == 0, out
    [(cost,)] = history(tmp_path, "SELECT sum(cost) FROM billed_tally WHERE channel_key = '#calibration-check'")
    assert cost > 0
    code, budget, stderr = judgebot_json(tmp_path, "budget", JUDGE_MONTHLY_BUDGET="1")
    assert code == 0, stderr
    assert budget["spent_usd"] == pytest.approx(cost) and budget["checks"]["usd"] == pytest.approx(cost)
    assert (budget["monthly_budget_usd"], budget["left_usd"]) == (1.0, pytest.approx(1 - cost))
    assert [(spent["rubric"], spent["judge_model"]) for spent in budget["checks"]["by_judge"]] == [("eth", priced)]
    assert budget["runs"]["usd"] == 0.0  # the terminal's own run was judged by a judge of no known price
    # a budget the comparison would go over is asked about, like any run's
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", priced, "--labels", str(labels),
                         "--fresh", server=judge_server, JUDGE_MONTHLY_BUDGET=f"{cost * 1.5:.6f}")
    assert code == 2 and "would go over the budget" in flat(out), out
