"""The judge's client: AsyncOpenAI with structured output, fallbacks, retries and a shared throttle."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient
from openai.types.chat import ChatCompletion, ChatCompletionMessage

from bot.config import Settings
from bot.errors import JudgeCallError, RunStopped
from bot.pacing import Throttle, backoff, retry_after

log = logging.getLogger(__name__)

OutputMode = Literal["json_schema", "json_object", "text"]
RESUME = "resume the run"  # what every RunStopped that a resume cures advises (a single judgment rewrites it)
MAX_RETRY_AFTER = 120.0  # a server that asks for a longer wait is not coming back within this run
CONNECT_TIMEOUT = 10.0  # seconds to open a connection to the judge


@dataclass(frozen=True)
class Completion:
    """The text of one judge reply and what it cost."""

    text: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    latency_ms: int = 0
    refusal: str | None = None


@dataclass(frozen=True)
class _Retry:
    """A failed request worth sending again after `delay` seconds."""

    delay: float
    failure: str
    gist: str  # the failure in a few words, for a progress bar
    run_wide: bool = False  # every other request would fail alike: when retries run out, pause the run


@dataclass(frozen=True)
class Retrying:
    """A judge request about to be sent again: why, in a few words, and which attempt of how many comes next."""

    gist: str
    attempt: int
    attempts: int

    def __str__(self) -> str:
        return f"{self.gist}, retrying ({self.attempt}/{self.attempts})"


class NotACompletion(Exception):
    """A 200 whose body is not a chat completion (an HTML page, plain text, an error object); retried like a 5xx."""


_retry_observer: ContextVar[Callable[[Retrying], None] | None] = ContextVar("judge_retry_observer", default=None)


@contextmanager
def observing_retries(observer: Callable[[Retrying], None]) -> Iterator[None]:
    """Tell `observer` of every retry of the judge requests made inside this block (and the tasks it starts)."""
    token = _retry_observer.set(observer)
    try:
        yield
    finally:
        _retry_observer.reset(token)


def _caused_by(err: BaseException, *types: type[BaseException]) -> bool:
    """Whether `err` or anything in its cause chain is one of `types`.

    The SDK's aiohttp transport reports a refused connection, a dropped one and a slow reply all as
    timeouts; the underlying error tells them apart.
    """
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, types):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _wait(hint: float | None, attempt: int) -> float:
    """The server's Retry-After when it gave one, else our backoff; RunStopped when it asks for too long."""
    if hint is None:
        return backoff(attempt)
    if hint > MAX_RETRY_AFTER:
        raise RunStopped(f"the judge endpoint asks to wait {hint:.0f} s before the next request; {RESUME} later")
    return hint


def _is_quota(err: openai.APIStatusError) -> bool:
    # The SDK lifts `code` and `type` out of the error body; OpenAI sets both to insufficient_quota.
    return "insufficient_quota" in (getattr(err, "code", None), getattr(err, "type", None))


