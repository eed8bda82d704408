"""Each case counted once over the history, through the real commands: judging a model's failing rows again, from
the cache or afresh by the same judge, moves no figure of `stats`, the digest or the MCP server's `stats`; a file of
pairs judged three times is its pairs once; a second judge's verdicts are named beside the figures they join."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.cli import base_env, eth_responder, flat, judgebot, judgebot_json, write_rows
from tests.support.openai_server import Reply
from tests.support.pairwise_judge import PrefersMarked

HEADER = ["question", "reference", "answer", "model"]
BENCHMARK = {"Factual Accuracy": 5, "Relevance": 4, "Clarity": 4, "Language Consistency": 4, "Conciseness": 4,
             "Overall": 4.5}
WEEK = "{}-W{:02d}".format(*datetime.now(UTC).isocalendar()[:2])


def eval_set(tmp_path: Path) -> tuple[Path, Path]:
    """hv1 and hv2 answering the same 10 questions: hv1 right on half of them (the others fail), hv2 on all; and a
    file of hv1's five failing rows alone."""
    rows, failing = [], []
    for n in range(10):
        question, reference = f"How do I register for exam {n}?", "In myStudies."
        hv1 = f"Use myStudies, step {n}." if n % 2 == 0 else f"Ask someone about exam {n}."
        rows += [[question, reference, hv1, "hv1"], [question, reference, f"myStudies, page {n}.", "hv2"]]
        if n % 2:
            failing.append([question, reference, hv1, "hv1"])
    return write_rows(tmp_path / "eval.csv", HEADER, rows), write_rows(tmp_path / "failing.csv", HEADER, failing)


def stats(tmp_path: Path) -> dict[tuple[str, str], dict]:
    """`stats --json`: each model's and rubric's figures."""
    code, found, stderr = judgebot_json(tmp_path, "stats")
    assert code == 0, stderr
    return {(figures["model"], figures["rubric"]): figures for figures in found["figures"]}


def counted(document: dict | list) -> dict | list:
    """A document without the judgments a later one replaced (they may grow): the figures."""
    if isinstance(document, list):
        return [counted(item) for item in document]
    return {key: counted(value) if isinstance(value, dict | list) else value for key, value in document.items()
            if key != "replaced_judgments"}


def week_figures(document: dict) -> dict | list:
    """A digest's figures (what judging cost, and which judgment is the lowest, are not figures of the cases)."""
    return counted({key: document[key] for key in ("cases", "error_cases", "figures", "pairwise", "trust")})


def digest(tmp_path: Path) -> dict:
    code, found, stderr = judgebot_json(tmp_path, "digest", "--week", WEEK, "--timezone", "UTC")
    assert code == 0, stderr
    return found


