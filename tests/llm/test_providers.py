"""The judge client against what real providers answer: their error bodies and headers, replayed over real HTTP.

Billing refusals and sustained outages pause the run; OpenAI's rate-limit headers and hints set the wait; a strict
schema some endpoints refuse steps down per rubric (first to a portable schema); reasoning settings; Azure's URL
forms; cached prompt tokens.
"""

from __future__ import annotations

import asyncio
import copy
import json

import httpx2
import pytest

from bot.config import Settings
from bot.errors import JudgeCallError, RunStopped, SetupError
from bot.judge.judgment import judge
from bot.judge.panel import open_bench, open_panel
from bot.llm.answers import RESUME
from bot.llm.configured import judge_client_from, make_judge_client
from bot.llm.endpoints import RANGE_KEYWORDS, portable_schema
from bot.llm.pacing import Throttle, duration, rate_limit_wait
from bot.llm.retries import observing_retries
from bot.records import RunState
from bot.runs import execute_run, start_run
from bot.store import Store, iter_judgments
from tests.support.csv_rows import rows_of
from tests.support.llm_calls import ETH_OK, FASTER_THAN_BACKOFF, MESSAGES, SCHEMA, TRIPLE
from tests.support.openai_server import Reply


def _format_of(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("type")


def _schema_of(body: dict) -> dict:
    return body["response_format"]["json_schema"]["schema"]


# --- 1. an account without credit pauses the run ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply.openrouter_no_credit(), "no credit left (402): Insufficient credits. Add more using "
                                       "https://openrouter.ai/settings/credits; add credit or raise the limit"),
        (Reply.anthropic_no_credit(), "no credit left (400): Your credit balance is too low to access the Anthropic "
                                      "API. Please go to Plans & Billing to upgrade or purchase credits; add credit"),
        (Reply.quota(), "no quota left (insufficient_quota): You exceeded your current quota; add credit"),
    ],
    ids=["openrouter-402", "anthropic-400", "openai-quota"],
)
async def test_a_billing_refusal_stops_the_run_with_the_providers_sentence(judge_server, make_client, rubrics, reply,
                                                                          words):
    judge_server.enqueue(reply, Reply.json(ETH_OK))
    client = make_client()
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    message = str(caught.value)
    assert message.startswith("the judge account has no ") and words in message
    assert message.endswith(RESUME)
    assert len(judge_server.bodies()) == 1  # never retried
    assert client.throttle.rate_limited_count == 0


async def test_a_billing_sentence_is_kept_on_one_printable_line_of_bounded_length(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply(status=402, body=json.dumps({"error": {"message": "No credit\n\x00\x1b[31m" + "x" * 900,
                                                                      "code": 402}})))
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, make_client())
    message = str(caught.value)
    assert "No credit [31mxxx" in message and message.isprintable() and len(message) < 450


# --- 2. a sustained outage pauses the run; a single 5xx is retried -------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "detail"),
    [
        (Reply.anthropic_overloaded(), "529 Overloaded", "Overloaded"),
        (Reply.openrouter_no_provider(), "503 Service Unavailable",
         "There is no available model provider that meets your routing requirements"),
        (Reply.proxy_unavailable(), "503 Service Unavailable", "503 Service Temporarily Unavailable"),
        (Reply.server_error(504), "504 Gateway Timeout", "The server had an error"),
    ],
    ids=["anthropic-529", "openrouter-503", "proxy-html-503", "504"],
)
async def test_an_endpoint_that_keeps_failing_pauses_the_run_saying_why(judge_server, make_client, rubrics, reply,
                                                                        status, detail):
    judge_server.responder = lambda body: reply
    client = make_client(max_retries=0, outage_budget=0.2)
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    message = str(caught.value)
    assert message.startswith(f"the judge endpoint has been failing with {status} for ")
    assert detail in message and message.endswith(f"; {RESUME} once it answers")
    assert message.isprintable() and len(message) < 500
    # past JUDGE_MAX_RETRIES: while nothing succeeds the endpoint is down, and the time budget decides
    assert len(judge_server.bodies()) >= 2


async def test_an_outage_pauses_a_file_run_with_every_row_still_pending(tmp_path, rubrics, judge_server, make_client):
    store = Store.open(f"sqlite:///{tmp_path / 'history.db'}")
    eth = rubrics.get("eth")
    run = start_run(store, rubric=eth, rows=rows_of("a", "b", "c", "d"), judge_model="judge-test",
                    columns=["question", "reference", "answer"])
    judge_server.responder = lambda body: Reply.anthropic_overloaded()
    outcome = await execute_run(store, run, eth, make_client(max_retries=1, outage_budget=0.3), concurrency=4)
    assert outcome.status == RunState.PAUSED
    assert outcome.stop_reason is not None and "has been failing with 529 Overloaded" in outcome.stop_reason
    assert {j.status for j in iter_judgments(store, run.id)} == {"pending"}  # none burnt as an error


