"""`judgebot compare`: two models under test paired on the same questions, each case once, one rubric at a time, with
figures checked against scipy (the paired t interval, the sign test) and by hand (McNemar's exact binomial)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from bot.trust.stats.mcnemar import p_text
from tests.support.cli import ROOT, flat, history, judgebot, judgebot_json, write_rows
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.scripted_judge import Script

# q1..q6 answered by bot-v1 and bot-v2; eth headlines: Correct 100, Generic 25, Refusal 0
V1 = {"q1": "Correct", "q2": "Correct", "q3": "Generic", "q4": "Generic", "q5": "Refusal", "q6": "Correct"}
V2 = {"q1": "Correct", "q2": "Generic", "q3": "Correct", "q4": "Correct", "q5": "Correct", "q6": "Correct"}
HEADLINE = {"Correct": 100.0, "Generic": 25.0, "Refusal": 0.0}


def t_interval(b: list[float], a: list[float]) -> list[float]:
    """scipy's paired t interval of B less A, held within -100..+100, where a difference of two headlines lies."""
    found = stats.ttest_rel(b, a).confidence_interval(0.95)
    return [max(found.low, -100), min(found.high, 100)]


def t_text(b: list[float], a: list[float], unit: str = "questions") -> str:
    """That interval as compare prints it."""
    low, high = t_interval(b, a)
    return f"95% CI {low:+.1f} to {high:+.1f} (paired t over {len(a)} {unit})"


def compared(tmp_path: Path, *args: str, **env: str) -> list[dict]:
    """`compare ARGS --json`: each rubric's comparison."""
    code, found, stderr = judgebot_json(tmp_path, "compare", *args, **env)
    assert code == 0, stderr
    return found["rubrics"]


def moved(found: dict) -> tuple[int, int, int]:
    """(B higher, equal, B lower) over the pairs."""
    return found["b_higher_questions"], found["equal_questions"], found["b_lower_questions"]


def tagged(body: dict) -> Reply:
    """The answer names its verdict: "... Correct", "... Generic", "... Refusal"; GARBLE gets prose (invalid) and
    FAIL400 a 400 (a judge error). A team copy of eth (its system says so) hears every answer one grade lower."""
    answer = triple_of(body)[2]
    if "GARBLE" in answer:
        return Reply(content="Looks fine to me.")
    if "FAIL400" in answer:
        return Reply(status=400, error={"message": "cannot be served", "type": "invalid_request_error", "code": None})
    tag = answer.rsplit(" ", 1)[-1]
    if "team copy" in body["messages"][0]["content"]:
        tag = {"Correct": "Generic", "Generic": "Refusal", "Refusal": "Refusal"}[tag]
    return eth_reply(tag)


def team_rubric(tmp_path: Path) -> Path:
    """A directory holding team-eth: eth's scales under another name, whose judge grades one step lower."""
    team = tmp_path / "team"
    team.mkdir()
    text = (ROOT / "rubrics" / "eth.yaml").read_text("utf-8")
    text = (text.replace("name: eth\n", "name: team-eth\n").replace("aliases: [eth-audit, auditor, strict]", "aliases: []")
            .replace("You audit answers given by an assistant", "You audit answers (team copy) given by an assistant"))
    (team / "team-eth.yaml").write_text(text, encoding="utf-8")
    return team


