"""A local OpenAI-compatible chat completions server, scriptable per test, for the real openai client."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.threaded import ThreadedServer


@dataclass
class Reply:
    """One scripted answer: a completion, or an HTTP error, optionally after a delay."""

    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    tokens_in: int = 50
    tokens_out: int = 20
    cached_tokens: int | None = None  # sent as usage.prompt_tokens_details.cached_tokens when set
    reasoning_tokens: int | None = None  # sent as usage.completion_tokens_details.reasoning_tokens (and counted in
    # completion_tokens, as OpenAI counts them) when set; a server enforcing GPT-6's rules sets it by the effort
    drop: bool = False  # close the connection without answering
    body: str | None = None  # sent as is with `content_type` instead of a chat completion
    content_type: str = "application/json"

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        return cls(content=json.dumps(obj, ensure_ascii=False), **kw)

    @classmethod
    def rate_limited(cls, retry_after_ms: int | None = None, retry_after: str | None = None) -> Reply:
        headers = {}
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        if retry_after is not None:
            headers["retry-after"] = retry_after
        error = {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
        return cls(status=429, error=error, headers=headers)

    @classmethod
    def quota(cls) -> Reply:
        error = {"message": "You exceeded your current quota.", "type": "insufficient_quota", "code": "insufficient_quota"}
        return cls(status=429, error=error)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, error={"message": "The server had an error", "type": "server_error", "code": None})

    @classmethod
    def html(cls) -> Reply:
        """A 200 with a proxy's HTML page, as a captive portal or a misrouted gateway sends."""
        return cls(body="<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>",
                   content_type="text/html")

    @classmethod
    def plain_text(cls) -> Reply:
        """A 200 with a plain-text body."""
        return cls(body="upstream connect error or disconnect/reset before headers", content_type="text/plain")

    @classmethod
    def error_object(cls, message: str = "Provider returned error") -> Reply:
        """A 200 whose JSON body is an error object, as OpenRouter sends when the provider behind it fails."""
        return cls(body=json.dumps({"error": {"message": message, "code": 502}}))

    # --- what real providers answer, as quoted in their docs and public issues ---------------------------------

    @classmethod
    def openrouter_error_object(cls) -> Reply:
        """OpenRouter's 200 carrying the upstream provider's failure, with its metadata, instead of a completion."""
        error = {"message": "Provider returned error", "code": 502,
                 "metadata": {"raw": "upstream connect error", "provider_name": "DeepInfra"}}
        return cls(body=json.dumps({"error": error, "user_id": "user_2abc"}))

    @classmethod
    def openrouter_no_credit(cls) -> Reply:
        """OpenRouter's 402 when the account's credit is used up."""
        error = {"message": "Insufficient credits. Add more using https://openrouter.ai/settings/credits", "code": 402}
        return cls(status=402, body=json.dumps({"error": error}))

    @classmethod
    def openrouter_no_provider(cls) -> Reply:
        """OpenRouter's 503 when no provider behind it can serve the model right now."""
        error = {"code": 503, "message": "There is no available model provider that meets your routing requirements"}
        return cls(status=503, body=json.dumps({"error": error}))

    @classmethod
    def anthropic_no_credit(cls) -> Reply:
        """Anthropic's 400 (its OpenAI-compatible endpoint included) when the credit balance is used up."""
        error = {"type": "invalid_request_error", "message": "Your credit balance is too low to access the Anthropic "
                 "API. Please go to Plans & Billing to upgrade or purchase credits."}
        return cls(status=400, body=json.dumps({"type": "error", "error": error, "request_id": "req_011CbrFTcXhtiMzr"}))

    @classmethod
    def anthropic_overloaded(cls) -> Reply:
        """Anthropic's 529 when its API is overloaded."""
        error = {"type": "overloaded_error", "message": "Overloaded"}
        return cls(status=529, body=json.dumps({"type": "error", "error": error}), headers={"x-should-retry": "true"})

    @classmethod
    def proxy_unavailable(cls) -> Reply:
        """A reverse proxy's HTML 503 page while the server behind it is down."""
        page = ("<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center>"
                "<h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>")
        return cls(status=503, body=page, content_type="text/html")

    @classmethod
    def openai_rate_limited(cls, *, limit: str = "tokens", try_again: str | None = "450ms",
                            reset_requests: str = "1s", reset_tokens: str = "6m0s") -> Reply:
        """OpenAI's 429: no Retry-After, the reset of each limit as a duration, and a "try again in" hint."""
        name = "tokens per min (TPM): Limit 200000, Used 199550, Requested 1210" if limit == "tokens" else \
            "requests per min (RPM): Limit 500, Used 500, Requested 1"
        hint = f" Please try again in {try_again}." if try_again else ""
        message = (f"Rate limit reached for gpt-4o-mini in organization org-judgebot on {name}.{hint} Visit "
                   "https://platform.openai.com/account/rate-limits to learn more.")
        headers = {"x-ratelimit-limit-requests": "500", "x-ratelimit-limit-tokens": "200000",
                   "x-ratelimit-remaining-requests": "499", "x-ratelimit-remaining-tokens": "0",
                   "x-ratelimit-reset-requests": reset_requests, "x-ratelimit-reset-tokens": reset_tokens}
        error = {"message": message, "type": limit, "param": None, "code": "rate_limit_exceeded"}
        return cls(status=429, error=error, headers=headers)

    @classmethod
    def schema_keyword_refused(cls, schema_name: str, keyword: str = "minimum") -> Reply:
        """Azure OpenAI's (and a fine-tuned OpenAI model's) 400 for a keyword its strict schemas do not allow."""
        error = {"message": f"Invalid schema for response_format '{schema_name}': In context=('properties', "
                            f"'correctness'), '{keyword}' is not permitted.",
                 "type": "invalid_request_error", "param": "response_format", "code": None}
        return cls(status=400, error=error)


