"""Tests for bot.llm: the judge client over the real openai SDK and real HTTP against FakeJudgeServer.

Output formats and their downgrades, retries on 429 / 5xx / timeouts, the shared throttle, the errors
that stop a run, and the helpers (extract_json, retry_after, backoff, Throttle) on their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import socket
import time
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from bot.errors import JudgeCallError, RunStopped
from bot.judge.judgment import judge
from bot.judge.reply import extract_json
from bot.llm.answers import RESUME, Completion
from bot.llm.pacing import MAX_BACKOFF, Throttle, backoff, retry_after
from bot.llm.retries import Retrying, observing_retries
from bot.records import Triple
from tests.support.llm_calls import ETH_OK, MESSAGES, SCHEMA, TRIPLE
from tests.support.openai_server import Reply


def eth_mode(client, rubrics) -> str:
    """The output mode the client sends the eth rubric's requests with now."""
    return client.mode_for("eth_verdict", rubrics.get("eth").reply_schema)


def server_error(status: int = 500, retry_after_ms: int | None = None) -> Reply:
    reply = Reply.server_error(status)
    if retry_after_ms is not None:
        reply.headers = {"retry-after-ms": str(retry_after_ms)}
    return reply


def error_reply(status: int, message: str, type_: str = "invalid_request_error", code: str | None = None) -> Reply:
    return Reply(status=status, error={"message": message, "type": type_, "code": code})


# --- extract_json ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 5}', {"score": 5}),
        ('  \n {"score": 5}\n\n', {"score": 5}),
        ('```json\n{"score": 5}\n```', {"score": 5}),
        ('```JSON\n{"score": 5}\n```', {"score": 5}),
        ('```\n{"score": 5}\n```', {"score": 5}),
        ('```json{"score": 5}```', {"score": 5}),
        ('Here is my verdict:\n```json\n{"score": 5}\n```\nHope this helps.', {"score": 5}),
        ('Here is my verdict: {"score": 5}', {"score": 5}),
        ('{"score": 5}\nI gave 5 because the answer is exact.', {"score": 5}),
        ('Verdict: {"score": 5} -- done.', {"score": 5}),
        ('{"why": "braces } and { inside a string", "score": 1}', {"why": "braces } and { inside a string", "score": 1}),
        ('Result: {"why": "a } b {", "nested": {"x": {"y": [1, {"z": 2}]}}} end',
         {"why": "a } b {", "nested": {"x": {"y": [1, {"z": 2}]}}}),
        ('{"first": 1} {"second": 2}', {"first": 1}),
        ('Draft {"first": 1} then final {"second": 2}', {"first": 1}),
        ('Use the {format} described: {"score": 3}', {"score": 3}),
        ('Scores [1, 2] then {"score": 2}', {"score": 2}),
        ('{"reasoning": "الإجابة صحيحة", "score": 5}', {"reasoning": "الإجابة صحيحة", "score": 5}),
    ],
    ids=[
        "bare", "bare-whitespace", "fence-json", "fence-JSON", "fence-plain", "fence-one-line", "fence-with-prose",
        "prose-before", "prose-after", "prose-both", "braces-in-string", "nested-with-prose", "two-objects",
        "two-objects-prose", "stray-brace-first", "list-then-object", "arabic",
    ],
)
def test_extract_json_finds_the_object(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "no json here", "The answer is correct.", '{"score": 5', "```json\n{broken\n```", "}{ {not: json} ]"],
    ids=["empty", "blank", "prose", "sentence", "unterminated", "broken-fence", "brace-soup"],
)
def test_extract_json_raises_value_error_without_an_object(text):
    with pytest.raises(ValueError):
        extract_json(text)


def test_extract_json_names_the_empty_reply():
    with pytest.raises(ValueError, match="empty"):
        extract_json("  ")


# --- retry_after and backoff ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "50"}, 0.05),
        ({"Retry-After-Ms": "1500"}, 1.5),
        ({"retry-after": "2"}, 2.0),
        ({"Retry-After": "0.05"}, 0.05),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "-4"}, 0.0),
        ({}, None),
        ({"retry-after": "whenever"}, None),
    ],
)
def test_retry_after_reads_ms_then_seconds(headers, expected):
    value = retry_after(httpx2.Headers(headers))
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected)