def test_compare_two_models_of_a_run_with_figures_checked_against_scipy(tmp_path: Path, judge_server) -> None:
    plan = {f"v1 says {q}": [tag] for q, tag in V1.items()} | {f"v2 says {q}": [tag] for q, tag in V2.items()}
    judge_server.responder = Script({"judge-cli": plan})
    rows = [[q, "Use myStudies.", f"v1 says {q}", "bot-v1"] for q in V1]
    rows += [[f"  {q} ", "Use  myStudies.", f"v2 says {q}", "bot-v2"] for q in V2]  # paired whatever the spacing
    rows.append(["q7", "Use myStudies.", "v2 says q7", "bot-v2"])  # v2 only: named, not dropped silently
    plan["v2 says q7"] = ["Correct"]
    write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "model"], rows)
    code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out
    assert "bot-v2 against bot-v1, rubric eth: 6 questions with a score on both sides" in flat(out)  # the summary

    [eth] = compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2", "--run", "1")
    a = [HEADLINE[V1[q]] for q in V1]
    b = [HEADLINE[V2[q]] for q in V1]  # differences 0, -75, +75, +75, +100, 0
    assert (eth["rubric"], eth["paired_questions"]) == ("eth", 6)
    assert [row["question"] for row in eth["only_b"]] == ["q7"] and eth["only_a"] == []
    assert eth["a_pairs_by_judge_model"] == eth["b_pairs_by_judge_model"] == {"judge-cli": 6}
    assert eth["other_judge_pairs"] == eth["other_rubric_version_pairs"] == 0
    assert eth["a_mean_headline"] == pytest.approx(58.333, abs=1e-3) and eth["b_mean_headline"] == 87.5
    difference = eth["difference"]
    assert difference["mean"] == pytest.approx(29.1667, abs=1e-4) and difference["pairs"] == 6
    assert difference["interval"] == pytest.approx(t_interval(b, a))
    # 3 higher, 2 equal, 1 lower: the exact two-sided binomial over the 4 that moved
    assert moved(eth) == (3, 2, 1) and eth["sign_test_p"] == pytest.approx(stats.binomtest(3, 4).pvalue)
    # pass/fail: q3, q4, q5 pass only with v2; q2 only with v1: McNemar exact, 2 * (1 + 4) / 16
    assert (eth["b_only_passed_questions"], eth["a_only_passed_questions"], eth["mcnemar_p"]) == (3, 1, 0.625)
    assert eth["tag_moves"] == [{"a_tag": "Correct", "b_tag": "Correct", "questions": 2},
                                {"a_tag": "Generic", "b_tag": "Correct", "questions": 2},
                                {"a_tag": "Correct", "b_tag": "Generic", "questions": 1},
                                {"a_tag": "Refusal", "b_tag": "Correct", "questions": 1}]
    assert eth["regressions"] == [{"question": "q2", "a_headline": 100.0, "b_headline": 25.0, "difference": -75.0}]
    assert eth["improvements"][0] == {"question": "q5", "a_headline": 0.0, "b_headline": 100.0, "difference": 100.0}
    similar = eth["similar_length_difference"]  # every pair's answers are of similar length
    assert similar["pairs"] == 6 and similar["interval"] == pytest.approx(t_interval(b, a))

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--run", "1")
    text = flat(out)  # as a person reads it
    assert code == 0, out
    assert "bot-v2 against bot-v1, rubric eth: 6 questions with a score on both sides" in text
    assert "1 answered by bot-v2 only, left out: q7" in text
    assert "judged by judge-cli on both sides" in text and "warning" not in text
    assert f"mean headline: bot-v1 58.3, bot-v2 87.5; paired difference +29.2, {t_text(b, a)}" in text
    assert f"bot-v2 higher on 3, equal on 2, lower on 1 (sign test {p_text(stats.binomtest(3, 4).pvalue)})" in text

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1")
    assert code == 2 and "compare two runs" in flat(out)
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v9")
    assert code == 2 and "no judged answers of bot-v9" in flat(out)
    code, out = judgebot(tmp_path, "compare", "1", "1")  # a run of two models is not one side
    assert code == 2 and "run 1 holds the answers of 2 models under test (bot-v1, bot-v2)" in flat(out)


def test_a_history_judged_three_times_counts_each_question_once(tmp_path: Path, judge_server) -> None:
    judge_server.responder = tagged
    tags_a = ["Correct", "Generic", "Refusal", "Correct", "Generic", "Correct", "Refusal", "Generic", "Correct",
              "Correct"]
    tags_b = ["Correct", "Correct", "Generic", "Correct", "Correct", "Generic", "Correct", "Correct", "Correct",
              "Refusal"]
    rows = [[f"q{n}", "Use myStudies.", f"v1 on q{n}: {tag}", "bot-v1"] for n, tag in enumerate(tags_a)]
    rows += [[f"q{n}", "Use myStudies.", f"v2 on q{n}: {tag}", "bot-v2"] for n, tag in enumerate(tags_b)]
    rows.append(rows[0])  # one case twice in the file: counted once
    write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "model"], rows)
    for fresh in ((), (), ("--fresh",)):  # judged, read again from the cache, judged again by the same judge
        code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", "eth", *fresh, server=judge_server)
        assert code == 0, out
    assert history(tmp_path, "SELECT count(*) FROM judgment") == [(63,)]

    [eth] = compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2")
    assert eth["paired_questions"] == 10
    assert (eth["repeated_a_questions"], eth["repeated_b_questions"], eth["only_a"], eth["only_b"]) == (0, 0, [], [])
    a, b = [HEADLINE[tag] for tag in tags_a], [HEADLINE[tag] for tag in tags_b]
    assert eth["difference"]["interval"] == pytest.approx(t_interval(b, a))
    wins = sum(y > x for x, y in zip(a, b, strict=True))
    losses = sum(y < x for x, y in zip(a, b, strict=True))
    assert moved(eth) == (wins, 10 - wins - losses, losses)
    assert eth["sign_test_p"] == pytest.approx(stats.binomtest(wins, wins + losses).pvalue)
    for run in ("1", "3"):  # each run alone reads the same: its rows, one per case
        assert compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2", "--run", run) == [eth]