class JudgeClient:
    """Sends chat completions to the judge model and returns Completion objects.

    The openai SDK's own retries are off (`max_retries=0`): it would retry an
    `insufficient_quota` 429 and could not tell the run's throttle to slow down.
    """

    def __init__(
        self,
        client: AsyncOpenAI,
        *,
        model: str,
        temperature: float | None = 0.0,
        max_retries: int = 6,
        throttle: Throttle | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_retries = max_retries
        self.throttle = throttle or Throttle(16)
        self.mode: OutputMode = "json_schema"
        self.reached = False  # the endpoint has answered once: a refused connection now is a blip, not a wrong URL

    @property
    def endpoint(self) -> str:
        """The judge endpoint's scheme, host, port and path: never a key in its user part or query (it is saved and
        posted in stop reasons)."""
        url = self.client.base_url
        host = f"[{url.host}]" if ":" in url.host else url.host
        port = f":{url.port}" if url.port is not None else ""
        return f"{url.scheme}://{host}{port}{url.path}".rstrip("/")

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete(self, messages: list[dict[str, str]], *, schema_name: str, schema: dict[str, Any]) -> Completion:
        """One completion, retried on 429, 5xx and timeouts; RunStopped or JudgeCallError when it cannot succeed."""
        attempt = 0
        while True:
            async with self.throttle:
                sent_mode, sent_temperature = self.mode, self.temperature
                try:
                    completion = await self._send(self._body(messages, schema_name, schema))
                except openai.APIError as err:
                    retry = self._after(err, attempt, sent_mode, sent_temperature)
                except NotACompletion as err:
                    self.reached = True
                    retry = _Retry(backoff(attempt), str(err), "the judge sent no completion")
                else:
                    self.reached = True
                    self.throttle.succeeded()
                    return completion
            if retry is None:  # the request changed (format, temperature): send it again at once
                continue
            attempt += 1
            if attempt > self.max_retries:
                if retry.run_wide:  # every other row would fail the same way: keep them pending for a resume
                    raise RunStopped(f"{retry.failure} (gave up after {attempt} attempts); check the endpoint, its "
                                     f"limits and the network, then {RESUME}")
                raise JudgeCallError(f"{retry.failure}; gave up after {attempt} attempts")
            log.info("judge request failed (%s); retrying in %.1fs", retry.failure, retry.delay)
            if (observer := _retry_observer.get()) is not None:
                observer(Retrying(retry.gist, attempt + 1, self.max_retries + 1))
            await asyncio.sleep(retry.delay)

    async def _send(self, body: dict[str, Any]) -> Completion:
        """One request and its Completion; NotACompletion when a 200 holds something else."""
        started = time.monotonic()
        try:
            # The SDK's plain `post` (its documented way to send a body as is) rather than
            # `chat.completions.create`, which re-walks every message and the schema against its
            # typed params on each call: ~2 ms of CPU per row, a third of a run's CPU time.
            response = await self.client.post("/chat/completions", cast_to=ChatCompletion, body=body)
        except json.JSONDecodeError as err:  # the body said it was JSON
            raise NotACompletion(f"the judge endpoint answered 200 with a body that is not valid JSON ({err})") from None
        return _completion(response, int((time.monotonic() - started) * 1000))

    def _after(self, err: openai.APIError, attempt: int, sent_mode: OutputMode,
               sent_temperature: float | None) -> _Retry | None:
        """What a failed request calls for: a changed request (None), a retry, or an exception."""
        if isinstance(err, openai.APIStatusError):
            self.reached = True
        if isinstance(err, (openai.BadRequestError, openai.UnprocessableEntityError)):
            # Requests in flight share the mode: only the first refusal of a mode steps it down.
            if sent_mode != "text" and _rejects_format(err):
                if self.mode == sent_mode:
                    self._downgrade(err)
                return None
            if sent_temperature is not None and "temperature" in _message(err).lower():
                if self.temperature is not None:  # reasoning models accept only their default temperature
                    log.warning("judge model refuses temperature %s; using its default", self.temperature)
                self.temperature = None
                return None
            raise JudgeCallError(f"the judge endpoint refused the request: {_message(err)}") from None
        if isinstance(err, openai.RateLimitError):
            if _is_quota(err):
                raise RunStopped("the judge account has no quota left (insufficient_quota): add credit or raise "
                                 f"the limit, then {RESUME}") from None
            wait = _wait(retry_after(err.response.headers), attempt)
            self.throttle.rate_limited(wait * random.uniform(1.0, 1.2))
            # The throttle holds every request, this one included, until the wait is over; a saturated
            # endpoint fails every row alike, so running out of retries pauses the run.
            return _Retry(0.0, f"rate limited (429) {attempt + 1} times", "the judge is rate limiting", run_wide=True)
        if isinstance(err, (openai.AuthenticationError, openai.PermissionDeniedError)):
            raise RunStopped(f"the judge endpoint rejected the key: {_message(err)}") from None
        if isinstance(err, openai.NotFoundError):
            raise RunStopped(f"the judge endpoint does not know model {self.model!r}: {_message(err)}") from None
        if isinstance(err, openai.APIStatusError):
            failure = f"the judge endpoint answered {err.status_code}: {_message(err)}"
            if err.status_code < 500 and err.status_code not in (408, 409):
                raise JudgeCallError(failure) from None
            return _Retry(_wait(retry_after(err.response.headers), attempt), failure,
                          f"the judge answered {err.status_code}")
        # No HTTP answer. Refused, unknown host, connect timeout: no request gets through, so pause the run.
        if not self.reached and (wrong := _wrong_address(err, self.client.base_url.host)):
            raise RunStopped(f"cannot reach the judge endpoint {self.endpoint}: {wrong}. Check OPENAI_BASE_URL "
                             "(host and port), that the server there is running and that this machine can reach "
                             f"it, then {RESUME}") from None
        if _caused_by(err, ConnectionRefusedError, socket.gaierror, aiohttp.ClientConnectorError,
                      aiohttp.ConnectionTimeoutError):
            return _Retry(backoff(attempt), f"cannot reach the judge endpoint {self.endpoint}: "
                          f"{err.__cause__ or err}", "cannot reach the judge", run_wide=True)
        if isinstance(err, openai.APITimeoutError) and _caused_by(err, TimeoutError):
            return _Retry(backoff(attempt), "the judge did not answer within the request timeout",
                          "the judge did not answer in time")
        return _Retry(backoff(attempt), f"the connection to the judge endpoint broke: {err.__cause__ or err}",
                      "the connection to the judge broke")

    def _body(self, messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **self._format(schema_name, schema)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def _format(self, schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.mode == "json_schema":
            spec = {"name": schema_name, "schema": schema, "strict": True}
            return {"response_format": {"type": "json_schema", "json_schema": spec}}
        if self.mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        return {}

    def _downgrade(self, err: openai.APIStatusError) -> None:
        previous, self.mode = self.mode, ("json_object" if self.mode == "json_schema" else "text")
        log.warning("judge endpoint refused response_format %s (%s); using %s", previous, _message(err), self.mode)


def _wrong_address(err: BaseException, host: str) -> str | None:
    """What a request that no server could have answered ran into (a refused connection, an unknown host), if that."""
    if _caused_by(err, socket.gaierror):
        return f"the host name {host!r} does not resolve (DNS)"
    if _caused_by(err, ConnectionRefusedError):
        return "the connection was refused (nothing listens on that port)"
    return None


def _rejects_format(err: openai.APIStatusError) -> bool:
    text = f"{_message(err)} {getattr(err, 'param', '') or ''}".lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "structured", "schema"))


def _message(err: openai.APIStatusError) -> str:
    """The provider's own message, as one printable line of at most 300 characters (it is shown and saved)."""
    body = err.body if isinstance(err.body, dict) else {}
    inner = body.get("error", body)
    message = inner.get("message") if isinstance(inner, dict) else None
    return _one_line(str(message or err.message), 300)


def _one_line(text: str, limit: int) -> str:
    """`text` with its whitespace runs as single spaces and no control characters (NULs included), cut to `limit`."""
    line = "".join(char for char in " ".join(text[: limit * 4].split()) if char.isprintable())
    return line[:limit] + ("…" if len(line) > limit else "")


def _gist(body: Any, limit: int = 120) -> str:
    """A body as one short printable line, quoted: enough to recognise it in a message, never a page of it."""
    return repr(_one_line(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str), limit))