def test_retry_after_reads_an_http_date():
    when = datetime.now(UTC) + timedelta(seconds=10)
    value = retry_after(httpx2.Headers({"Retry-After": email.utils.format_datetime(when, usegmt=True)}))
    assert value is not None and 8.0 <= value <= 10.5
    past = email.utils.format_datetime(datetime.now(UTC) - timedelta(minutes=5), usegmt=True)
    assert retry_after(httpx2.Headers({"Retry-After": past})) == 0.0


def test_retry_after_without_headers():
    assert retry_after(None) is None


@pytest.mark.parametrize("attempt", [0, 1, 2, 3, 10, 30])
def test_backoff_is_jittered_exponential_and_capped(attempt):
    ceiling = min(MAX_BACKOFF, 0.5 * 2**attempt)
    samples = [backoff(attempt) for _ in range(200)]
    assert all(0.5 * ceiling <= s <= ceiling for s in samples)
    assert len(set(samples)) > 1  # jittered


# --- Throttle on its own ------------------------------------------------------------------------


async def test_throttle_rate_limited_halves_and_pauses_new_requests():
    throttle = Throttle(4)
    throttle.rate_limited(0.1)
    assert throttle.limit == 2
    assert throttle.rate_limited_count == 1
    started = time.monotonic()
    async with throttle:
        waited = time.monotonic() - started
        assert throttle.active == 1
    assert waited >= 0.095
    assert waited < 1.0
    assert throttle.active == 0


async def test_throttle_grows_back_by_one_after_limit_successes():
    throttle = Throttle(4)
    throttle.rate_limited(0)
    assert throttle.limit == 2
    throttle.succeeded()
    assert throttle.limit == 2
    throttle.succeeded()
    assert throttle.limit == 3  # 2 successes at limit 2
    throttle.succeeded()
    throttle.succeeded()
    assert throttle.limit == 3
    throttle.succeeded()
    assert throttle.limit == 4  # 3 successes at limit 3
    for _ in range(20):
        throttle.succeeded()
    assert throttle.limit == 4  # never above the configured maximum


async def test_throttle_a_429_resets_the_success_streak():
    throttle = Throttle(8)
    throttle.rate_limited(0)
    assert throttle.limit == 4
    for _ in range(3):
        throttle.succeeded()
    throttle.rate_limited(0)
    assert throttle.limit == 2
    throttle.succeeded()
    assert throttle.limit == 2
    throttle.succeeded()
    assert throttle.limit == 3
    assert throttle.rate_limited_count == 2


def test_throttle_never_drops_below_one():
    throttle = Throttle(1)
    for _ in range(3):
        throttle.rate_limited(0)
    assert throttle.limit == 1
    assert throttle.rate_limited_count == 3


async def test_throttle_caps_concurrency_at_its_limit():
    throttle = Throttle(2)
    peak = 0

    async def work() -> None:
        nonlocal peak
        async with throttle:
            peak = max(peak, throttle.active)
            await asyncio.sleep(0.05)

    started = time.monotonic()
    await asyncio.gather(*(work() for _ in range(6)))
    assert peak == 2
    assert time.monotonic() - started >= 0.14  # three waves of two
    assert throttle.active == 0


async def test_throttle_pause_holds_everyone_and_halved_limit_caps_them():
    throttle = Throttle(4)
    throttle.rate_limited(0.1)
    peak = 0
    entered: list[float] = []

    async def work() -> None:
        nonlocal peak
        async with throttle:
            entered.append(time.monotonic())
            peak = max(peak, throttle.active)
            await asyncio.sleep(0.02)

    started = time.monotonic()
    await asyncio.gather(*(work() for _ in range(4)))
    assert all(t - started >= 0.095 for t in entered)
    assert peak == 2


# --- the client over HTTP ----------------------------------------------------------------------


async def test_complete_returns_text_tokens_and_finish_reason(judge_server, make_client):
    judge_server.enqueue(Reply(content='{"score": 3}', tokens_in=123, tokens_out=45))
    client = make_client()
    completion = await client.complete(MESSAGES, schema_name="probe_verdict", schema=SCHEMA)
    assert completion == Completion(text='{"score": 3}', finish_reason="stop", tokens_in=123, tokens_out=45,
                                    latency_ms=completion.latency_ms)
    assert 0 <= completion.latency_ms < 5_000
    [body] = judge_server.bodies()
    assert body["model"] == "judge-test"
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "probe_verdict", "schema": SCHEMA, "strict": True},
    }
    assert client.throttle.limit == 8 and client.throttle.rate_limited_count == 0