async def test_an_outage_slows_the_shared_throttle_down(judge_server, make_client, rubrics):
    judge_server.enqueue(*[Reply.openrouter_no_provider() for _ in range(8)])
    judge_server.responder = lambda body: Reply.json(ETH_OK)
    client = make_client(concurrency=8)
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), TRIPLE, client) for _ in range(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8
    assert client.throttle.limit == 5  # 8 failures in a row halved it to 4; 4 successes at 4 grew it by one
    assert client.throttle.failing_since is None  # the outage is over


async def test_an_outage_clock_counts_failures_in_a_row_not_the_quiet_between_them():
    throttle = Throttle(8, outage_gap=0.05)
    assert throttle.failed() == 0.0
    await asyncio.sleep(0.02)
    assert 0.02 <= throttle.failed() < 0.05  # the same outage
    await asyncio.sleep(0.08)
    assert throttle.failed() == 0.0  # a run resumed after a pause starts a new one
    throttle.succeeded()
    assert throttle.failing_since is None


async def test_a_single_503_is_retried_and_changes_nothing(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.openrouter_no_provider(), Reply.json(ETH_OK))
    client = make_client()
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored" and len(judge_server.bodies()) == 2
    assert client.throttle.limit == 8 and client.throttle.failing_since is None


# --- 3. a 200 carrying an error object ----------------------------------------------------------------------------


async def test_a_200_error_object_keeps_the_message_and_counts_toward_an_outage(judge_server, make_client, rubrics):
    judge_server.responder = lambda body: Reply.openrouter_error_object()
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, make_client(max_retries=1, outage_budget=0.3))
    message = str(caught.value)
    assert "has been failing with errors in its 200 replies" in message
    assert "'Provider returned error'" in message and message.endswith("once it answers")


async def test_an_error_inside_a_choice_is_retried_not_read_as_an_empty_reply(judge_server, make_client, rubrics):
    choice = {"index": 0, "finish_reason": "error", "message": {"role": "assistant", "content": ""},
              "error": {"message": "Upstream error from DeepInfra: overloaded", "code": 502}}
    judge_server.enqueue(Reply(body=json.dumps({"id": "gen-1", "object": "chat.completion", "choices": [choice]})),
                         Reply.json(ETH_OK))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert verdict.status == "scored"
    assert verdict.attempts == 1  # retried like a 5xx: no repair request about an empty reply
    assert len(judge_server.bodies()) == 2


# --- 4. OpenAI's rate-limit headers and hints ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("450ms", 0.45), ("6m0s", 360.0), ("1m30.5s", 90.5), ("1.2s", 1.2), ("2h0m0s", 7200.0),
     ("12us", 12e-6), ("", None), ("soon", None), ("5 s", None), ("1s2", None)],
)
def test_a_duration_reads_as_openai_writes_it(text, seconds):
    assert duration(text) == (None if seconds is None else pytest.approx(seconds))


@pytest.mark.parametrize(
    ("headers", "message", "seconds"),
    [
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"},
         "Rate limit reached on tokens per min (TPM). Please try again in 450ms. Visit ...", 0.45),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"},
         "Rate limit reached on requests per min (RPM): Limit 500.", 1.0),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "17ms"},
         "Rate limit reached on tokens per min (TPM): Limit 30000.", 0.017),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "1m30.5s"}, "Too many requests", 90.5),
        ({"retry-after": "3", "x-ratelimit-reset-tokens": "6m0s"}, "Please try again in 1.2s.", 1.2),
        ({"retry-after": "1", "retry-after-ms": "120"}, "Rate limit reached", 0.12),
        ({}, "Please try again in 1.2s.", 1.2),
        ({}, "Rate limit reached", None),
    ],
    ids=["message-hint", "named-requests", "named-tokens", "longer-of-two", "shortest-wins", "ms-before-seconds",
         "hint-only", "none"],
)
def test_a_429_wait_is_the_shortest_credible_hint(headers, message, seconds):
    wait = rate_limit_wait(httpx2.Headers(headers), message)
    assert wait == (None if seconds is None else pytest.approx(seconds))