@pytest.mark.slow
async def test_judging_failing_rows_again_moves_no_figure(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, failing = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    found = stats(tmp_path)
    assert (found["hv1", "eth"]["cases"], found["hv1", "eth"]["pass_rate"]) == (10, 0.5)
    before = (counted(found["hv1", "eth"]), counted(found["hv2", "eth"]), week_figures(digest(tmp_path)))
    [week_hv1] = [line for line in before[2]["figures"] if line["model"] == "hv1"]
    assert (week_hv1["cases"], week_hv1["pass_rate"]) == (10, 0.5)

    for extra in ([], [], [], ["--fresh"]):  # three times from the cache, once afresh by the same judge
        code, out = judgebot(tmp_path, "judge", failing.name, "--rubric", "eth", *extra, server=judge_server)
        assert code == 0, out
    assert len(judge_server.bodies()) == 20 + 5  # only the fresh run asked the judge again

    found = stats(tmp_path)
    assert (counted(found["hv1", "eth"]), counted(found["hv2", "eth"]), week_figures(digest(tmp_path))) == before
    assert found["hv1", "eth"]["replaced_judgments"] == 20  # the 20 judgments of those 5 cases, shown apart
    code, history, stderr = judgebot_json(tmp_path, "history", "-n", "50")
    assert code == 0, stderr
    hv1 = [row for row in history["judgments"] if (row["model"], row["rubric"]) == ("hv1", "eth")]
    assert len(hv1) == 10 and len({row["question"] for row in hv1}) == 10  # each case once, its latest verdict

    found_hv1 = found["hv1", "eth"]
    server = StdioServerParameters(command=sys.executable, args=["-m", "bot", "mcp"],
                                   env=base_env(tmp_path, judge_server), cwd=str(tmp_path))
    async with Client(server) as client:
        found = (await client.call_tool("stats", {"days": 0})).structured_content["result"]
    [hv1] = [row for row in found if row["model"] == "hv1"]
    assert hv1 == found_hv1  # the very figures of `judgebot stats --json`
    assert (hv1["cases"], hv1["scored_cases"], hv1["pass_rate"], hv1["replaced_judgments"]) == (10, 10, 0.5, 20)
    assert hv1["cases_by_judge_model"] == {"judge-cli": 10}  # one judge: the verdicts mix none


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_a_second_judge_replaces_verdicts_and_the_figures_say_they_mix(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, failing = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    code, out = judgebot(tmp_path, "judge", failing.name, "--rubric", "eth", server=judge_server,
                         JUDGE_MODEL="judge-other")
    assert code == 0, out

    found = stats(tmp_path)
    assert found["hv1", "eth"]["cases"] == 10  # still ten cases
    assert found["hv1", "eth"]["cases_by_judge_model"] == {"judge-cli": 5, "judge-other": 5}
    assert found["hv2", "eth"]["cases_by_judge_model"] == {"judge-cli": 10}  # hv2's verdicts from one judge
    [week_hv1] = [line for line in digest(tmp_path)["figures"] if line["model"] == "hv1"]
    assert week_hv1["cases_by_judge_model"] == {"judge-cli": 5, "judge-other": 5}
    code, out = judgebot(tmp_path, "stats")  # and the terminal says so, beside the table
    text = flat(out)
    assert "mixed verdicts: hv1 · eth: judged by judge-cli (5 cases), judge-other (5 cases)" in text, out
    assert "hv2 · eth" not in text


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_a_file_of_pairs_judged_three_times_is_its_pairs_once(tmp_path, judge_server):
    judge_server.responder = PrefersMarked()
    rows = [[f"question {i}", f"reference {i}", f"v1 answer {i}" + ("" if i % 10 < 7 else " [better]"),
             f"v2 answer {i}" + (" [better]" if i % 10 < 7 else ""), "bot-v1", "bot-v2"] for i in range(20)]
    write_rows(tmp_path / "pairs.csv", ["question", "reference", "answer_a", "answer_b", "model_a", "model_b"], rows)
    for _ in range(3):
        code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)
        assert code == 0 and "of 20 pairs" in flat(out), out

    [match] = digest(tmp_path)["pairwise"]
    assert (match["a"], match["b"], match["win_rate"]) == ("bot-v1", "bot-v2", 0.7)
    assert (match["pairs"], match["b_won_pairs"], match["a_won_pairs"], match["tied_pairs"]) == (20, 14, 6, 0)


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_a_case_judged_with_two_rubrics_is_two_cases_each_in_its_rubric(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, _ = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    before = stats(tmp_path)
    judge_server.responder = lambda body: Reply.json(BENCHMARK)
    code, out = judgebot(tmp_path, "judge", everything.name, "--rubric", "benchmark", server=judge_server)
    assert code == 0, out
    after = stats(tmp_path)
    assert after["hv1", "eth"] == before["hv1", "eth"]  # eth's figures as they were
    for model in ("hv1", "hv2"):
        assert (after[model, "benchmark"]["cases"], after[model, "benchmark"]["replaced_judgments"]) == (10, 0)