async def test_client_sends_the_configured_temperature_and_key(judge_server, make_client):
    judge_server.enqueue(Reply(content="{}"))
    client = make_client(temperature=0.3, model="other-judge")
    await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    [body] = judge_server.bodies()
    assert body["temperature"] == pytest.approx(0.3)
    assert body["model"] == "other-judge"


async def test_rate_limited_with_retry_after_ms_then_success(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.rate_limited(retry_after_ms=50), Reply.json(ETH_OK))
    client = make_client()
    notices: list[Retrying] = []
    with observing_retries(notices.append):
        verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    elapsed = judge_server.gap()
    assert verdict.status == "scored"
    assert verdict.headline == 100.0
    assert len(judge_server.bodies()) == 2
    assert client.throttle.rate_limited_count == 1
    assert client.throttle.limit == 4  # 8 halved
    # 50 ms honoured, not replaced by the back-off: the wait chosen, and (a lower bound whatever the load) the gap
    assert [notice.wait for notice in notices] == [pytest.approx(0.05, abs=0.005)] and elapsed >= 0.05
    assert verdict.attempts == 1  # one completion; the 429 is the client's business


async def test_rate_limited_with_fractional_retry_after_seconds(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.rate_limited(retry_after="0.05"), Reply.json(ETH_OK))
    client = make_client()
    notices: list[Retrying] = []
    with observing_retries(notices.append):
        verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    elapsed = judge_server.gap()
    assert verdict.status == "scored"
    assert len(judge_server.bodies()) == 2
    assert client.throttle.rate_limited_count == 1
    assert client.throttle.limit == 4
    # 0.05 s honoured, not replaced by the >= 0.25 s backoff (the wait chosen; the gap is a lower bound under any load)
    assert [notice.wait for notice in notices] == [pytest.approx(0.05, abs=0.005)] and elapsed >= 0.05


async def test_rate_limited_without_a_hint_backs_off(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.rate_limited(), Reply.json(ETH_OK))
    client = make_client()
    started = time.monotonic()
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored"
    assert time.monotonic() - started >= 0.25
    assert client.throttle.rate_limited_count == 1


async def test_rate_limited_every_time_pauses_the_run(judge_server, make_client, rubrics):
    """A saturated endpoint would fail every row alike: the run stops with its rows pending, none is failed."""
    judge_server.enqueue(*[Reply.rate_limited(retry_after_ms=10) for _ in range(3)])
    client = make_client(max_retries=2, rate_limit_budget=0.6)  # each 429 counts at least 0.25 s
    with pytest.raises(RunStopped, match=r"rate limited \(429\) 3 times, 0.8 s of waiting for one request.*resume"):
        await judge(rubrics.get("eth"), TRIPLE, client)
    assert len(judge_server.bodies()) == 3
    assert client.throttle.rate_limited_count == 3
    assert client.throttle.limit == 1  # 8 -> 4 -> 2 -> 1


async def test_throttle_grows_back_after_successes_over_http(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.rate_limited(retry_after_ms=10))
    judge_server.responder = lambda body: Reply.json(ETH_OK)
    client = make_client(concurrency=4)
    rubric = rubrics.get("eth")
    await judge(rubric, TRIPLE, client)
    assert client.throttle.limit == 2  # halved; the success that followed is 1 of 2
    await judge(rubric, TRIPLE, client)
    assert client.throttle.limit == 3
    for _ in range(3):
        await judge(rubric, TRIPLE, client)
    assert client.throttle.limit == 4


async def test_server_error_then_success(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.server_error(), Reply.json(ETH_OK))
    client = make_client()
    started = time.monotonic()
    verdict = await judge(rubrics.get("eth"), TRIPLE, client)
    assert verdict.status == "scored"
    assert verdict.attempts == 1
    assert len(judge_server.bodies()) == 2
    assert time.monotonic() - started >= 0.25  # backoff(0) without a hint
    assert client.throttle.rate_limited_count == 0
    assert client.throttle.limit == 8  # a 5xx does not halve the limit


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_5xx_with_retry_after_ms_is_retried_quickly(judge_server, make_client, rubrics, status):
    judge_server.enqueue(server_error(status, retry_after_ms=20), Reply.json(ETH_OK))
    notices: list[Retrying] = []
    with observing_retries(notices.append):
        verdict = await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert verdict.status == "scored"
    assert len(judge_server.bodies()) == 2
    assert [notice.wait for notice in notices] == [pytest.approx(0.02, abs=0.005)]  # the hint, not the back-off