@pytest.mark.parametrize(
    ("reply", "seconds"),
    [
        # short hints: with the throttle's jitter (up to a fifth more, then a quarter) they stay well below the
        # shortest backoff guess, however loaded the machine
        (Reply.openai_rate_limited(try_again="50ms", reset_requests="1s", reset_tokens="6m0s"), 0.05),
        (Reply.openai_rate_limited(limit="requests", try_again=None, reset_requests="60ms", reset_tokens="6m0s"),
         0.06),
    ],
    ids=["try-again-hint", "reset-of-the-named-limit"],
)
async def test_an_openai_429_waits_what_its_hint_says(judge_server, make_client, rubrics, reply, seconds):
    judge_server.enqueue(reply, Reply.json(ETH_OK))
    client = make_client()
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored"
    assert seconds <= judge_server.gap() < FASTER_THAN_BACKOFF  # the hint, not a 0.25-0.5 s guess
    # the 429 told the limits: requests are paced by them from now on, rather than fewer sent at once
    assert client.limiter.limits == {"requests": 500, "tokens": 200000}
    assert client.throttle.limit == client.throttle.max_limit


async def test_429s_are_waited_out_by_time_not_by_attempts(judge_server, make_client, rubrics):
    """A tokens-per-minute-bound run waits out the minute: more 429s than JUDGE_MAX_RETRIES, then the reply."""
    judge_server.enqueue(*[Reply.openai_rate_limited(try_again="20ms") for _ in range(5)], Reply.json(ETH_OK))
    notices: list[str] = []
    client = make_client(max_retries=1)
    with observing_retries(lambda notice: notices.append(str(notice))):
        verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored" and len(judge_server.bodies()) == 6
    assert notices[:2] == ["the judge is rate limiting, retrying (2/2)",
                           "the judge is rate limiting, retrying (attempt 3)"]


async def test_a_429_time_budget_spent_pauses_the_run(judge_server, make_client, rubrics):
    judge_server.responder = lambda body: Reply.openai_rate_limited(try_again="100ms")
    with pytest.raises(RunStopped, match=r"^rate limited \(429\) \d+ times, 0.\d s of waiting for one request; check "
                                         r"the endpoint's limits \(or lower CONCURRENCY\), then resume the run$"):
        await judge(rubrics.get("eth"), TRIPLE, make_client(max_retries=1, rate_limit_budget=0.6))


# --- 5. a strict schema without the range keywords, before json_object --------------------------------------------


def _refuses_ranges(body: dict) -> Reply:
    """Azure OpenAI: a strict schema with `minimum` is refused; the same schema without it is answered."""
    if _format_of(body) == "json_schema" and "minimum" in json.dumps(_schema_of(body)):
        return Reply.schema_keyword_refused(body["response_format"]["json_schema"]["name"])
    return Reply.json(ETH_OK)


async def test_a_refused_range_keyword_steps_down_to_the_portable_schema(judge_server, make_client, rubrics):
    judge_server.responder = _refuses_ranges
    client = make_client()
    eth = rubrics.get("eth")
    verdict = await judge(eth, TRIPLE, client)
    assert verdict.status == "scored" and verdict.output == ETH_OK
    first, second = judge_server.bodies()
    assert [_format_of(first), _format_of(second)] == ["json_schema", "json_schema"]
    portable = _schema_of(second)
    assert not any(f'"{keyword}"' in json.dumps(portable) for keyword in RANGE_KEYWORDS)
    assert portable["properties"]["correctness"]["description"] == ("0 generic or wrong, 1 partial, 2 names the "
                                                                   "specific ETH tool (an integer from 0 to 2)")
    assert portable["required"] == eth.reply_schema["required"] and second["response_format"]["json_schema"]["strict"]
    assert client.mode_for("eth_verdict", eth.reply_schema) == "portable_schema"
    await judge(eth, TRIPLE, client)
    assert _schema_of(judge_server.bodies()[2]) == portable  # remembered: no second refusal


async def test_a_portable_schema_refused_too_steps_down_to_json_object(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.schema_keyword_refused("eth_verdict", "maximum"),
                         Reply.schema_keyword_refused("eth_verdict", "enum"), Reply.json(ETH_OK))
    client = make_client()
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored"
    assert [_format_of(body) for body in judge_server.bodies()] == ["json_schema", "json_schema", "json_object"]


async def test_a_reply_to_the_portable_schema_is_still_held_to_the_rubrics_ranges(judge_server, make_client, rubrics):
    out_of_range = {**ETH_OK, "correctness": 7}
    judge_server.responder = lambda body: (_refuses_ranges(body) if _format_of(body) == "json_schema"
                                           and "minimum" in json.dumps(_schema_of(body)) else Reply.json(out_of_range))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert verdict.status == "invalid" and "correctness" in (verdict.error or "")


