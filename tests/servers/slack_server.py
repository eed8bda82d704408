"""A local Slack-compatible Web API, response_url and Socket Mode server for offline tests of the real slack_sdk."""

from __future__ import annotations

import asyncio
import collections
import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from aiohttp import WSMsgType, web

from tests.servers.threaded import ThreadedServer

JSON_FIELDS = ("blocks", "view", "attachments", "metadata")
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
TS_BASE = 1_700_000_000_000_000  # microseconds


@dataclass
class Call:
    """One request the server received: a Web API method call or a post to a response_url."""

    method: str
    params: dict
    headers: dict
    at: float
    path: str = ""


@dataclass
class _Failure:
    error: str
    status: int
    headers: dict[str, str]


class FakeSlackServer(ThreadedServer):
    """Serves /api/{method}, /response/{key} and the Socket Mode websocket /link/ on 127.0.0.1 in its own thread."""

    def __init__(self, *, bot_token: str = "xoxb-test-token", app_token: str = "xapp-1-test-token",
                 team_id: str = "T0TEST", team_domain: str = "judgebot-test") -> None:
        super().__init__()
        self.bot_token = bot_token
        self.app_token = app_token
        self.team_id = team_id
        self.team_domain = team_domain
        self.calls: list[Call] = []
        self.users: dict[str, dict] = {
            "U0ADMIN": self._user("U0ADMIN", "ada", "Ada Admin", is_admin=True, tz="Europe/Zurich"),
            "U0USER": self._user("U0USER", "bob", "Bob User", is_admin=False),
        }
        self.channels: dict[str, dict] = {
            "C0GENERAL": self._channel("C0GENERAL", "general", is_private=False, is_member=True),
            "C0OTHER": self._channel("C0OTHER", "other", is_private=False, is_member=True),
            "G0PRIVATE": self._channel("G0PRIVATE", "secret", is_private=True, is_member=True),
            "C0NOBOT": self._channel("C0NOBOT", "nobot", is_private=False, is_member=False),
        }
        self.messages: dict[tuple[str, str], dict] = {}
        self.acks: dict[str, dict] = {}
        self.connected = threading.Event()
        self._failures: dict[str, collections.deque[_Failure]] = collections.defaultdict(collections.deque)
        self._lock = threading.RLock()
        self._acked = threading.Condition(self._lock)
        self._ts_counter = 0
        self._view_counter = 0
        self._sockets: list[web.WebSocketResponse] = []

    # -- addresses ---------------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        """The Web API base URL for AsyncWebClient(base_url=...)."""
        return f"http://127.0.0.1:{self.port}/api/"

    @property
    def base_url(self) -> str:
        """The server root URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def team_url(self) -> str:
        """The workspace URL that auth.test reports."""
        return f"https://{self.team_domain}.slack.com/"

    def response_url(self, key: str = "r1") -> str:
        """A response_url whose posts are recorded as method "response_url"."""
        return f"{self.base_url}/response/{key}"

    # -- lifecycle ---------------------------------------------------------------------------------

    thread_name = "fake-slack"

    def routes(self, app: web.Application) -> None:
        """The Web API, response_urls and the Socket Mode websocket."""
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{key:.*}", self._response_url)
        app.router.add_get("/link/", self._link)
        app.router.add_get("/link", self._link)

    async def before_stop(self) -> None:
        """Close the websockets."""
        await self._close_sockets()

    # -- recorded calls ----------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        """The calls received so far to one method."""
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def _matching(self, method: str, predicate: Callable[[Call], bool] | None) -> list[Call]:
        return [c for c in self.calls_to(method) if predicate is None or predicate(c)]

    def _timeout_error(self, method: str, count: int, timeout: float, found: int) -> AssertionError:
        with self._lock:
            seen = [(c.method, c.params) for c in self.calls]
        return AssertionError(
            f"timed out after {timeout}s waiting for {count} call(s) to {method!r} (matching: {found}); "
            f"calls seen: {seen}"
        )

    def wait_for(self, method: str, predicate: Callable[[Call], bool] | None = None, *, count: int = 1,
                 timeout: float = 10.0) -> list[Call]:
        """Block until `count` calls to method match predicate and return the matching calls."""
        deadline = time.monotonic() + timeout
        while True:
            found = self._matching(method, predicate)
            if len(found) >= count:
                return found
            if time.monotonic() >= deadline:
                raise self._timeout_error(method, count, timeout, len(found))
            time.sleep(0.01)

    async def await_for(self, method: str, predicate: Callable[[Call], bool] | None = None, *, count: int = 1,
                        timeout: float = 10.0) -> list[Call]:
        """Like wait_for, without blocking the caller's event loop."""
        return await asyncio.to_thread(self.wait_for, method, predicate, count=count, timeout=timeout)

    def fail(self, method: str, error: str, *, status: int = 200, headers: dict[str, str] | None = None,
             times: int = 1) -> None:
        """Make the next `times` calls to method answer {"ok": false, "error": error} with that status and headers."""
        with self._lock:
            for _ in range(times):
                self._failures[method].append(_Failure(error, status, dict(headers or {})))

    # -- workspace state ---------------------------------------------------------------------------

    def _user(self, user_id: str, name: str, real_name: str, *, is_admin: bool, tz: str = "Europe/London") -> dict:
        return {
            "id": user_id, "team_id": self.team_id, "name": name, "real_name": real_name, "tz": tz,
            "is_admin": is_admin, "is_owner": False, "is_bot": False, "deleted": False,
            "profile": {"display_name": name, "real_name": real_name},
        }

    @staticmethod
    def _channel(channel_id: str, name: str, *, is_private: bool, is_member: bool) -> dict:
        return {
            "id": channel_id, "name": name, "is_channel": not is_private, "is_group": is_private,
            "is_im": False, "is_private": is_private, "is_member": is_member, "is_archived": False,
        }

    def thread(self, channel: str, thread_ts: str) -> list[dict]:
        """The replies in a thread (not the parent), oldest first."""
        with self._lock:
            replies = [m for (ch, ts), m in self.messages.items()
                       if ch == channel and m.get("thread_ts") == thread_ts and ts != thread_ts]
        return sorted(replies, key=lambda m: float(m["ts"]))

    def _next_ts(self) -> str:
        with self._lock:
            self._ts_counter += 1
            micros = TS_BASE + self._ts_counter * 100
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _next_view_id(self) -> int:
        with self._lock:
            self._view_counter += 1
            return self._view_counter

    # -- Web API -----------------------------------------------------------------------------------

    @staticmethod
    async def _read_params(request: web.Request) -> dict:
        params: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                body = await request.json()
                if isinstance(body, dict):
                    params.update(body)
            elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                for key, value in form.items():
                    params[key] = value if isinstance(value, str) else getattr(value, "filename", str(value))
        for key in JSON_FIELDS:
            value = params.get(key)
            if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
                try:
                    params[key] = json.loads(value)
                except ValueError:
                    pass
        return params

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._read_params(request)
        call = Call(method=method, params=params, headers=dict(request.headers), at=time.monotonic(), path=request.path)
        with self._lock:
            self.calls.append(call)
            failures = self._failures.get(method)
            failure = failures.popleft() if failures else None
        if failure is not None:
            if failure.status >= 500:
                return web.Response(text="server error", status=failure.status, headers=failure.headers)
            return web.json_response({"ok": False, "error": failure.error}, status=failure.status,
                                     headers=failure.headers)
        token = self._token(request, params)
        if not token:
            return self._error("not_authed")
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != expected:
            return self._error("invalid_auth")
        handler = self._handlers().get(method)
        body = handler(params) if handler else {"ok": True}
        return web.json_response(body)

    @staticmethod
    def _token(request: web.Request, params: dict) -> str:
        auth = request.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return str(params.get("token") or "")

    @staticmethod
    def _error(error: str) -> web.Response:
        return web.json_response({"ok": False, "error": error})

    def _handlers(self) -> dict[str, Callable[[dict], dict]]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._permalink,
            "views.open": self._view_open,
            "views.push": self._view,
            "views.update": self._view,
            "views.publish": self._view_publish,
            "users.info": self._users_info,
            "conversations.info": self._conversations_info,
            "conversations.join": self._conversations_join,
            "apps.connections.open": self._connections_open,
        }

    def _auth_test(self, params: dict) -> dict:
        return {"ok": True, "url": self.team_url, "team": "Judgebot Test", "user": "judgebot", "team_id": self.team_id,
                "user_id": BOT_USER_ID, "bot_id": BOT_ID, "is_enterprise_install": False}

    def _channel_error(self, channel: str | None) -> str | None:
        info = self.channels.get(channel or "")
        if info is None:
            return "channel_not_found"
        if not info.get("is_member"):
            return "not_in_channel"
        return None

    def _post_message(self, params: dict) -> dict:
        channel = params.get("channel")
        if not channel or not (params.get("text") or params.get("blocks")):
            return {"ok": False, "error": "no_text"}
        with self._lock:
            error = self._channel_error(channel)
            if error:
                return {"ok": False, "error": error}
            ts = self._next_ts()
            message = {"channel": channel, "ts": ts, "text": params.get("text", ""), "blocks": params.get("blocks"),
                       "thread_ts": params.get("thread_ts"), "user": BOT_USER_ID, "edits": 0}
            self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": self._as_api_message(message)}

    @staticmethod
    def _as_api_message(message: dict) -> dict:
        out = {"type": "message", "user": message["user"], "bot_id": BOT_ID, "text": message["text"],
               "ts": message["ts"]}
        if message.get("blocks") is not None:
            out["blocks"] = message["blocks"]
        if message.get("thread_ts"):
            out["thread_ts"] = message["thread_ts"]
        return out

    def _update(self, params: dict) -> dict:
        channel, ts = params.get("channel", ""), params.get("ts", "")
        with self._lock:
            message = self.messages.get((channel, ts))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            if "text" in params:
                message["text"] = params["text"]
            if "blocks" in params:
                message["blocks"] = params["blocks"]
            message["edits"] += 1
            text = message["text"]
        return {"ok": True, "channel": channel, "ts": ts, "text": text}

    def _post_ephemeral(self, params: dict) -> dict:
        if not params.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not params.get("user"):
            return {"ok": False, "error": "user_not_found"}
        if not (params.get("text") or params.get("blocks") or params.get("attachments")):
            return {"ok": False, "error": "no_text"}
        return {"ok": True, "message_ts": self._next_ts()}

    def _permalink(self, params: dict) -> dict:
        channel, ts = params.get("channel", ""), str(params.get("message_ts", ""))
        permalink = f"{self.team_url}archives/{channel}/p{ts.replace('.', '')}"
        return {"ok": True, "channel": channel, "permalink": permalink}

    def _view(self, params: dict) -> dict:
        view = params.get("view")
        if not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        n = self._next_view_id()
        return {"ok": True, "view": {**view, "id": f"V{n}", "hash": f"h{n}"}}

    def _view_open(self, params: dict) -> dict:
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        return self._view(params)

    def _view_publish(self, params: dict) -> dict:
        if not params.get("user_id"):
            return {"ok": False, "error": "invalid_arguments"}
        return self._view(params)

    def _users_info(self, params: dict) -> dict:
        with self._lock:
            user = self.users.get(params.get("user", ""))
        return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}

    def _conversations_info(self, params: dict) -> dict:
        with self._lock:
            channel = self.channels.get(params.get("channel", ""))
        return {"ok": True, "channel": channel} if channel else {"ok": False, "error": "channel_not_found"}

    def _conversations_join(self, params: dict) -> dict:
        with self._lock:
            channel = self.channels.get(params.get("channel", ""))
            if channel is None:
                return {"ok": False, "error": "channel_not_found"}
            channel["is_member"] = True
        return {"ok": True, "channel": channel}

    def _connections_open(self, params: dict) -> dict:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket={uuid.uuid4()}"}

    # -- response_url ------------------------------------------------------------------------------

    async def _response_url(self, request: web.Request) -> web.Response:
        try:
            params = await request.json()
        except ValueError:
            params = dict(await request.post())
        call = Call(method="response_url", params=params if isinstance(params, dict) else {"body": params},
                    headers=dict(request.headers), at=time.monotonic(), path=request.path)
        with self._lock:
            self.calls.append(call)
        return web.Response(text="ok", content_type="text/plain")

    # -- Socket Mode -------------------------------------------------------------------------------

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)  # answers pings with pongs that echo their payload
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0TEST"},
                            "debug_info": {"host": "local"}})
        self._sockets.append(ws)
        self.connected.set()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(msg.data)
                except ValueError:
                    continue
                if isinstance(data, dict) and data.get("envelope_id"):
                    with self._acked:
                        self.acks[data["envelope_id"]] = data
                        self._acked.notify_all()
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)
            if not self._sockets:
                self.connected.clear()
        return ws

    async def _send_to_socket(self, message: dict) -> None:
        open_sockets = [ws for ws in self._sockets if not ws.closed]
        if not open_sockets:
            raise AssertionError("no Socket Mode client is connected")
        await open_sockets[-1].send_json(message)

    async def _close_sockets(self) -> None:
        self.connected.clear()
        for ws in list(self._sockets):
            await ws.close()

    def send_envelope(self, type: str, payload: dict, *, retry_attempt: int = 0, retry_reason: str = "",
                      accepts_response_payload: bool | None = None) -> str:
        """Send an envelope to the connected Socket Mode client and return its envelope_id."""
        if not self.connected.wait(5):
            raise AssertionError("no Socket Mode client connected within 5s")
        envelope_id = str(uuid.uuid4())
        message: dict[str, Any] = {"envelope_id": envelope_id, "type": type, "payload": payload}
        if accepts_response_payload is None and type in ("slash_commands", "interactive"):
            accepts_response_payload = True
        if accepts_response_payload is not None:
            message["accepts_response_payload"] = accepts_response_payload
        message["retry_attempt"] = retry_attempt
        message["retry_reason"] = retry_reason
        asyncio.run_coroutine_threadsafe(self._send_to_socket(message), self._loop).result(5)  # type: ignore[arg-type]
        return envelope_id

    async def async_send_envelope(self, type: str, payload: dict, *, retry_attempt: int = 0, retry_reason: str = "",
                                  accepts_response_payload: bool | None = None) -> str:
        """Like send_envelope, without blocking the caller's event loop."""
        return await asyncio.to_thread(self.send_envelope, type, payload, retry_attempt=retry_attempt,
                                       retry_reason=retry_reason, accepts_response_payload=accepts_response_payload)

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict:
        """Block until the client acks the envelope and return its ack message."""
        with self._acked:
            if not self._acked.wait_for(lambda: envelope_id in self.acks, timeout):
                raise AssertionError(f"no ack for envelope {envelope_id} within {timeout}s; acks: {list(self.acks)}")
            return self.acks[envelope_id]

    async def async_wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict:
        """Like wait_ack, without blocking the caller's event loop."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                ack = self.acks.get(envelope_id)
                if ack is not None:
                    return ack
                if time.monotonic() >= deadline:
                    acks = list(self.acks)
                    raise AssertionError(f"no ack for envelope {envelope_id} within {timeout}s; acks: {acks}")
            await asyncio.sleep(0.01)

    def disconnect_sockets(self) -> None:
        """Close every open websocket; the client should reconnect."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._close_sockets(), self._loop).result(10)