async def test_server_error_every_time_gives_up(judge_server, make_client, rubrics):
    judge_server.enqueue(*[server_error(500, retry_after_ms=10) for _ in range(5)])
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(max_retries=1))
    assert verdict.status == "error"
    assert "500" in verdict.error
    assert "2 attempts" in verdict.error
    assert verdict.headline is None and verdict.passed is None and verdict.output is None
    assert verdict.attempts == 0
    assert len(judge_server.bodies()) == 2


async def test_client_error_is_not_retried(judge_server, make_client, rubrics):
    judge_server.enqueue(error_reply(400, "This model's maximum context length is 8192 tokens."), Reply.json(ETH_OK))
    client = make_client()
    with pytest.raises(JudgeCallError, match="maximum context length") as caught:
        await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    assert not isinstance(caught.value, RunStopped)
    assert len(judge_server.bodies()) == 1
    assert client.mode_for("x", SCHEMA) == "json_schema"  # not mistaken for a response_format rejection


async def test_slow_reply_beyond_the_timeout(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.json(ETH_OK, delay=1.0), Reply.json(ETH_OK, delay=1.0))
    started = time.monotonic()
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(timeout=0.3, max_retries=1))
    elapsed = time.monotonic() - started
    assert verdict.status == "error"
    assert "timeout" in verdict.error
    assert "2 attempts" in verdict.error
    assert len(judge_server.bodies()) == 2
    assert elapsed < 2.0  # two 0.3 s timeouts and one backoff, not the 1 s replies


async def test_slow_reply_then_fast_reply(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.json(ETH_OK, delay=1.0), Reply.json(ETH_OK))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(timeout=0.3, max_retries=1))
    assert verdict.status == "scored"
    assert len(judge_server.bodies()) == 2


async def test_insufficient_quota_stops_the_run_without_retry(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.quota(), Reply.json(ETH_OK))
    client = make_client()
    with pytest.raises(RunStopped, match="quota"):
        await judge(rubrics.get("eth"), TRIPLE, client)
    assert len(judge_server.bodies()) == 1
    assert client.throttle.rate_limited_count == 0  # not a rate limit


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (error_reply(401, "Incorrect API key provided: sk-xx.", code="invalid_api_key"), ["key", "Incorrect API key"]),
        (error_reply(403, "You are not allowed to use this model.", type_="permission_error"), ["key", "not allowed"]),
        (error_reply(404, "The model `judge-test` does not exist.", code="model_not_found"),
         ["'judge-test'", "does not exist"]),
    ],
    ids=["401", "403", "404"],
)
async def test_auth_and_unknown_model_stop_the_run(judge_server, make_client, rubrics, reply, words):
    judge_server.enqueue(reply, Reply.json(ETH_OK))
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, make_client())
    for word in words:
        assert word in str(caught.value)
    assert len(judge_server.bodies()) == 1


async def test_an_endpoints_message_is_kept_as_one_printable_line_of_bounded_length(judge_server, make_client, rubrics):
    # the stop reason is saved with the run (a NUL does not fit a PostgreSQL text column) and shown in Slack
    judge_server.enqueue(error_reply(401, "bad key\x00\x1b[31m\n" + "x" * 5000))
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, make_client())
    text = str(caught.value)
    assert "bad key" in text and text.isprintable()
    assert len(text) < 500


async def test_rejected_json_schema_downgrades_to_json_object(judge_server, make_client, rubrics):
    judge_server.reject_json_schema = True
    judge_server.enqueue(Reply.json(ETH_OK), Reply.json(ETH_OK))
    client = make_client()
    rubric = rubrics.get("eth")
    verdict = await judge(rubric, TRIPLE, client)
    assert verdict.status == "scored"
    assert eth_mode(client, rubrics) == "json_object"
    bodies = judge_server.bodies()
    assert [b["response_format"]["type"] for b in bodies] == ["json_schema", "json_object"]
    assert bodies[1]["response_format"] == {"type": "json_object"}
    assert bodies[0]["messages"] == bodies[1]["messages"]
    # the client remembers: the next judgment goes straight to json_object
    verdict = await judge(rubric, TRIPLE, client)
    assert verdict.status == "scored"
    assert [b["response_format"]["type"] for b in judge_server.bodies()[2:]] == ["json_object"]


