"""The Responses API: a run with JUDGE_API=responses against a stand-in that serves /v1/responses and enforces GPT-6's
rules in its parameters' names judges every row, prices every token (reasoning included) and sends no refused
request; the same reply reading, repair, refusals and Batch API as through Chat Completions."""

from __future__ import annotations

import shutil

import pytest

from bot.llm.prices import builtin_prices
from bot.llm.responses_api import api_for, read_response, responses_body
from tests.support.cli import EXAMPLE, eth_responder, flat, history, judgebot, write_rows
from tests.support.openai_server import GPT6_REASONING_TOKENS, Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.responses_server import ResponsesJudgeServer

RESPONSES = {"JUDGE_API": "responses"}


@pytest.fixture
def responses_server():
    server = ResponsesJudgeServer().start()
    server.responder = eth_responder
    server.enforce_gpt6 = True
    yield server
    server.stop()


def test_auto_asks_openais_own_endpoint_through_responses_and_any_other_through_chat() -> None:
    assert api_for("auto", None) == "responses"
    assert api_for("auto", "https://api.openai.com/v1") == "responses"
    assert api_for("auto", "http://127.0.0.1:8000/v1") == "chat"  # vLLM, llama.cpp
    assert api_for("auto", "https://myres.openai.azure.com/openai/v1/") == "chat"
    assert api_for("chat", "https://api.openai.com/v1") == "chat" and api_for("responses", "http://x/v1") == "responses"


def test_a_chat_body_becomes_the_responses_body_that_asks_the_same() -> None:
    chat = {"model": "gpt-6-luna", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "eth", "schema": {"type": "object"},
                                                                       "strict": True}},
            "reasoning_effort": "low", "max_completion_tokens": 900}
    body = responses_body(chat)
    assert body == {"model": "gpt-6-luna", "input": chat["messages"], "store": False,
                    "text": {"format": {"type": "json_schema", "name": "eth", "schema": {"type": "object"},
                                        "strict": True}},
                    "reasoning": {"effort": "low"}, "max_output_tokens": 900}
    assert responses_body({"model": "m", "messages": [], "response_format": {"type": "json_object"},
                           "temperature": 0.0})["text"] == {"format": {"type": "json_object"}}


def test_a_response_reads_as_the_completion_a_chat_reply_gives() -> None:
    from bot.errors import JudgeCallError
    from bot.llm.answers import NotACompletion
    from tests.support.response_objects import response_object

    reply = Reply(content='{"x": 1}', tokens_in=120, tokens_out=30, cached_tokens=64, reasoning_tokens=96)
    done = read_response(response_object("resp_1", {"model": "m"}, reply, "completed"), 5)
    assert (done.text, done.tokens_in, done.tokens_out, done.cached_tokens, done.reasoning_tokens) == (
        '{"x": 1}', 120, 126, 64, 96)
    cut = read_response(response_object("resp_2", {"model": "m"}, reply, "incomplete"), 5)
    assert cut.finish_reason == "length"  # what the judgment reports as a reply cut off at its token limit
    queued = read_response(response_object("resp_3", {"model": "m", "background": True}, None, "queued"), 5)
    assert queued.id == "resp_3" and queued.status == "queued"
    with pytest.raises(JudgeCallError, match="resp_4 failed"):
        read_response(response_object("resp_4", {"model": "m"}, None, "failed"), 5)
    with pytest.raises(NotACompletion, match="not a response"):
        read_response("<html>bad gateway</html>", 5)


