"""`judgebot judges compare`: the candidate and the judge in use on people's labels and on recent judgments, through
the real command line against the local judge server; its runs kept out of every figure, its cost agreed first."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import JUDGE_MODEL, flat, history, judgebot, write_rows
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
    stats_before = flat(judgebot(tmp_path, "stats")[1])

    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels", str(labels),
                         "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    # the estimates come first, one per judge; the judge in use's verdicts are all in the history already
    assert text.index(f"The judge in use, {JUDGE_MODEL}:") < text.index(f"The candidate, {NEW}:") < \
        text.index("Against people's labels")
    assert sum(count for (model, _), count in script.seen.items() if model == JUDGE_MODEL) == 8  # none asked again
    assert sorted(answer for (model, answer), count in script.seen.items() if model == NEW for _ in range(count)) \
        == ANSWERS  # the labeled rows and the sample share texts: each is sent once
    # against people: each right on 7 of 8, each where the other was wrong once
    assert text.count("agreement on pass/fail 88% (7/8)") == 2
    assert f"Right where the other was wrong: {NEW} 1, {JUDGE_MODEL} 1 (McNemar p = 1.0, over 8 cases)" in text
    # against each other on the terminal's eight recent judgments
    assert "On 8 recent judgments" in text
    assert "the same pass/fail on 75% (6/8), 95% CI " in text
    assert f"flips: pass -> fail 1, fail -> pass 1 ({JUDGE_MODEL} -> {NEW})" in text
    assert "mean headline shift +0.0 points (no interval under 10 rows)" in text  # a t interval held from 10
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
    assert flat(judgebot(tmp_path, "stats")[1]) == stats_before
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

    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", NEW, "--labels", str(labels),
                         "--history", "0", "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert f"Right where the other was wrong: {NEW} 4, {JUDGE_MODEL} 0 (McNemar p = 0.12, over 6 cases)" in text
    assert "agreement on pass/fail 100% (8 labels of 6 cases, each case weighing one)" in text


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
    code, out = judgebot(tmp_path, "budget", JUDGE_MONTHLY_BUDGET="1")
    text = flat(out)
    assert code == 0, out
    assert f"This month the terminal's judging spent ${cost:.4f} of JUDGE_MONTHLY_BUDGET ($1.00: ${1 - cost:.2f} left)" \
        in text
    assert f"Of it, ${cost:.4f} on calibration checks, judge comparisons, alignments and pairwise runs" in text
    # a budget the comparison would go over is asked about, like any run's
    code, out = judgebot(tmp_path, "judges", "compare", "--rubric", "eth", "--to", priced, "--labels", str(labels),
                         "--fresh", server=judge_server, JUDGE_MONTHLY_BUDGET=f"{cost * 1.5:.6f}")
    assert code == 2 and "would go over the budget" in flat(out), out