async def test_rejected_response_format_downgrades_to_text(judge_server, make_client, rubrics):
    judge_server.reject_response_format = True
    judge_server.enqueue(Reply(content=f"Here you go:\n```json\n{Reply.json(ETH_OK).content}\n```"))
    client = make_client()
    rubric = rubrics.get("eth")
    verdict = await judge(rubric, TRIPLE, client)
    assert verdict.status == "scored"
    assert verdict.output == ETH_OK
    assert eth_mode(client, rubrics) == "text"
    bodies = judge_server.bodies()
    assert len(bodies) == 3
    assert [(b.get("response_format") or {}).get("type") for b in bodies] == ["json_schema", "json_object", None]
    assert "response_format" not in bodies[2]
    # in text mode the schema still reaches the judge through the system message
    assert '"result_tag"' in bodies[2]["messages"][0]["content"]


async def test_text_mode_does_not_downgrade_further(judge_server, make_client):
    judge_server.reject_response_format = True
    judge_server.enqueue(error_reply(400, "Invalid schema for function 'x'."))
    client = make_client()
    with pytest.raises(JudgeCallError, match="refused the request"):
        await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    assert len(judge_server.bodies()) == 3  # json_schema and json_object refused, then plain text refused for good
    assert client.mode_for("x", SCHEMA) == "text"


async def test_unprocessable_response_format_downgrades(judge_server, make_client):
    judge_server.enqueue(
        error_reply(422, "structured outputs are not supported by this backend"), Reply(content='{"score": 1}')
    )
    client = make_client()
    completion = await client.complete(MESSAGES, schema_name="x", schema=SCHEMA)
    assert completion.text == '{"score": 1}'
    assert client.mode_for("x", SCHEMA) == "json_object"
    assert len(judge_server.bodies()) == 2


async def test_concurrency_is_capped_by_the_throttle(judge_server, make_client, rubrics):
    judge_server.latency = 0.15
    judge_server.responder = lambda body: Reply.json(ETH_OK)
    rubric = rubrics.get("eth")
    client = make_client(concurrency=2)
    verdicts = await asyncio.gather(*(judge(rubric, TRIPLE, client) for _ in range(6)))
    assert [v.status for v in verdicts] == ["scored"] * 6
    assert judge_server.peak_in_flight == 2
    judge_server.peak_in_flight = 0
    wide = make_client(concurrency=4)
    await asyncio.gather(*(judge(rubric, TRIPLE, wide) for _ in range(8)))
    assert judge_server.peak_in_flight > 2


# --- a judge model that refuses a temperature ----------------------------------------------------------------


TEMPERATURE_REFUSED = Reply(
    status=400,
    error={"message": "Unsupported value: 'temperature' does not support 0.0 with this model. "
                      "Only the default (1) value is supported.",
           "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"},
)


async def test_refused_temperature_is_dropped_and_remembered(judge_server, make_client, rubrics):
    judge_server.enqueue(TEMPERATURE_REFUSED, Reply.json(ETH_OK), Reply.json(ETH_OK))
    client = make_client()
    rubric = rubrics.get("eth")
    verdict = await judge(rubric, TRIPLE, client)
    assert verdict.status == "scored"
    assert client.temperature is None
    assert eth_mode(client, rubrics) == "json_schema"  # not mistaken for a response_format rejection
    first, second = judge_server.bodies()
    assert first["temperature"] == 0
    assert "temperature" not in second
    assert second["messages"] == first["messages"]
    assert second["response_format"] == first["response_format"]
    await judge(rubric, TRIPLE, client)
    assert "temperature" not in judge_server.bodies()[2]
    assert len(judge_server.bodies()) == 3


async def test_temperature_refused_twice_is_an_error_not_a_loop(judge_server, make_client, rubrics):
    judge_server.enqueue(TEMPERATURE_REFUSED, TEMPERATURE_REFUSED, Reply.json(ETH_OK))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert verdict.status == "error"
    assert "temperature" in verdict.error
    assert len(judge_server.bodies()) == 2


