"""Who calls the MCP server over HTTP: an agent presenting MCP_TOKEN, or Slackbot with Slack's signature on the request
(and, on a tool call, the Slack person it calls for), each signed request once. Anything else, and a signed request
taken before, is refused with 401 before the MCP SDK reads it."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

log = logging.getLogger(__name__)

MAX_BODY = 4 * 1024 * 1024  # bytes of a signed request read before it is refused (the MCP SDK's own limit)
BODY_SECONDS = 30  # how long a signed request's body may take to arrive
SIGNED_WITHIN = 300  # seconds: how old a signature Slack's own check accepts
PRESENTED = "judgebot.presented"  # where the request's scope state keeps what it proved
SLACK_ID = r"^[A-Z0-9]{2,32}$"  # T..., E..., U... or W...
# What Slackbot sends to learn what the server offers: nothing done for anyone, and the same bytes from two of its
# conversations in one second, so not remembered. Every other signed request (a tool call) is taken once.
DISCOVERY = frozenset({"server/discover", "initialize", "notifications/initialized", "ping", "tools/list"})
REPLAYED = ("Slack signed this request once and judgebot took it already: a request is taken once (a replay is "
            "refused), so send a new one")
UNRECORDED = "judgebot cannot reach its database just now, so it did not take this request: try again in a minute"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class SlackSignature(Protocol):
    """Checks that Slack signed a request with the app's signing secret (over the raw body, within five minutes)."""

    def signed(self, body: bytes, timestamp: str, signature: str) -> bool: ...


class Once(Protocol):
    """Remembers the signed requests taken, across every replica (bot.mcp.replays.SignedOnce)."""

    async def first(self, timestamp: str, body: bytes) -> bool: ...


class SlackPerson(BaseModel):
    """The person Slackbot calls a tool for, as Slack puts it in the signed request's `params._meta.slack`."""

    user_id: str = Field(pattern=SLACK_ID)
    team_id: str | None = Field(None, pattern=SLACK_ID)  # None: an Enterprise org's workspace Slack could not name
    enterprise_id: str | None = Field(None, pattern=SLACK_ID)


@dataclass(frozen=True)
class Presented:
    """What a request proved: MCP_TOKEN, or Slack's signature (with the person, when a tool is called for one)."""

    kind: Literal["token", "slack"]
    person: SlackPerson | None = None


def parsed(body: bytes) -> Any:
    """The JSON-RPC message of a request's body (None when it is not JSON)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested past the parser's depth
        return None


def acts(message: Any) -> bool:
    """Whether a signed message may do something for someone (a tool call, a batch, anything but discovery)."""
    return not (isinstance(message, dict) and message.get("method") in DISCOVERY)


def person_in(message: Any) -> SlackPerson | None:
    """The Slack person a signed JSON-RPC message names in `params._meta.slack`, if it names one well."""
    try:
        found = message["params"]["_meta"]["slack"]
    except (KeyError, TypeError):
        return None
    if not isinstance(found, dict):
        return None
    try:
        return SlackPerson.model_validate(found)
    except ValidationError:
        log.info("a signed MCP request named a Slack person in a form judgebot does not read")
        return None


class Gate:
    """ASGI middleware in front of the MCP SDK's app: lets in a request bearing `token`, or one Slack signed (with
    `slack`) that `once` has not seen taken before; records which in the request's state for the tools; answers 401
    to the rest."""

    def __init__(self, app: App, *, token: str | None, slack: SlackSignature | None, once: Once | None = None) -> None:
        self.app = app
        self._token = token.encode() if token else None
        self._slack = slack
        self._once = once

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # the server starting and stopping
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket: not MCP
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["method"] != "POST":  # each request stands alone: no stream to open (GET), no session to end
            await _answer(send, 405, {"error": "method not allowed", "error_description": "POST JSON-RPC requests"},
                          [(b"allow", b"POST")])
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        presented: Presented | None = None
        if self._token is not None and self._bears_token(headers.get("authorization", "")):
            presented = Presented("token")
        elif self._slack is not None and _fresh(headers) and _small(headers):
            try:
                async with asyncio.timeout(BODY_SECONDS):
                    body = await _body(receive)
            except TimeoutError:
                body = None
            stamp = headers["x-slack-request-timestamp"]
            if body is not None and self._slack.signed(body, stamp, headers.get("x-slack-signature", "")):
                message = parsed(body)
                if acts(message) and not await self._first(stamp, body, send):
                    return
                presented = Presented("slack", person_in(message))
                receive = _replay(body, receive)
        if presented is None:
            log.info("refused an MCP request that bore neither MCP_TOKEN nor Slack's signature")
            await _answer(send, 401, {"error": "unauthorized", "error_description": "present MCP_TOKEN as a bearer "
                                      "token, or call through Slackbot"},
                          [(b"www-authenticate", b'Bearer realm="judgebot"')])
            return
        scope.setdefault("state", {})[PRESENTED] = presented
        await self.app(scope, receive, send)

    async def _first(self, stamp: str, body: bytes, send: Send) -> bool:
        """Whether a signed request is taken for the first time; if not, it is answered here (401, or 503 when the
        database cannot say)."""
        if self._once is None:
            return True
        try:
            if await self._once.first(stamp, body):
                return True
        except Exception as err:  # unrecorded, it is not taken: taking it could run a tool twice
            log.warning("could not record a signed MCP request, so it was not taken: %s", type(err).__name__)
            await _answer(send, 503, {"error": "unavailable", "error_description": UNRECORDED},
                          [(b"retry-after", b"60")])
            return False
        log.info("refused a signed MCP request received before (a replay)")
        await _answer(send, 401, {"error": "unauthorized", "error_description": REPLAYED},
                      [(b"www-authenticate", b'Bearer realm="judgebot"')])
        return False

    def _bears_token(self, authorization: str) -> bool:
        scheme, _, value = authorization.partition(" ")
        return (self._token is not None and scheme.lower() == "bearer"
                and secrets.compare_digest(value.strip().encode(), self._token))


async def _body(receive: Receive) -> bytes | None:
    """The request's body (None when it is larger than MAX_BODY)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # the client went away
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, then: Receive) -> Receive:
    """A `receive` that hands the MCP SDK the body already read, then what the client sends next (its going away)."""
    sent = False

    async def receive() -> MutableMapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


async def _answer(send: Send, status: int, error: dict[str, str], headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps(error).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


def _fresh(headers: dict[str, str]) -> bool:
    """Whether the request says Slack signed it within SIGNED_WITHIN seconds (checked again with the signature):
    a stale or unsigned request is refused before its body is read."""
    if "x-slack-signature" not in headers:
        return False
    try:
        return abs(time.time() - int(headers.get("x-slack-request-timestamp", ""))) <= SIGNED_WITHIN
    except ValueError:
        return False


def _small(headers: dict[str, str]) -> bool:
    """Whether the body the request announces fits MAX_BODY (a body without a length is counted as it is read)."""
    try:
        return int(headers.get("content-length", "0")) <= MAX_BODY
    except ValueError:
        return False
