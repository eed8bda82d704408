"""A run against a GPT-6 judge, through the CLI, against a stand-in that enforces GPT-6's rules as OpenAI does: no
request is refused for its parameters, every token is priced (reasoning tokens as output), the summary shows them,
and the effort is set per judge, validated before any request."""

from __future__ import annotations

import shutil

import pytest

from bot.llm.prices import builtin_prices
from tests.support.cli import EXAMPLE, eth_responder, history, judgebot
from tests.support.openai_server import GPT6_REASONING_TOKENS, FakeJudgeServer


@pytest.fixture
def gpt6_server(judge_server: FakeJudgeServer) -> FakeJudgeServer:
    judge_server.responder = eth_responder
    judge_server.enforce_gpt6 = True
    return judge_server


def test_a_run_with_gpt_6_luna_sends_no_refused_request_and_prices_every_token(tmp_path, gpt6_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=gpt6_server,
                         JUDGE_MODEL="gpt-6-luna")
    assert code == 0, out
    bodies = gpt6_server.bodies()
    assert bodies and gpt6_server.refused == []  # not one request refused for its parameters
    # luna reasons by default: no temperature, and the judging effort ("low") rather than its own "medium"
    assert all("temperature" not in body and body["reasoning_effort"] == "low" for body in bodies)
    billed = gpt6_server.billed
    assert billed["tokens_reasoning"] == GPT6_REASONING_TOKENS["low"] * len(bodies)
    [(tokens_in, tokens_out, reasoning, cost)] = history(
        tmp_path, "SELECT sum(tokens_in), sum(tokens_out), sum(tokens_reasoning), sum(cost_usd) FROM judgment")
    assert (tokens_in, tokens_out, reasoning) == (billed["tokens_in"], billed["tokens_out"],
                                                  billed["tokens_reasoning"])
    luna = builtin_prices().models["gpt-6-luna"]  # $0.10 in, $0.50 out (reasoning included) per million
    assert cost == pytest.approx((billed["tokens_in"] * luna.input + billed["tokens_out"] * luna.output) / 1e6)
    assert "of them reasoning" in out and f"{billed['tokens_reasoning']:,} of them reasoning" in out
    # each judgment keeps the effort its judge was asked at; the summary names the judge with it
    assert history(tmp_path, "SELECT DISTINCT reasoning_effort FROM judgment") == [("low",)]
    assert "judge gpt-6-luna · effort low" in out


def test_one_triple_names_its_judges_effort_and_a_jury_with_mixed_efforts_keeps_each_on_its_samples(
        tmp_path, gpt6_server) -> None:
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "Where do I see my grades?", "-r", "In myStudies.",
                         "-a", "In myStudies.", server=gpt6_server, JUDGE_MODEL="gpt-6-luna",
                         JUDGE_REASONING_EFFORT="high")
    assert code == 0, out
    assert "judge gpt-6-luna · effort high" in out
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--judges",
                         "gpt-6-luna medium, gpt-6.1-terra", server=gpt6_server)
    assert code == 0, out
    samples = set(history(tmp_path, "SELECT judge_model, reasoning_effort FROM judgment_sample"))
    assert samples == {("gpt-6-luna", "medium"), ("gpt-6.1-terra", "low")}
    # the row's verdict of a jury at two efforts names none; its samples name each
    assert history(tmp_path, "SELECT DISTINCT reasoning_effort FROM judgment WHERE run_id = 2") == [(None,)]


def test_without_the_rules_known_the_same_server_refuses_what_judgebot_learned_by_refusal(tmp_path,
                                                                                         gpt6_server) -> None:
    # A GPT-6 model the table does not list (a router's own name for it): judgebot sends its temperature, is refused
    # once, and drops it, as it does for any unknown model; the rows are still judged.
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=gpt6_server,
                         JUDGE_MODEL="gpt-6-luna-preview")
    assert code == 0, out
    assert gpt6_server.refused and all("temperature" in body for body in gpt6_server.refused)


@pytest.mark.parametrize("model", ["gpt-6.2-sol", "gpt-6.2-astra"])
def test_effort_none_for_a_model_that_refuses_it_is_refused_before_any_request(tmp_path, gpt6_server, model) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=gpt6_server,
                         JUDGE_MODEL=model, JUDGE_REASONING_EFFORT="none")
    assert code == 2 and gpt6_server.bodies() == []
    assert (f"JUDGE_REASONING_EFFORT: the judge {model} does not accept reasoning effort 'none' (it accepts low, "
            "medium, high, xhigh, max)") in " ".join(out.split())


def test_effort_none_on_luna_sends_its_temperature(tmp_path, gpt6_server) -> None:
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "Where do I see my grades?",
                         "-r", "In myStudies.", "-a", "In myStudies.", server=gpt6_server,
                         JUDGE_MODEL="gpt-6-luna", JUDGE_REASONING_EFFORT="none")
    assert code == 0, out
    [body] = gpt6_server.bodies()
    assert (body["reasoning_effort"], body["temperature"]) == ("none", 0.0) and gpt6_server.refused == []


def test_an_effort_that_is_no_effort_is_a_clear_error(tmp_path, gpt6_server) -> None:
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=gpt6_server,
                         JUDGE_REASONING_EFFORT="extreme")
    assert code == 2 and gpt6_server.bodies() == []
    assert ("JUDGE_REASONING_EFFORT: Input should be 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' or 'max'"
            in " ".join(out.split()))


def test_each_jury_member_has_its_effort_and_samples_of_a_reasoning_judge_send_no_temperature(tmp_path,
                                                                                              gpt6_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--judges",
                         "gpt-6-luna medium, gpt-6.1-terra", "--samples", "2", server=gpt6_server)
    assert code == 0, out
    efforts = {(body["model"], body["reasoning_effort"]) for body in gpt6_server.bodies()}
    assert efforts == {("gpt-6-luna", "medium"), ("gpt-6.1-terra", "low")}
    assert gpt6_server.refused == [] and not any("temperature" in body for body in gpt6_server.bodies())
    # the run keeps each member's effort, so a resume asks them the same way
    [(judges,)] = history(tmp_path, "SELECT judges FROM run")
    assert '"effort": "medium"' in judges and "terra" in judges


def test_a_jury_member_with_an_effort_it_refuses_or_no_effort_at_all_is_refused_before_any_request(
        tmp_path, gpt6_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--judges",
                         "gpt-6-luna low,gpt-6.2-sol none", server=gpt6_server)
    assert code == 2 and gpt6_server.bodies() == []
    assert "the judge gpt-6.2-sol's effort: the judge gpt-6.2-sol does not accept reasoning effort 'none'" in \
        " ".join(out.split())
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--judges", "gpt-6-luna lots",
                         server=gpt6_server)
    assert code == 2 and "'lots' is not a reasoning effort; use one of none, minimal, low, medium, high, xhigh, max" \
        in " ".join(out.split())