# --- requests in flight share the output mode, the temperature and the throttle --------------------------------


def _triples(count: int) -> list[Triple]:
    return [Triple(question=f"{TRIPLE.question} ({i})", reference=TRIPLE.reference, answer=TRIPLE.answer)
            for i in range(count)]


def _format_of(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("type")


async def test_concurrent_json_schema_refusals_step_down_once(judge_server, make_client, rubrics):
    judge_server.reject_json_schema = True
    judge_server.responder = lambda body: Reply.json(ETH_OK)
    client = make_client(concurrency=8)
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), triple, client) for triple in _triples(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8, [v.error for v in verdicts]
    assert eth_mode(client, rubrics) == "json_object"
    formats = [_format_of(b) for b in judge_server.bodies()]
    assert None not in formats  # nothing ever went out without a response_format
    assert formats.count("json_object") == 8


async def test_concurrent_response_format_refusals_step_down_to_text(judge_server, make_client, rubrics):
    judge_server.reject_response_format = True
    judge_server.responder = lambda body: Reply.json(ETH_OK)
    client = make_client(concurrency=8)
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), triple, client) for triple in _triples(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8, [v.error for v in verdicts]
    assert [v.output for v in verdicts] == [ETH_OK] * 8
    assert eth_mode(client, rubrics) == "text"
    assert [_format_of(b) for b in judge_server.bodies()].count(None) == 8  # one accepted request per triple


def _slow_format_refusal(body: dict) -> Reply:
    """Refuses json_schema, after a delay so that all eight requests are in flight before the first refusal."""
    if _format_of(body) == "json_schema":
        return Reply(status=400, delay=0.2, error={"message": "response_format type 'json_schema' is not supported",
                                                   "type": "invalid_request_error", "param": "response_format",
                                                   "code": None})
    return Reply.json(ETH_OK)


async def test_eight_refusals_in_flight_of_one_mode_step_down_only_once(judge_server, make_client, rubrics):
    """Eight json_schema refusals arrive together: json_object (which works) must not be skipped for text."""
    judge_server.responder = _slow_format_refusal
    client = make_client(concurrency=8)
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), triple, client) for triple in _triples(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8
    assert eth_mode(client, rubrics) == "json_object"
    formats = [_format_of(b) for b in judge_server.bodies()]
    assert formats == ["json_schema"] * 8 + ["json_object"] * 8


def _slow_temperature_refusal(body: dict) -> Reply:
    if "temperature" in body:
        return Reply(status=400, delay=0.2, error=TEMPERATURE_REFUSED.error)
    return Reply.json(ETH_OK)


async def test_concurrent_temperature_refusals_all_fall_back_to_the_default(judge_server, make_client, rubrics):
    judge_server.responder = _slow_temperature_refusal
    client = make_client(concurrency=8)
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), triple, client) for triple in _triples(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8, [v.error for v in verdicts]
    assert client.temperature is None
    assert eth_mode(client, rubrics) == "json_schema"  # a temperature refusal is not a response_format refusal
    bodies = judge_server.bodies()
    assert len(bodies) == 16
    assert all("temperature" in b for b in bodies[:8]) and not any("temperature" in b for b in bodies[8:])
    assert {_format_of(b) for b in bodies} == {"json_schema"}


async def test_a_burst_of_429s_halves_the_limit_once(judge_server, make_client, rubrics):
    """Eight requests in flight all get a 429 for the same pause: one halving (8 -> 4), not eight (-> 1)."""
    judge_server.enqueue(*[Reply(**{**vars(Reply.rate_limited(retry_after_ms=100)), "delay": 0.05})
                           for _ in range(8)])
    client = make_client(concurrency=8)
    limits_seen: list[int] = []

    def responder(body: dict) -> Reply:
        limits_seen.append(client.throttle.limit)
        return Reply.json(ETH_OK)

    judge_server.responder = responder
    started = time.monotonic()
    verdicts = await asyncio.gather(*(judge(rubrics.get("eth"), triple, client) for triple in _triples(8)))
    assert [v.status for v in verdicts] == ["scored"] * 8
    assert client.throttle.rate_limited_count == 8
    assert len(judge_server.bodies()) == 16
    assert limits_seen[0] == 4, limits_seen  # right after the burst, before any success
    assert min(limits_seen) == 4
    assert client.throttle.limit == 5  # then 4 successes in a row at limit 4 grow it by one
    assert time.monotonic() - started >= 0.15  # everyone waited out the Retry-After


@pytest.mark.parametrize("reply", [Reply.rate_limited(retry_after="3600"),
                                   Reply.rate_limited(retry_after_ms=3_600_000)], ids=["retry-after", "retry-after-ms"])
async def test_a_retry_after_beyond_the_cap_stops_the_run_at_once(judge_server, make_client, rubrics, reply):
    judge_server.enqueue(reply, Reply.json(ETH_OK))
    client = make_client()
    started = time.monotonic()
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "3600 s" in message and "resume the run later" in message
    assert len(judge_server.bodies()) == 1


async def test_an_unreachable_endpoint_stops_the_run_instead_of_failing_every_row(rubrics, make_client):
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_client(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    triple = Triple(question="Where do I print?", reference="Web Print.", answer="Use Web Print.")
    with pytest.raises(RunStopped, match=rf"cannot reach the judge endpoint http://127.0.0.1:{port}/v1.*resume"):
        await judge(rubrics.get("eth"), triple, client)


# --- a 200 that is not a chat completion --------------------------------------------------------


NOT_COMPLETIONS = {
    "html": (Reply.html(), "not a chat completion: '<html><head><title>502 Bad Gateway"),
    "plain-text": (Reply.plain_text(), "not a chat completion: 'upstream connect error"),
    "error-object": (Reply.error_object("Upstream provider overloaded"), "with an error: 'Upstream provider overloaded'"),
    "not-json": (Reply(body='{"choices": [oops'), "not valid JSON"),
    "a-list": (Reply(body="[1, 2]"), "not a chat completion: '[1, 2]'"),
    "choices-not-a-list": (Reply(body='{"choices": "none"}'), "not a chat completion: \"choices: 'none'\""),
    "no-message": (Reply(body='{"choices": [{"index": 0}]}'), "not a chat completion"),
}


@pytest.mark.parametrize("reply", [reply for reply, _ in NOT_COMPLETIONS.values()], ids=list(NOT_COMPLETIONS))
async def test_a_200_that_is_not_a_completion_is_retried_like_a_5xx(judge_server, make_client, rubrics, reply):
    judge_server.enqueue(reply, Reply.json(ETH_OK))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert verdict.status == "scored" and verdict.headline == 100.0
    assert len(judge_server.bodies()) == 2


# An error object counts as an outage instead: tests/llm/test_providers.py.
NEVER_COMPLETIONS = {name: case for name, case in NOT_COMPLETIONS.items() if name != "error-object"}


@pytest.mark.parametrize(("reply", "reason"), list(NEVER_COMPLETIONS.values()), ids=list(NEVER_COMPLETIONS))
async def test_a_200_that_is_never_a_completion_is_a_judge_error_saying_what_came(judge_server, make_client, rubrics,
                                                                                   reply, reason):
    judge_server.responder = lambda body: reply
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(max_retries=1))
    assert verdict.status == "error"
    assert reason in verdict.error and verdict.error.endswith("gave up after 2 attempts")
    assert "AttributeError" not in verdict.error
    assert len(judge_server.bodies()) == 2


async def test_a_long_page_is_cut_short_and_kept_on_one_printable_line(judge_server, make_client):
    page = "<html>\n<body>\x00\x1b[31m" + "Gateway says no. " * 2_000 + "</body></html>"
    judge_server.responder = lambda body: Reply(body=page, content_type="text/html")
    with pytest.raises(JudgeCallError) as caught:
        await make_client(max_retries=0).complete(MESSAGES, schema_name="x", schema=SCHEMA)
    message = str(caught.value)
    assert len(message) < 300
    assert "'<html> <body>[31mGateway says no. Gateway says no." in message and "…'" in message
    assert message.isprintable()


# --- an endpoint that cannot be reached ----------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_refused_first_request_stops_at_once_naming_the_endpoint(rubrics, make_client):
    port = _closed_port()
    client = make_client(base_url=f"http://127.0.0.1:{port}/v1", max_retries=6)
    notices: list[str] = []
    started = time.monotonic()
    with observing_retries(lambda retrying: notices.append(str(retrying))), pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    assert time.monotonic() - started < 1.0  # not six backoffs (about 30 s)
    message = str(caught.value)
    assert f"cannot reach the judge endpoint http://127.0.0.1:{port}/v1: the connection was refused" in message
    assert "Check OPENAI_BASE_URL" in message and "resume the run" in message
    assert notices == []


async def test_an_unknown_host_stops_at_once_saying_it_does_not_resolve(rubrics, make_client):
    client = make_client(base_url="http://judge.invalid/v1", max_retries=6)
    started = time.monotonic()
    with pytest.raises(RunStopped, match=r"cannot reach the judge endpoint http://judge.invalid/v1: the host name "
                                         r"'judge.invalid' does not resolve \(DNS\)\. Check OPENAI_BASE_URL"):
        await judge(rubrics.get("eth"), TRIPLE, client)
    assert time.monotonic() - started < 5.0


async def test_an_endpoint_lost_after_answering_is_retried_and_each_retry_is_told(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.json(ETH_OK))
    client = make_client(max_retries=2)
    assert (await judge(rubrics.get("eth"), TRIPLE, client)).status == "scored"
    judge_server.stop()
    notices: list[Retrying] = []
    with observing_retries(notices.append), pytest.raises(RunStopped, match="gave up after 3 attempts.*resume"):
        await judge(rubrics.get("eth"), TRIPLE, client)
    # The first retry may find the pooled connection closed; the next finds the port closed.
    assert [notice.attempt for notice in notices] == [2, 3]
    assert str(notices[-1]) == "cannot reach the judge, retrying (3/3)"


async def test_each_kind_of_retry_is_told_in_a_few_words(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.rate_limited(retry_after_ms=10), Reply.server_error(503), Reply.html(), Reply.json(ETH_OK))
    notices: list[str] = []
    with observing_retries(lambda retrying: notices.append(str(retrying))):
        verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(max_retries=3))
    assert verdict.status == "scored"
    assert notices == ["the judge is rate limiting, retrying (2/4)", "the judge answered 503, retrying (3/4)",
                       "the judge sent no completion, retrying (4/4)"]
    notices.clear()
    judge_server.enqueue(Reply.server_error(500), Reply.json(ETH_OK))
    await judge(rubrics.get("eth"), TRIPLE, make_client())
    assert notices == []  # outside the block, nobody is told