@pytest.mark.slow
def test_runs_compare_as_mirror_images_and_runs_of_two_rubrics_are_refused(tmp_path: Path, judge_server) -> None:
    judge_server.responder = tagged
    team = str(team_rubric(tmp_path))
    tags_a = ["Correct", "Generic", "Refusal", "Correct", "Generic", "Correct", "Refusal", "Generic"]
    tags_b = ["Correct", "Correct", "Generic", "Generic", "Correct", "Correct", "Correct", "Refusal"]
    for name, tags, model in (("v1.csv", tags_a, "bot-v1"), ("v2.csv", tags_b, "bot-v2")):
        rows = [[f"q{n}", "Use myStudies.", f"{model} on q{n}: {tag}", model] for n, tag in enumerate(tags)]
        write_rows(tmp_path / name, ["question", "reference", "answer", "model"], [*rows, rows[2]])  # q2 twice
    commands = [("v1.csv", "eth"), ("v2.csv", "eth"), ("v1.csv", "team-eth"), ("v2.csv", "team-eth")]
    for name, rubric in commands:  # runs 1-4
        code, out = judgebot(tmp_path, "judge", name, "--rubric", rubric, server=judge_server, RUBRICS_DIR=team)
        assert code == 0, out

    code, document, stderr = judgebot_json(tmp_path, "compare", "1", "2", RUBRICS_DIR=team)
    assert code == 0 and (document["a"], document["b"]) == ("run 1", "run 2"), stderr
    [forward] = document["rubrics"]
    [backward] = compared(tmp_path, "2", "1", RUBRICS_DIR=team)
    assert forward["paired_questions"] == backward["paired_questions"] == 8
    a, b = [HEADLINE[tag] for tag in tags_a], [HEADLINE[tag] for tag in tags_b]
    assert forward["difference"]["interval"] == pytest.approx(t_interval(b, a))
    assert backward["difference"]["interval"] == pytest.approx(t_interval(a, b))
    low, high = forward["difference"]["interval"]
    assert backward["difference"]["mean"] == pytest.approx(-forward["difference"]["mean"])
    assert backward["difference"]["interval"] == pytest.approx([-high, -low])
    assert moved(backward) == moved(forward)[::-1] and backward["mcnemar_p"] == forward["mcnemar_p"]
    assert backward["sign_test_p"] == forward["sign_test_p"]

    code, out = judgebot(tmp_path, "compare", "2", "3", RUBRICS_DIR=team)
    assert code == 2, out
    assert ("run 2 was graded with rubric eth and run 3 with team-eth: answers are compared on one rubric"
            in flat(out))