Responder = Callable[[dict[str, Any]], Reply]

# --- GPT-6's rules, as OpenAI's model pages state them (read 2026-12-07) -----------------------------------------

GPT6_DEFAULT_EFFORT = {"gpt-6-luna": "medium", "gpt-6.1-terra": "medium"}  # the others name none
GPT6_REFUSE_NONE = ("gpt-6.2-sol", "gpt-6.2-astra")
GPT6_EFFORTS = ("none", "low", "medium", "high", "xhigh", "max")
SAMPLING_PARAMETERS = ("temperature", "top_p", "logprobs", "top_logprobs")
# Reasoning tokens the stand-in spends per effort (a made-up but plausible scale: more effort, more thought).
GPT6_REASONING_TOKENS = {"none": 0, "low": 96, "medium": 384, "high": 1536, "xhigh": 4096, "max": 8192}


def gpt6_refusal(body: dict[str, Any]) -> Reply | None:
    """The 400 OpenAI answers a GPT-6 model (gpt-6*) for parameters it does not accept, else None: an effort it does
    not know or refuses ("none" on gpt-6.2-sol and gpt-6.2-astra), or temperature, top_p or logprobs with an effort
    other than "none" (sent, or its default)."""
    model = str(body.get("model", ""))
    if not model.startswith("gpt-6"):
        return None
    effort = body.get("reasoning_effort")
    if effort is not None and (effort not in GPT6_EFFORTS or (effort == "none" and model in GPT6_REFUSE_NONE)):
        return Reply(status=400, error={
            "message": f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model.",
            "type": "invalid_request_error", "param": "reasoning_effort", "code": "unsupported_value"})
    if (effort or GPT6_DEFAULT_EFFORT.get(model)) != "none":
        for name in SAMPLING_PARAMETERS:
            if name in body:
                return Reply(status=400, error={
                    "message": f"Unsupported parameter: '{name}' is not supported with reasoning effort other than "
                               "'none' on this model.",
                    "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"})
    return None


def gpt6_reasoning(body: dict[str, Any]) -> int:
    """The reasoning tokens a GPT-6 model spends on a request with this body's effort (its default when none)."""
    model = str(body.get("model", ""))
    if not model.startswith("gpt-6"):
        return 0
    return GPT6_REASONING_TOKENS[body.get("reasoning_effort") or GPT6_DEFAULT_EFFORT.get(model, "medium")]

# What a real judge endpoint does now and then, besides answering.
FAULTS = ("429", "429-retry-after", "500", "503", "drop", "hang", "html", "plain-text", "error-object", "malformed-json",
          "schema-violation", "truncated")