def _completion(response: Any, latency_ms: int) -> Completion:
    """The Completion in a parsed 200 body; NotACompletion when it holds something else."""
    if not isinstance(response, ChatCompletion):  # the SDK hands back a body it could not read as JSON as it came
        raise NotACompletion(f"the judge endpoint answered 200 with a body that is not a chat completion: {_gist(response)}")
    if (error := (response.model_extra or {}).get("error")) is not None:
        message = error.get("message") if isinstance(error, dict) else None
        raise NotACompletion(f"the judge endpoint answered 200 with an error: {_gist(message or error, 300)}")
    if response.choices == []:
        raise JudgeCallError("the judge endpoint returned no choices")
    choice = response.choices[0] if isinstance(response.choices, list) else None
    message = getattr(choice, "message", None)
    if not isinstance(message, ChatCompletionMessage) or not isinstance(message.content, str | None):
        raise NotACompletion("the judge endpoint answered 200 with a body that is not a chat completion: "
                             f"{_gist(f'choices: {response.choices!r}')}")
    usage = response.usage
    return Completion(
        text=choice.message.content or "",
        finish_reason=choice.finish_reason,
        tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
        tokens_out=getattr(usage, "completion_tokens", 0) or 0,
        latency_ms=latency_ms,
        refusal=getattr(choice.message, "refusal", None),
    )


def make_judge_client(
    *, api_key: str | None, base_url: str | None, model: str, timeout: float, temperature: float = 0.0,
    max_retries: int = 6, concurrency: int = 16, connect_timeout: float = CONNECT_TIMEOUT,
) -> JudgeClient:
    """A JudgeClient over a new AsyncOpenAI client; a local server without a key gets a placeholder key."""
    # A judge may take minutes to answer, but a host that does not take the connection within seconds is not
    # there: the run says so (and retries) then, not after the whole request timeout.
    limits = openai.Timeout(timeout, connect=min(timeout, connect_timeout))
    # aiohttp as the transport, as the SDK recommends for concurrency: its C parser halves the CPU per request.
    client = AsyncOpenAI(api_key=api_key or "not-needed", base_url=base_url, timeout=limits, max_retries=0,
                         http_client=DefaultAioHttpClient(timeout=limits))
    return JudgeClient(client, model=model, temperature=temperature, max_retries=max_retries,
                       throttle=Throttle(concurrency))


def judge_client_from(settings: Settings, *, model: str | None = None, concurrency: int | None = None) -> JudgeClient:
    """The JudgeClient the settings describe (`model` and `concurrency` override theirs)."""
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return make_judge_client(
        api_key=key, base_url=settings.openai_base_url, model=model or settings.judge_model,
        timeout=settings.judge_timeout, temperature=settings.judge_temperature,
        max_retries=settings.judge_max_retries, concurrency=concurrency or settings.concurrency,
    )