def test_a_history_of_two_rubrics_compares_each_on_its_own(tmp_path: Path, judge_server) -> None:
    judge_server.responder = tagged
    team = str(team_rubric(tmp_path))
    tags_a = ["Correct", "Generic", "Correct", "Generic", "Correct"]
    tags_b = ["Correct", "Correct", "Correct", "Correct", "Generic"]
    rows = [[f"q{n}", "Use myStudies.", f"v1 on q{n}: {tag}", "bot-v1"] for n, tag in enumerate(tags_a)]
    rows += [[f"q{n}", "Use myStudies.", f"v2 on q{n}: {tag}", "bot-v2"] for n, tag in enumerate(tags_b)]
    write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "model"], rows)
    for rubric in ("eth", "team-eth"):
        code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", rubric, server=judge_server, RUBRICS_DIR=team)
        assert code == 0, out

    eth, team_eth = compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2", RUBRICS_DIR=team)
    assert (eth["rubric"], eth["paired_questions"]) == ("eth", 5)
    assert (team_eth["rubric"], team_eth["paired_questions"]) == ("team-eth", 5)
    a, b = [HEADLINE[tag] for tag in tags_a], [HEADLINE[tag] for tag in tags_b]
    lower = {"Correct": 25.0, "Generic": 0.0}  # the team copy grades one step lower
    team_a, team_b = [lower[tag] for tag in tags_a], [lower[tag] for tag in tags_b]
    assert eth["difference"]["interval"] == pytest.approx(t_interval(b, a))
    assert team_eth["difference"]["interval"] == pytest.approx(t_interval(team_b, team_a))
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", RUBRICS_DIR=team)
    assert code == 0 and "answers graded with 2 rubrics, compared one rubric at a time: eth, team-eth (`--rubric " \
        "NAME` for one)" in flat(out), out

    assert compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2", "--rubric", "team-eth",
                    RUBRICS_DIR=team) == [team_eth]
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--judge", "pairwise",
                         RUBRICS_DIR=team)
    assert code == 2 and "--judge asks about each pair once, so name one with --rubric" in flat(out), out


def test_other_judges_and_unscored_rows_are_named_not_taken_for_unanswered(tmp_path: Path, judge_server) -> None:
    judge_server.responder = tagged
    v1 = [[f"q{n}", "R.", f"v1 on q{n}: {tag}", "bot-v1"] for n, tag in enumerate(["Correct", "Generic", "Correct"])]
    v1 += [["q3", "R.", "GARBLE v1 on q3", "bot-v1"], ["q4", "R.", "FAIL400 v1 on q4", "bot-v1"]]
    v2 = [[f"q{n}", "R.", f"v2 on q{n}: Correct", "bot-v2"] for n in range(6)]  # q5: v2 only
    write_rows(tmp_path / "v1.csv", ["question", "reference", "answer", "model"], v1)
    write_rows(tmp_path / "v2.csv", ["question", "reference", "answer", "model"], v2)
    code, out = judgebot(tmp_path, "judge", "v1.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="judge-a")
    assert code == 1, out  # two rows without a score
    code, out = judgebot(tmp_path, "judge", "v2.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="judge-b")
    assert code == 0, out

    [eth] = compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2")
    assert eth["paired_questions"] == 3
    assert [row["question"] for row in eth["only_b"]] == ["q5"] and eth["only_a"] == []
    assert [(row["question"], row["status"]) for row in eth["unscored_a"]] == [("q3", "invalid"), ("q4", "error")]
    assert (eth["a_pairs_by_judge_model"], eth["b_pairs_by_judge_model"]) == ({"judge-a": 3}, {"judge-b": 3})
    assert eth["other_judge_pairs"] == 3
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2")
    text = flat(out)  # said to a person, beside the figures
    assert code == 0 and "2 not scored for bot-v1 (invalid: 1, error: 1), left out: q3; q4" in text, out
    assert ("warning: on 3 of the 3 pairs the two answers were judged by different judges: part of the difference "
            "may be the judges', not the models'") in text
    [eth] = compared(tmp_path, "2", "1")
    assert [row["status"] for row in eth["unscored_b"]] == ["invalid", "error"] and eth["unscored_a"] == []


def test_pairs_that_all_differ_alike_get_no_interval_and_a_reason(tmp_path: Path, judge_server) -> None:
    judge_server.responder = tagged
    rows = [[f"q{n}", "R.", f"v1 on q{n}: Refusal", "bot-v1"] for n in range(3)]
    rows += [[f"q{n}", "R.", f"v2 on q{n}: Correct", "bot-v2"] for n in range(3)]
    write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "model"], rows)
    code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out

    [eth] = compared(tmp_path, "--model", "bot-v1", "--model", "bot-v2")
    assert eth["difference"] == {"mean": 100.0, "interval": None, "pairs": 3}
    assert moved(eth) == (3, 0, 0) and eth["sign_test_p"] == pytest.approx(stats.binomtest(3, 3).pvalue)
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2")
    text = flat(out)  # and the reason, said to a person
    assert code == 0, out
    assert ("paired difference +100.0 (no interval: the difference is +100.0 on each of the 3 questions, no spread "
            "to estimate one from)") in text
    assert "CI" not in text