def test_the_portable_schema_says_each_range_in_words_and_leaves_the_rubrics_schema_alone(rubrics):
    schema = rubrics.get("benchmark").reply_schema
    before = copy.deepcopy(schema)
    portable = portable_schema(schema)
    assert schema == before
    assert portable["properties"]["Relevance"] == {"type": "number", "description": "a number from 1 to 5"}
    assert portable["properties"]["Overall"]["description"] == "The judge's own overall rating (a number from 1 to 5)"
    listed = portable_schema({"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1,
                              "maxItems": 3})
    assert listed == {"type": "array", "items": {"type": "integer", "description": "an integer of at least 0"},
                      "description": "a list of 1 to 3 items"}
    named = portable_schema({"type": "object", "properties": {"minimum": {"type": "string", "maxLength": 80}},
                             "required": ["minimum"], "additionalProperties": False})
    assert named["properties"] == {"minimum": {"type": "string", "description": "a text of at most 80 characters"}}


# --- 6. the output mode is kept per schema -----------------------------------------------------------------------


async def test_one_rubrics_refused_schema_leaves_every_other_rubric_strict(judge_server, make_client, rubrics):
    def refuses_custom(body: dict) -> Reply:
        if _format_of(body) == "json_schema" and body["response_format"]["json_schema"]["name"] == "custom_verdict":
            return Reply(status=400, error={"message": "Invalid schema for response_format 'custom_verdict': In "
                                                       "context=(), 'patternProperties' is not permitted.",
                                            "type": "invalid_request_error", "param": "response_format", "code": None})
        return Reply.json(ETH_OK) if "correctness" in json.dumps(body["messages"]) else Reply(content='{"score": 1}')

    judge_server.responder = refuses_custom
    client = make_client()
    await client.complete(MESSAGES, schema_name="custom_verdict", schema=SCHEMA)
    assert client.mode_for("custom_verdict", SCHEMA) == "json_object"
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored"
    assert _format_of(judge_server.bodies()[-1]) == "json_schema"
    assert client.mode_for("eth_verdict", rubrics.get("eth").reply_schema) == "json_schema"
    edited = {**SCHEMA, "properties": {"score": {"type": "integer", "description": "edited"}}}
    assert client.mode_for("custom_verdict", edited) == "json_schema"  # the rubric changed: strict again
    assert make_client(model="other-judge").mode_for("custom_verdict", SCHEMA) == "json_schema"


# --- 7. reasoning settings ---------------------------------------------------------------------------------------


async def test_reasoning_settings_are_sent_only_when_set(judge_server, make_client):
    judge_server.responder = lambda body: Reply(content='{"score": 1}')
    await make_client().complete(MESSAGES, schema_name="x", schema=SCHEMA)
    await make_client(reasoning_effort="high", max_completion_tokens=4000).complete(MESSAGES, schema_name="x",
                                                                                      schema=SCHEMA)
    plain, reasoning = judge_server.bodies()
    assert "reasoning_effort" not in plain and "max_completion_tokens" not in plain and "max_tokens" not in plain
    assert reasoning["reasoning_effort"] == "high" and reasoning["max_completion_tokens"] == 4000


async def test_the_settings_reach_every_client(judge_server):
    settings = Settings(_env_file=None, openai_base_url=judge_server.base_url, openai_api_key="test-key",
                        judge_reasoning_effort="low", judge_max_completion_tokens=900)
    async with judge_client_from(settings) as client:
        assert (client.reasoning_effort, client.max_completion_tokens) == ("low", 900)
        assert client.sibling(temperature=0.7).max_completion_tokens == 900
    async with open_panel(settings) as panel:
        assert [(c.reasoning_effort, c.max_completion_tokens) for c in panel.clients] == [("low", 900)]
    bench = open_bench(settings.model_copy(update={"judges": "a,b"}))  # the bot's samples and juries keep them too
    try:
        sampled = bench.panel(3).clients + bench.panel_for(judge_model="c", samples=2, judges=None,
                                                           temperature=0.7).clients
        assert {(c.reasoning_effort, c.max_completion_tokens) for c in sampled} == {("low", 900)} and len(sampled) == 3
    finally:
        await bench.aclose()


