"""Each case counted once over the history, through the real commands: judging a model's failing rows again, from
the cache or afresh by the same judge, moves no figure of `stats`, the digest or the MCP server's `stats`; a file of
pairs judged three times is its pairs once; a second judge's verdicts are named beside the figures they join."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.cli import base_env, eth_responder, flat, judgebot, write_rows
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


def figures(out: str, model: str) -> str:
    """A model's row of `stats` with the column of judgments counted again taken out (it may grow): the figures."""
    found = re.search(rf"{model} eth (\d+) (\d+) (.*?)(?= hv\d|$)", flat(out))
    assert found, out
    return f"{found.group(1)} {found.group(3)}"


def digest(tmp_path: Path) -> str:
    code, out = judgebot(tmp_path, "digest", "--week", WEEK, "--timezone", "UTC")
    assert code == 0, out
    text = flat(out)
    return text[:text.index("Spent on judging")]  # the figures; what judging cost follows (a fresh run costs)


async def test_judging_failing_rows_again_moves_no_figure(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, failing = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    code, stats = judgebot(tmp_path, "stats")
    assert code == 0 and figures(stats, "hv1").startswith("10 ") and " 50% " in figures(stats, "hv1"), stats
    before = (figures(stats, "hv1"), figures(stats, "hv2"), digest(tmp_path))
    assert "hv1 eth 10 " in before[2] and " 50% " in before[2]

    for extra in ([], [], [], ["--fresh"]):  # three times from the cache, once afresh by the same judge
        code, out = judgebot(tmp_path, "judge", failing.name, "--rubric", "eth", *extra, server=judge_server)
        assert code == 0, out
    assert len(judge_server.bodies()) == 20 + 5  # only the fresh run asked the judge again

    code, stats = judgebot(tmp_path, "stats")
    assert code == 0, stats
    assert (figures(stats, "hv1"), figures(stats, "hv2"), digest(tmp_path)) == before
    assert re.search(r"hv1 eth 10 20 ", flat(stats)), stats  # the 20 judgments of those 5 cases, shown apart
    code, history = judgebot(tmp_path, "history", "-n", "50")
    assert code == 0 and flat(history).count(" eth hv1 ") == 10, history  # each case once, its latest verdict

    server = StdioServerParameters(command=sys.executable, args=["-m", "bot", "mcp"],
                                   env=base_env(tmp_path, judge_server), cwd=str(tmp_path))
    async with Client(server) as client:
        found = (await client.call_tool("stats", {"days": 0})).structured_content["result"]
    [hv1] = [row for row in found if row["model"] == "hv1"]
    assert (hv1["cases"], hv1["scored"], hv1["pass_rate"], hv1["judged_again"]) == (10, 10, 0.5, 20)
    assert hv1["judges"] == {"judge-cli": 10} and hv1["mixed"] == []


def test_a_second_judge_replaces_verdicts_and_the_figures_say_they_mix(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, failing = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    code, out = judgebot(tmp_path, "judge", failing.name, "--rubric", "eth", server=judge_server,
                         JUDGE_MODEL="judge-other")
    assert code == 0, out

    code, stats = judgebot(tmp_path, "stats")
    text = flat(stats)
    assert code == 0 and figures(stats, "hv1").startswith("10 "), stats  # still ten cases
    assert "mixed verdicts: hv1 · eth: judged by judge-cli (5 cases), judge-other (5 cases)" in text, stats
    assert "hv2 · eth" not in text  # hv2's verdicts all come from one judge
    assert "mixed verdicts: hv1 · eth: judged by judge-cli (5 cases), judge-other (5 cases)" in digest(tmp_path)


def test_a_file_of_pairs_judged_three_times_is_its_pairs_once(tmp_path, judge_server):
    judge_server.responder = PrefersMarked()
    rows = [[f"question {i}", f"reference {i}", f"v1 answer {i}" + ("" if i % 10 < 7 else " [better]"),
             f"v2 answer {i}" + (" [better]" if i % 10 < 7 else ""), "bot-v1", "bot-v2"] for i in range(20)]
    write_rows(tmp_path / "pairs.csv", ["question", "reference", "answer_a", "answer_b", "model_a", "model_b"], rows)
    for _ in range(3):
        code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)
        assert code == 0 and "of 20 pairs" in flat(out), out

    text = digest_with_pairs(tmp_path)
    assert "bot-v2 over bot-v1: 70%" in text and "of 20 pairs; won 14, lost 6, tied 0" in text, text
    assert "of 60 pairs" not in text


def digest_with_pairs(tmp_path: Path) -> str:
    code, out = judgebot(tmp_path, "digest", "--week", WEEK, "--timezone", "UTC")
    assert code == 0, out
    return flat(out)


def test_a_case_judged_with_two_rubrics_is_two_cases_each_in_its_rubric(tmp_path, judge_server):
    judge_server.responder = eth_responder
    everything, _ = eval_set(tmp_path)
    assert judgebot(tmp_path, "judge", everything.name, "--rubric", "eth", server=judge_server)[0] == 0
    code, before = judgebot(tmp_path, "stats")
    assert code == 0, before
    judge_server.responder = lambda body: Reply.json(BENCHMARK)
    code, out = judgebot(tmp_path, "judge", everything.name, "--rubric", "benchmark", server=judge_server)
    assert code == 0, out
    code, after = judgebot(tmp_path, "stats")
    assert code == 0 and figures(after, "hv1") == figures(before, "hv1"), after  # eth's figures as they were
    assert re.search(r"hv1 benchmark 10 0 ", flat(after)) and re.search(r"hv2 benchmark 10 0 ", flat(after)), after
