"""The judge's client: AsyncOpenAI with structured output, fallbacks, retries and a shared throttle."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
from typing import Any

import aiohttp
import httpx2
import openai
from openai import AsyncOpenAI

from bot.errors import JudgeCallError, RunStopped
from bot.llm.answers import (
    RESUME,
    Completion,
    NotACompletion,
    billing_refusal,
    completion,
    message_of,
    raw_message,
    rejects_format,
    status_text,
)
from bot.llm.context_window import ContextWindow, discover
from bot.llm.endpoints import azure_v1_url
from bot.llm.limiters import LIMITERS
from bot.llm.output_modes import OutputMode, OutputModes
from bot.llm.pacing import Throttle, backoff, rate_limit_wait, retry_after
from bot.llm.prices import PriceTable
from bot.llm.rate_limits import RateLimiter
from bot.llm.responses_api import BATCH_URLS, Api, BatchUrl, Queued, in_background, read_response, responses_body
from bot.llm.retries import (
    Retry,
    Retrying,
    Tries,
    caused_by,
    retry_wait,
    span,
    tell_observer,
    wrong_address,
)
from bot.llm.sampling import Effort, ModelRules

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds to open a connection to the judge
RATE_LIMIT_BUDGET = 120.0  # seconds one request may wait out 429s before the run pauses
OUTAGE_BUDGET = 120.0  # seconds the endpoint may fail (502-504, 529) with no success before the run pauses
MIN_RATE_LIMIT_CHARGE = 0.25  # each 429 counts at least this against the budget, whatever wait the server asks
OUTAGE_STATUSES = frozenset({502, 503, 504, 529})  # the endpoint or the provider behind it is down or overloaded


class JudgeClient:
    """Sends chat completions to the judge model and returns Completion objects.

    The openai SDK's own retries are off (`max_retries=0`): it would retry an
    `insufficient_quota` 429 and could not tell the run's throttle to slow down.
    The output mode is kept per schema (its name and content, and the model): one rubric the endpoint refuses
    steps down alone.

    A model whose rules `table` lists (bot/llm/prices.yaml) is sent only what it accepts: an effort it takes (the
    one asked, else the judging default), and a temperature only with effort "none" (SetupError for an effort it
    refuses, before any request). Any other model's rules are learned from a refused request (`_refused`).
    """

    def __init__(
        self,
        client: AsyncOpenAI,
        *,
        model: str,
        temperature: float | None = 0.0,
        max_retries: int = 6,
        throttle: Throttle | None = None,
        reasoning_effort: Effort | None = None,
        max_completion_tokens: int | None = None,
        rate_limit_budget: float = RATE_LIMIT_BUDGET,
        outage_budget: float = OUTAGE_BUDGET,
        limiter: RateLimiter | None = None,
        table: PriceTable | None = None,
        effort_from: str = "JUDGE_REASONING_EFFORT",
        api: Api = "chat",
    ) -> None:
        self.client = client
        self.api = api  # asked through Chat Completions or the Responses API (bot.llm.responses_api.api_for)
        self.limiter = limiter or RateLimiter()
        self.model = model
        self.max_retries = max_retries
        self.throttle = throttle or Throttle(16)
        self.table = table
        self.asked_effort, self.effort_from = reasoning_effort, effort_from  # as set, and where it was set
        self.rules: ModelRules | None = table.rules_of(model) if table is not None else None
        if self.rules is not None:
            reasoning_effort = self.rules.effort_for(reasoning_effort, effort_from)
            if not self.rules.takes_sampling(reasoning_effort):
                temperature = None  # a reasoning model refuses one: never sent, rather than refused and learned
        self.temperature = temperature
        self.reasoning_effort = reasoning_effort
        self.max_completion_tokens = max_completion_tokens
        self.rate_limit_budget = rate_limit_budget
        self.outage_budget = outage_budget
        self.modes = OutputModes()
        self.reached = False  # the endpoint has answered once: a refused connection now is a blip, not a wrong URL
        self._window: ContextWindow | None = None
        self._window_asked = False
        self._window_lock = asyncio.Lock()

    def sibling(self, *, model: str | None = None, temperature: float | None = None, effort: Effort | None = None,
                effort_from: str | None = None) -> JudgeClient:
        """A client for another model, temperature or effort (`effort_from` says where that was set) that asks
        through these connections, shares this throttle and sends the same settings."""
        same = model is None or model == self.model
        return JudgeClient(self.client, model=model or self.model, temperature=temperature,
                           max_retries=self.max_retries, throttle=self.throttle,
                           reasoning_effort=effort or self.asked_effort, max_completion_tokens=self.max_completion_tokens,
                           rate_limit_budget=self.rate_limit_budget, outage_budget=self.outage_budget,
                           limiter=self.limiter if same else LIMITERS.of(self.endpoint, model or self.model),
                           table=self.table, effort_from=effort_from or self.effort_from, api=self.api)

    @property
    def effort_in_force(self) -> Effort | None:
        """The reasoning effort the judge works at: the one sent, else the model's own when its rules say it; None
        when neither is known."""
        return self.reasoning_effort or (self.rules.default if self.rules is not None else None)

    @property
    def endpoint(self) -> str:
        """The judge endpoint's scheme, host, port and path: never a key in its user part or query (it is saved and
        posted in stop reasons)."""
        url = self.client.base_url
        host = f"[{url.host}]" if ":" in url.host else url.host
        port = f":{url.port}" if url.port is not None else ""
        return f"{url.scheme}://{host}{port}{url.path}".rstrip("/")

    async def context_window(self) -> ContextWindow | None:
        """The judge model's context window, asked of the endpoint at the first call and kept; None when unknown."""
        if not self._window_asked:
            async with self._window_lock:
                if not self._window_asked:
                    try:
                        self._window = await discover(self.client, self.model)
                    except Exception:  # an endpoint that answers discovery oddly is judged as if it had not been asked
                        log.warning("could not learn the context window of %s", self.model, exc_info=True)
                    self._window_asked = True
        return self._window

    def mode_for(self, schema_name: str, schema: dict[str, Any]) -> OutputMode:
        """The output mode requests with this schema are sent with now."""
        return self.modes.of(self.modes.key(self.model, schema_name, schema))

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def request_body(self, messages: list[dict[str, str]], *, schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The body `complete` would send for these messages now (as a line of a batch file sends it)."""
        key = self.modes.key(self.model, schema_name, schema)
        return self._body(messages, schema_name, schema, key, self.modes.of(key))

    @property
    def batch_url(self) -> BatchUrl:
        """The URL a batch line of this judge names, and the endpoint its batches are created for."""
        return BATCH_URLS[self.api]

    async def complete(self, messages: list[dict[str, str]], *, schema_name: str, schema: dict[str, Any]) -> Completion:
        """One completion, retried on 429, 5xx and timeouts; RunStopped or JudgeCallError when it cannot succeed."""
        answer = await self._exchange(messages, schema_name, schema)
        if isinstance(answer, Queued):  # a live request the endpoint queued anyway: not a reply
            raise JudgeCallError(f"the judge endpoint queued response {answer.id} instead of answering")
        return answer

    async def start_background(self, messages: list[dict[str, str]], *, schema_name: str, schema: dict[str, Any],
                               window: str, tag: str) -> Queued | Completion:
        """A Responses request created in the background with the completion `window` ("2h", "8h") and `tag` in its
        metadata, retried like a live one: Queued with its id (or the Completion, when it ended at once)."""
        return await self._exchange(messages, schema_name, schema, (window, tag))

    async def poll(self, response_id: str) -> Queued | Completion:
        """A background response as it is now: Queued while it waits, its Completion once it ended; JudgeCallError
        when it failed or was cancelled. The SDK's errors (a 5xx, a dropped connection) are the caller's."""
        started = time.monotonic()
        response = await self.client.responses.with_raw_response.retrieve(response_id)
        return read_response(_parsed(response.http_response), int((time.monotonic() - started) * 1000))

    async def cancel_background(self, response_id: str) -> None:
        """Ask the endpoint to cancel a background response (one that ended meanwhile stays as it ended)."""
        await self.client.responses.with_raw_response.cancel(response_id)

    async def _exchange(self, messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any],
                        background: tuple[str, str] | None = None) -> Completion | Queued:
        """One request (in the background with `background`'s window and tag), retried on 429, 5xx and timeouts."""
        key = self.modes.key(self.model, schema_name, schema)
        tries = Tries()
        limiter = self.limiter
        while True:
            async with self.throttle:
                sent_mode, sent_temperature = self.modes.of(key), self.temperature
                # Room in the minute's budget first (an endpoint that tells no limit: no wait, not even a coroutine)
                entry = None if limiter.free else await limiter.acquire(messages)
                try:
                    body = self._body(messages, schema_name, schema, key, sent_mode)
                    if background is not None:
                        body = in_background(body, *background)
                    completion, headers = await self._send(body)
                except openai.APIError as err:
                    retry = self._after(err, tries.attempt, key, sent_mode, sent_temperature, entry)
                except NotACompletion as err:
                    self.reached = True
                    retry = Retry(backoff(tries.attempt), str(err), "the judge sent no completion",
                                   kind="outage" if err.outage else "row", status="errors in its 200 replies",
                                   detail=err.detail)
                else:
                    self.reached = True
                    self.throttle.succeeded()
                    # What the request used, then what the endpoint says is left: the two agree unless others spend too.
                    limiter.settle(entry, tokens_in=completion.tokens_in, tokens_out=completion.tokens_out,
                                   latency=completion.latency_ms / 1000)
                    limiter.observe(headers, sent=entry[0] if entry is not None else None)
                    # Known limits set how many requests are worth sending at once (the settings stay the most).
                    self.throttle.ceilings[limiter] = limiter.in_flight()
                    return completion
            if retry is None:  # the request changed (format, temperature): send it again at once
                continue
            tries.attempt += 1
            self._give_up_unless_worth_it(retry, tries)
            log.info("judge request failed (%s); retrying in %.1fs", retry.failure, retry.delay)
            tell_observer(Retrying(retry.gist, tries.attempt + 1, self.max_retries + 1, max(retry.delay, retry.waited)))
            await asyncio.sleep(retry.delay)

    def _give_up_unless_worth_it(self, retry: Retry, tries: Tries) -> None:
        """Raise when `retry` has used up its budget: RunStopped when every row would fail alike, else JudgeCallError."""
        if retry.kind == "rate_limit":
            tries.rate_limited_for += max(retry.waited, MIN_RATE_LIMIT_CHARGE)
            if tries.rate_limited_for > self.rate_limit_budget:
                raise RunStopped(f"{retry.failure}, {span(tries.rate_limited_for)} of waiting for one request; check "
                                 f"the endpoint's limits (or lower CONCURRENCY), then {RESUME}")
            return
        if retry.kind == "outage":
            failing_for = self.throttle.failed()
            if failing_for >= self.outage_budget:
                raise RunStopped(f"the judge endpoint has been failing with {retry.status} for {span(failing_for)}: "
                                 f"{retry.detail or retry.failure}; {RESUME} once it answers")
            if tries.outage_since is None:
                tries.outage_since = self.throttle.failing_since
            # No success anywhere since this request began failing: the endpoint is down, wait it out (bounded above).
            if self.throttle.failing_since == tries.outage_since:
                return
        if tries.attempt > self.max_retries:
            if retry.kind == "unreachable":  # every other row would fail the same way: keep them pending for a resume
                raise RunStopped(f"{retry.failure} (gave up after {tries.attempt} attempts); check the endpoint, its "
                                 f"limits and the network, then {RESUME}")
            raise JudgeCallError(f"{retry.failure}; gave up after {tries.attempt} attempts")

    async def _send(self, body: dict[str, Any]) -> tuple[Completion | Queued, Any]:
        """One request: its Completion (Queued: a background one) and the reply's headers; NotACompletion when a 200
        holds something else."""
        started = time.monotonic()
        if self.api == "responses":
            # The SDK's typed call (its params checked as it sends them); the raw reply for its headers, and its body
            # read as judgebot reads any: a proxy's page in a 200 is said as such, never parsed as a response.
            raw = await self.client.responses.with_raw_response.create(**body)
            return read_response(_parsed(raw.http_response), int((time.monotonic() - started) * 1000)), raw.headers
        try:
            # The SDK's plain `post` (its documented way to send a body as is) rather than
            # `chat.completions.create`, which re-walks every message and the schema against its
            # typed params on each call: ~2 ms of CPU per row, a third of a run's CPU time. With
            # `cast_to=object` it hands back the parsed JSON, read here through a model of the few fields
            # judgebot uses, instead of building the SDK's whole ChatCompletion (about 1 ms more a row).
            # The HTTP response itself (`cast_to` the SDK's response class) rather than its parsed body: its
            # `x-ratelimit-*` headers tell the limiter the endpoint's limits and what is left of them.
            response = await self.client.post("/chat/completions", cast_to=httpx2.Response, body=body)
            # As the SDK reads a body: JSON when it says it is, else its text (a proxy's page, say what it is).
            kind = response.headers.get("content-type", "*").split(";")[0]
            parsed = response.json() if kind.endswith("json") else response.text
        except json.JSONDecodeError as err:  # the body said it was JSON
            raise NotACompletion(f"the judge endpoint answered 200 with a body that is not valid JSON ({err})") from None
        return completion(parsed, int((time.monotonic() - started) * 1000)), response.headers

    def _after(self, err: openai.APIError, attempt: int, key: tuple[str, str, str], sent_mode: OutputMode,
               sent_temperature: float | None, entry: list[float] | None) -> Retry | None:
        """What a failed request (counted at the limiter as `entry`) calls for: a changed request (None), a retry, or
        an exception."""
        if isinstance(err, openai.APIStatusError):
            self.reached = True
            self.limiter.heard()
            if (billing := billing_refusal(err)) is not None:
                raise RunStopped(billing) from None
        if isinstance(err, (openai.BadRequestError, openai.UnprocessableEntityError)):
            self._refused(err, key, sent_mode, sent_temperature)
            return None
        if isinstance(err, openai.RateLimitError):
            wait = retry_wait(rate_limit_wait(err.response.headers, raw_message(err)), attempt)
            self.limiter.rate_limited(err.response.headers, raw_message(err), wait * random.uniform(1.0, 1.1), entry)
            if not self.limiter.known:  # no limit to pace by: fewer requests at once, until they go through again
                self.throttle.rate_limited(wait * random.uniform(1.0, 1.2))
            # The throttle holds every request, this one included, until the wait is over; a saturated
            # endpoint fails every row alike, so running out of the time budget pauses the run.
            return Retry(0.0, f"rate limited (429) {attempt + 1} times", "the judge is rate limiting",
                          kind="rate_limit", waited=wait)
        if isinstance(err, (openai.AuthenticationError, openai.PermissionDeniedError)):
            raise RunStopped(f"the judge endpoint rejected the key: {message_of(err)}") from None
        if isinstance(err, openai.NotFoundError):
            raise RunStopped(self._not_found(err)) from None
        if isinstance(err, openai.APIStatusError):
            failure = f"the judge endpoint answered {err.status_code}: {message_of(err)}"
            if err.status_code < 500 and err.status_code not in (408, 409):
                raise JudgeCallError(failure) from None
            outage = err.status_code in OUTAGE_STATUSES
            return Retry(retry_wait(retry_after(err.response.headers), attempt), failure,
                          f"the judge answered {err.status_code}", kind="outage" if outage else "row",
                          status=status_text(err.status_code), detail=message_of(err))
        # No HTTP answer. Refused, unknown host, connect timeout: no request gets through, so pause the run.
        if not self.reached and (wrong := wrong_address(err, self.client.base_url.host)):
            raise RunStopped(f"cannot reach the judge endpoint {self.endpoint}: {wrong}. Check OPENAI_BASE_URL "
                             "(host and port), that the server there is running and that this machine can reach "
                             f"it, then {RESUME}") from None
        if caused_by(err, ConnectionRefusedError, socket.gaierror, aiohttp.ClientConnectorError,
                      aiohttp.ConnectionTimeoutError):
            return Retry(backoff(attempt), f"cannot reach the judge endpoint {self.endpoint}: "
                          f"{err.__cause__ or err}", "cannot reach the judge", kind="unreachable")
        if isinstance(err, openai.APITimeoutError) and caused_by(err, TimeoutError):
            return Retry(backoff(attempt), "the judge did not answer within the request timeout",
                          "the judge did not answer in time")
        return Retry(backoff(attempt), f"the connection to the judge endpoint broke: {err.__cause__ or err}",
                      "the connection to the judge broke")

    def _refused(self, err: openai.APIStatusError, key: tuple[str, str, str], sent_mode: OutputMode,
                 sent_temperature: float | None) -> None:
        """A 400 or 422: step the output format down or drop the temperature (then send again), else raise."""
        text = f"{raw_message(err)} {getattr(err, 'param', '') or ''}"
        for names, value, setting in ((("reasoning_effort", "reasoning.effort"), self.reasoning_effort,
                                       "JUDGE_REASONING_EFFORT"),
                                      (("max_completion_tokens", "max_output_tokens"), self.max_completion_tokens,
                                       "JUDGE_MAX_COMPLETION_TOKENS")):
            name = next((name for name in names if name in text), None)
            if value is not None and name is not None:  # every request carries it: no row can succeed
                raise RunStopped(f"the judge endpoint refuses {name} {value} for model {self.model!r} ({setting}): "
                                 f"{message_of(err)}; change or unset {setting}, then {RESUME}") from None
        # Requests in flight share the mode: only the first refusal of a mode steps it down.
        if sent_mode != "text" and rejects_format(err):
            if self.modes.of(key) == sent_mode:
                self.modes.step_down(key, sent_mode, err)
            return
        if sent_temperature is not None and "temperature" in text.lower():
            if self.temperature is not None:  # reasoning models accept only their default temperature
                log.warning("judge model refuses temperature %s; using its default", self.temperature)
            self.temperature = None
            return
        raise JudgeCallError(f"the judge endpoint refused the request: {message_of(err)}") from None

    def _not_found(self, err: openai.APIStatusError) -> str:
        """Why a 404 stops the run: an Azure deployment URL where the /openai/v1/ one belongs, or an unknown model."""
        if (better := azure_v1_url(str(self.client.base_url))) is not None:
            return (f"the judge endpoint {self.endpoint} is an Azure OpenAI URL of the deployment form, which answers "
                    f"404 ({message_of(err)}): set OPENAI_BASE_URL to {better} and JUDGE_MODEL to the deployment name, "
                    f"then {RESUME}")
        return f"{UNKNOWN_MODEL} {self.model!r}: {message_of(err)}"

    def _body(self, messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any],
              key: tuple[str, str, str], mode: OutputMode) -> dict[str, Any]:
        """The request's body, in the shape of the API the judge is asked through."""
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                **self.modes.response_format(schema_name, schema, key, mode)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        if self.max_completion_tokens is not None:
            body["max_completion_tokens"] = self.max_completion_tokens
        return body if self.api == "chat" else responses_body(body)


def _parsed(response: httpx2.Response) -> Any:
    """A 200's body as the SDK reads one: JSON when it says it is, else its text; NotACompletion for broken JSON."""
    kind = response.headers.get("content-type", "*").split(";")[0]
    try:
        return response.json() if kind.endswith("json") else response.text
    except json.JSONDecodeError as err:
        raise NotACompletion(f"the judge endpoint answered 200 with a body that is not valid JSON ({err})") from None


UNKNOWN_MODEL = "the judge endpoint does not know model"  # how a stop for a model the endpoint does not serve opens