@pytest.mark.parametrize(
    ("options", "error", "setting"),
    [
        ({"reasoning_effort": "high"},
         {"message": "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
          "type": "invalid_request_error", "param": "reasoning_effort", "code": "unsupported_parameter"},
         "JUDGE_REASONING_EFFORT"),
        ({"max_completion_tokens": 1_000_000},
         {"message": "max_completion_tokens is too large: 1000000. This model supports at most 16384 completion tokens, "
                     "whereas you provided 1000000.", "type": "invalid_request_error",
          "param": "max_completion_tokens", "code": "invalid_value"},
         "JUDGE_MAX_COMPLETION_TOKENS"),
    ],
    ids=["reasoning-effort", "max-completion-tokens"],
)
async def test_a_refused_reasoning_setting_stops_the_run_naming_it(judge_server, make_client, rubrics, options,
                                                                   error, setting):
    judge_server.enqueue(Reply(status=400, error=error), Reply.json(ETH_OK))
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, make_client(**options))
    message = str(caught.value)
    assert f"({setting})" in message and f"change or unset {setting}" in message and error["message"][:40] in message
    assert len(judge_server.bodies()) == 1


async def test_a_refused_temperature_is_still_dropped_when_reasoning_effort_is_sent(judge_server, make_client,
                                                                                   rubrics):
    refused = {"message": "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) "
                          "value is supported.", "type": "invalid_request_error", "param": "temperature",
               "code": "unsupported_value"}
    judge_server.enqueue(Reply(status=400, error=refused), Reply.json(ETH_OK))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(reasoning_effort="low"))
    assert verdict.status == "scored"
    assert "temperature" not in judge_server.bodies()[1] and judge_server.bodies()[1]["reasoning_effort"] == "low"


# --- 8. Azure's URL forms ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "better"),
    [
        ("https://myteam.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21",
         "https://myteam.openai.azure.com/openai/v1/"),
        ("https://myteam.openai.azure.com/openai/deployments/gpt-4o-mini", "https://myteam.openai.azure.com/openai/v1/"),
        ("https://MyTeam.openai.azure.com/", "https://myteam.openai.azure.com/openai/v1/"),
        ("https://myteam.cognitiveservices.azure.com/openai", "https://myteam.cognitiveservices.azure.com/openai/v1/"),
    ],
)
def test_a_classic_azure_url_is_refused_upfront_naming_the_v1_url(url, better):
    with pytest.raises(SetupError) as caught:
        make_judge_client(api_key="k", base_url=url, model="gpt-4o-mini", timeout=5)
    assert f"set it to {better} and JUDGE_MODEL to the deployment name" in str(caught.value)
    assert "api-version" not in str(caught.value)


async def test_the_v1_azure_url_is_taken():
    client = make_judge_client(api_key="k", base_url="https://myteam.openai.azure.com/openai/v1/", model="gpt-4o-mini",
                               timeout=5)
    assert client.endpoint == "https://myteam.openai.azure.com/openai/v1"
    await client.aclose()


async def test_a_404_at_a_deployment_path_says_which_url_to_use(judge_server, make_client, rubrics):
    host = f"127.0.0.1:{judge_server.port}"
    client = make_client(base_url=f"http://{host}/openai/deployments/judge-test")
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    message = str(caught.value)
    assert "an Azure OpenAI URL of the deployment form" in message
    assert f"set OPENAI_BASE_URL to http://{host}/openai/v1/ and JUDGE_MODEL to the deployment name" in message
    assert "does not know model" not in message



# --- 9. cached prompt tokens --------------------------------------------------------------------------------------


async def test_cached_prompt_tokens_are_read(judge_server, make_client):
    judge_server.enqueue(Reply(content='{"score": 1}', tokens_in=1800, cached_tokens=1536),
                         Reply(content='{"score": 1}', tokens_in=1800))
    client = make_client()
    cached = await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    uncached = await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    assert (cached.tokens_in, cached.cached_tokens) == (1800, 1536)
    assert (uncached.tokens_in, uncached.cached_tokens) == (1800, 0)


# --- what stays as it was ----------------------------------------------------------------------------------------


async def test_a_client_error_that_names_no_setting_is_still_a_row_error(judge_server, make_client):
    judge_server.enqueue(Reply(status=400, error={"message": "This model's maximum context length is 8192 tokens.",
                                                  "type": "invalid_request_error", "param": "messages", "code": None}))
    with pytest.raises(JudgeCallError) as caught:
        await make_client(reasoning_effort="low").complete(MESSAGES, schema_name="x", schema=SCHEMA)
    assert not isinstance(caught.value, RunStopped)
    assert len(judge_server.bodies()) == 1