def test_a_run_through_the_responses_api_sends_no_refused_request_and_prices_every_token(tmp_path,
                                                                                         responses_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")

    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=responses_server,
                         JUDGE_MODEL="gpt-6-luna", **RESPONSES)

    assert code == 0, out
    bodies = responses_server.response_requests
    # every request the server answered came to /v1/responses, none to /v1/chat/completions
    assert bodies and responses_server.refused == [] and len(responses_server.bodies()) == len(bodies)
    assert all("temperature" not in body and body["reasoning"] == {"effort": "low"} and "messages" not in body
               and body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["strict"]
               for body in bodies)
    billed = responses_server.billed
    assert billed["tokens_reasoning"] == GPT6_REASONING_TOKENS["low"] * len(bodies) > 0
    [(rows, tokens_in, tokens_out, reasoning, cost)] = history(
        tmp_path, "SELECT count(*), sum(tokens_in), sum(tokens_out), sum(tokens_reasoning), sum(cost_usd) "
                  "FROM judgment WHERE status = 'scored'")
    assert rows == len(bodies)
    assert (tokens_in, tokens_out, reasoning) == (billed["tokens_in"], billed["tokens_out"], billed["tokens_reasoning"])
    luna = builtin_prices().models["gpt-6-luna"]
    assert cost == pytest.approx((billed["tokens_in"] * luna.input + billed["tokens_out"] * luna.output) / 1e6)
    assert f"{billed['tokens_reasoning']:,} of them reasoning" in out


def test_an_invalid_reply_is_repaired_through_the_responses_api_with_the_reply_as_an_input_item(
        tmp_path, responses_server) -> None:
    def answer(body: dict) -> Reply:
        if len(body["messages"]) == 2:
            return Reply(content='{"correctness": 7}')  # breaks the rubric: one repair
        return eth_reply("Correct")

    responses_server.responder = answer
    write_rows(tmp_path / "one.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "myStudies."]])

    code, out = judgebot(tmp_path, "judge", "one.csv", "--rubric", "eth", server=responses_server,
                         JUDGE_MODEL="gpt-6-luna", **RESPONSES)

    assert code == 0, out
    first, repair = responses_server.response_requests
    assert [item["role"] for item in repair["input"]] == ["system", "user", "assistant", "user"]
    assert repair["input"][2]["content"] == '{"correctness": 7}'
    assert history(tmp_path, "SELECT status FROM judgment") == [("scored",)]


def test_an_effort_the_model_refuses_through_responses_stops_before_any_request(tmp_path, responses_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=responses_server,
                         JUDGE_MODEL="gpt-6.2-sol", JUDGE_REASONING_EFFORT="none", **RESPONSES)
    assert code != 0 and "does not accept reasoning effort 'none'" in flat(out)
    assert responses_server.response_requests == []


def test_an_unlisted_reasoning_model_learns_its_temperature_from_one_refusal_as_through_chat(tmp_path,
                                                                                          responses_server) -> None:
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=responses_server,
                         JUDGE_MODEL="gpt-6-luna-preview", CONCURRENCY="1", **RESPONSES)
    assert code == 0, out
    refused = responses_server.refused
    assert len(refused) == 1 and refused[0]["temperature"] == 0.0
    assert all("temperature" not in body for body in responses_server.response_requests[1:])


def test_a_batch_through_the_responses_api_names_v1_responses_and_reads_its_replies(tmp_path,
                                                                                     responses_server) -> None:
    responses_server.enforce_gpt6 = False
    responses_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000,
                                                    tokens_out=100)
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
               [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(4)])

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=responses_server,
                         BATCH_POLL_SECONDS="0.05", JUDGE_MODEL="gpt-4o", **RESPONSES)

    assert code == 0, out
    lines = responses_server.batch_requests()
    assert {line["url"] for line in lines} == {"/v1/responses"} and len(lines) == 4
    assert all("input" in line["body"] and "messages" not in line["body"] for line in lines)
    assert [batch.endpoint for batch in responses_server.batches.values()] == ["/v1/responses"]
    [(scored, cost)] = history(tmp_path, "SELECT count(*), sum(cost_usd) FROM judgment WHERE status = 'scored'")
    gpt4o = builtin_prices().models["gpt-4o"]
    assert scored == 4 and cost == pytest.approx(4 * (1_000 * gpt4o.input + 100 * gpt4o.output) / 1e6 * 0.5)
    assert triple_of(responses_server.bodies()[0])[2].startswith("Use myStudies")