async def test_a_host_that_never_takes_the_connection_is_told_after_the_connect_timeout(rubrics, make_client):
    with socket.socket() as listener:  # a full backlog: the connection is neither taken nor refused
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        waiting = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            waiting.append(filler)
        client = make_client(base_url=f"http://127.0.0.1:{port}/v1", timeout=30.0, connect_timeout=0.3, max_retries=1)
        notices: list[tuple[float, str]] = []
        started = time.monotonic()
        with observing_retries(lambda notice: notices.append((time.monotonic() - started, str(notice)))), \
                pytest.raises(RunStopped, match=f"cannot reach the judge endpoint http://127.0.0.1:{port}/v1.*resume"):
            await judge(rubrics.get("eth"), TRIPLE, client)
        for filler in waiting:
            filler.close()
    [(when, notice)] = notices
    assert notice == "cannot reach the judge, retrying (2/2)"
    assert when < 2.0  # the connect timeout, not the 30 s request timeout


async def test_a_stop_reason_names_the_endpoint_without_the_key_in_its_user_part_or_query(rubrics, make_client):
    port = _closed_port()
    client = make_client(base_url=f"http://127.0.0.1:{port}/v1?api-key=sk-secret2&x=1", max_retries=6)
    with pytest.raises(RunStopped) as caught:
        await judge(rubrics.get("eth"), TRIPLE, client)
    message = str(caught.value)
    assert f"cannot reach the judge endpoint http://127.0.0.1:{port}/v1: the connection was refused" in message
    assert "secret" not in message and "api-key" not in message
    assert RESUME in message  # the one phrase a single judgment rewrites to "try again"
    with_user = make_client(base_url="https://judge-user:sk-secret1@[::1]:8443/openai/v1/?api-key=sk-secret2#frag")
    assert with_user.endpoint == "https://[::1]:8443/openai/v1"