# A verdict that no good reply gives: a row scored with it was scored from a bad reply.
BAIT = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "bait"}


class FaultyJudge:
    """A responder that answers `good(body)`, or with probability `rate` one of FAULTS, chosen from a seeded random.

    It keeps, per `key(body)` (a row, say): the requests, and the tokens of the completions it sent (what a
    provider bills). Only a 200 completion is billed; a hang answers 504 after `hang` seconds, never a late success.
    """

    def __init__(self, good: Responder, key: Callable[[dict[str, Any]], str], *, rate: float = 0.3, hang: float = 1.0,
                 seed: int = 13) -> None:
        self.good, self.key, self.rate, self.hang = good, key, rate, hang
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.requests: collections.Counter[str] = collections.Counter()
        self.billed_in: collections.Counter[str] = collections.Counter()
        self.billed_out: collections.Counter[str] = collections.Counter()
        self.faults: collections.Counter[str] = collections.Counter()

    def __call__(self, body: dict[str, Any]) -> Reply:
        key = self.key(body)
        with self._lock:
            fault = self._random.choice(FAULTS) if self._random.random() < self.rate else None
            reply = self.good(body) if fault is None else self.fault(fault)
            self.requests[key] += 1
            self.faults[fault or "none"] += 1
            if reply.status == 200 and reply.body is None and not reply.drop and not reply.delay:
                self.billed_in[key] += reply.tokens_in
                self.billed_out[key] += reply.tokens_out
        return reply

    def fault(self, kind: str) -> Reply:
        """One reply of the kind named in FAULTS."""
        bait = json.dumps(BAIT)
        return {
            "429": lambda: Reply.rate_limited(),
            "429-retry-after": lambda: Reply.rate_limited(retry_after_ms=20),
            "500": lambda: Reply.server_error(500),
            "503": lambda: Reply.server_error(503),
            "drop": lambda: Reply(drop=True),
            "hang": lambda: dataclasses.replace(Reply.server_error(504), delay=self.hang),
            "html": Reply.html,
            "plain-text": Reply.plain_text,
            "error-object": Reply.error_object,
            "malformed-json": lambda: Reply(content=bait[: len(bait) // 2], tokens_out=7),
            "schema-violation": lambda: Reply.json({**BAIT, "correctness": 7, "result_tag": "Perfect"}, tokens_out=9),
            "truncated": lambda: Reply(content=bait, finish_reason="length", tokens_out=11),
        }[kind]()


class FakeJudgeServer(ThreadedServer):
    """Serves POST /v1/chat/completions on 127.0.0.1 from a thread of its own.

    Replies come from the queue (`enqueue`) first, then from `responder(request_body)`.
    Every request body is kept in `requests`.
    """

    thread_name = "fake-judge"

    def __init__(self, responder: Responder | None = None, latency: float = 0.0) -> None:
        super().__init__()
        self.responder = responder
        self.latency = latency
        self.reject_json_schema = False
        self.reject_response_format = False
        # Answer as OpenAI does for GPT-6 models (gpt-6*): 400 for parameters they refuse (`gpt6_refusal`), reasoning
        # tokens by effort in each reply's usage; `refused` keeps the bodies refused, `billed` what was billed.
        self.enforce_gpt6 = False
        self.refused: list[dict[str, Any]] = []
        self.billed: collections.Counter[str] = collections.Counter()
        self.requests: list[dict[str, Any]] = []
        # What the routes that tell a model's context answer, by path ("/v1/models", "/api/show", "/api/ps",
        # "/api/generate", "/props"): a JSON body, an HTTP status, or a list of them answered in turn (the last one
        # again and again). A path not scripted answers 404, as an endpoint without it does.
        self.discovery: dict[str, Any] = {}
        self.discovery_requests: list[tuple[str, Any]] = []  # (path, JSON body or None) of each, in order
        self.arrivals: list[float] = []  # time.monotonic() of each request, in order
        self.in_flight = 0
        self.peak_in_flight = 0  # the most requests this server held open at once
        self._queue: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    def routes(self, app: web.Application) -> None:
        """The chat completions endpoint."""
        app.router.add_post("/v1/chat/completions", self._complete)
        for path in ("/v1/models", "/api/ps", "/props"):  # vLLM and OpenRouter, Ollama, llama.cpp
            app.router.add_get(path, self._discover)
        app.router.add_post("/api/show", self._discover)  # Ollama
        app.router.add_post("/api/generate", self._discover)  # Ollama: with no prompt, loads the model

    async def _discover(self, request: web.Request) -> web.Response:
        """A discovery route: its scripted JSON, a scripted status, or 404 when not scripted."""
        body = await request.json() if request.can_read_body else None
        with self._lock:
            self.discovery_requests.append((request.path, body))
            answer = self.discovery.get(request.path, 404)
            if isinstance(answer, list):
                answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if isinstance(answer, int):
            return web.json_response({"error": {"message": "Not Found", "type": "not_found"}}, status=answer)
        return web.json_response(answer)

    def list_models(self, shutdowns: dict[str, str | None]) -> None:
        """Answer GET /v1/models as OpenAI's list does, each model with its `shutdown_date` (YYYY-MM-DD, or None for
        a model with no announced shutdown)."""
        self.discovery["/v1/models"] = {"object": "list", "data": [
            {"id": model, "object": "model", "created": 1_767_225_600, "owned_by": "openai", "shutdown_date": when}
            for model, when in shutdowns.items()]}

    def models_asked(self) -> int:
        """How many times GET /v1/models was asked."""
        with self._lock:
            return sum(path == "/v1/models" for path, _ in self.discovery_requests)

    def gap(self) -> float:
        """Seconds between the first request and the last: what a client waited between them, and the last send."""
        with self._lock:
            return self.arrivals[-1] - self.arrivals[0]

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            if self._queue:
                return self._queue.popleft()
        if self.responder is None:
            return Reply(status=500, error={"message": "no scripted reply", "type": "test", "code": None})
        return self.responder(body)

    async def _hold(self, seconds: float) -> None:
        """Keep a request open for `seconds`, counting how many are open at once."""
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(seconds)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _complete(self, request: web.Request) -> web.Response:
        body = await request.json()
        fmt = (body.get("response_format") or {}).get("type")
        if (self.reject_json_schema and fmt == "json_schema") or (self.reject_response_format and fmt):
            with self._lock:
                self.requests.append(body)
                self.arrivals.append(time.monotonic())
            error = {"message": f"response_format type '{fmt}' is not supported", "type": "invalid_request_error",
                     "param": "response_format", "code": None}
            return web.json_response({"error": error}, status=400)
        if self.enforce_gpt6 and (refusal := gpt6_refusal(body)) is not None:
            with self._lock:
                self.requests.append(body)
                self.refused.append(body)
            return web.json_response({"error": refusal.error}, status=refusal.status)
        reply = self._next_reply(body)
        if self.enforce_gpt6 and reply.status == 200 and reply.body is None and reply.reasoning_tokens is None:
            reply = dataclasses.replace(reply, reasoning_tokens=gpt6_reasoning(body))
        if self.latency or reply.delay:
            await self._hold(self.latency + reply.delay)
        if reply.drop:
            request.transport.abort()  # type: ignore[union-attr]
            raise ConnectionResetError("dropped on purpose")
        if reply.body is not None:
            return web.Response(text=reply.body, status=reply.status, content_type=reply.content_type,
                                headers=reply.headers)
        if reply.status != 200:
            return web.json_response({"error": reply.error}, status=reply.status, headers=reply.headers)
        reasoning = reply.reasoning_tokens or 0
        with self._lock:
            self.billed.update(tokens_in=reply.tokens_in, tokens_out=reply.tokens_out + reasoning,
                               tokens_cached=reply.cached_tokens or 0, tokens_reasoning=reasoning)
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": reply.finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.tokens_in,
                    "completion_tokens": reply.tokens_out + reasoning,
                    "total_tokens": reply.tokens_in + reply.tokens_out + reasoning,
                    **({"prompt_tokens_details": {"cached_tokens": reply.cached_tokens, "audio_tokens": 0}}
                       if reply.cached_tokens is not None else {}),
                    **({"completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0}}
                       if reply.reasoning_tokens is not None else {}),
                },
            },
            headers=reply.headers,
        )
