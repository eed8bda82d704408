"""The local Slack server's core: its workspace state, the calls it records, and the Web API's dispatch and auth."""

from __future__ import annotations

import asyncio
import collections
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.slack_server.block_checks import block_problems
from tests.support.threaded import ThreadedServer

JSON_FIELDS = ("blocks", "view", "attachments", "metadata", "files")
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
LIMITED_READS = ("conversations.history", "conversations.replies")  # in `distributed` mode: a call a minute...
LIMITED_MESSAGES = 15  # ...of at most this many messages
BLOCK_METHODS = ("chat.postMessage", "chat.update", "chat.postEphemeral", "chat.scheduleMessage", "chat.stopStream")


@dataclass
class Call:
    """One request the server received: a Web API method call or a post to a response_url."""

    method: str
    params: dict
    headers: dict
    at: float
    path: str = ""
    token: str = ""  # the token the call carried (a bot token tells the workspace it acted for)


@dataclass
class _Failure:
    error: str
    status: int
    headers: dict[str, str]


@dataclass
class _Hosted:
    content: bytes
    serve: str
    redirect_to: str | None


@dataclass
class _Upload:
    filename: str
    length: int
    content: bytes | None = None


class SlackCore(ThreadedServer):
    """The state of one workspace and what every kind of call shares; FakeSlackServer adds the methods and routes."""

    thread_name = "fake-slack"

    def __init__(self, *, bot_token: str = "xoxb-test-token", app_token: str = "xapp-1-test-token",
                 team_id: str = "T0TEST", team_domain: str = "judgebot-test") -> None:
        super().__init__()
        self.bot_token = bot_token
        self.app_token = app_token
        self.team_id = team_id
        self.team_domain = team_domain
        # Many workspaces (the OAuth install): the app's credentials, the codes Slack gave installers, and every bot
        # token issued for a code, with its workspace (revoked tokens are removed)
        self.client_id, self.client_secret = "1111.2222", "test-client-secret"
        self.codes: dict[str, str] = {}
        self.team_tokens: dict[str, str] = {}
        self.orgs: set[str] = set()  # Enterprise Grid organisations that installed the app org-wide
        # Sign in with Slack: who the authorize page signs in next (None: the person says no), the codes it gave,
        # the tokens openid.connect.token issued (with their claims), and claims an ID token carries instead
        self.signing_in: tuple[str, str] | None = None
        self.oidc_codes: dict[str, dict] = {}
        self.person_tokens: dict[str, dict] = {}
        self.id_token_changes: dict[str, Any] | None = None
        self.caller_team = team_id  # the workspace of the call being answered
        self.calls: list[Call] = []
        self.users: dict[str, dict] = {
            "U0ADMIN": self._user("U0ADMIN", "ada", "Ada Admin", is_admin=True, tz="Europe/Zurich"),
            "U0USER": self._user("U0USER", "bob", "Bob User", is_admin=False),
            # an admin of another organisation, in a channel shared with it (Slack Connect)
            "U0GUEST": {**self._user("U0GUEST", "gus", "Gus Guest", is_admin=True), "team_id": "T0PARTNER"},
        }
        self.channels: dict[str, dict] = {
            "C0GENERAL": self._channel("C0GENERAL", "general", is_private=False, is_member=True),
            "C0OTHER": self._channel("C0OTHER", "other", is_private=False, is_member=True),
            "G0PRIVATE": self._channel("G0PRIVATE", "secret", is_private=True, is_member=True),
            "C0NOBOT": self._channel("C0NOBOT", "nobot", is_private=False, is_member=False),
        }
        # who is in which channel (users.conversations); a direct conversation with the app is its person's
        self.members: dict[str, set[str]] = {"C0GENERAL": {"U0ADMIN", "U0USER"}, "C0OTHER": {"U0ADMIN"},
                                             "G0PRIVATE": {"U0ADMIN", "U0USER"}, "C0NOBOT": {"U0USER"}}
        self.usergroups: dict[str, dict] = {"S0EVALS": {"handle": "evals", "users": ["U0USER", "U0ADMIN"]}}
        self.messages: dict[tuple[str, str], dict] = {}
        self.files: dict[str, dict] = {}
        self.acks: dict[str, dict] = {}
        self.connected = threading.Event()
        self._failures: dict[str, collections.deque[_Failure]] = collections.defaultdict(collections.deque)
        self._delays: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        # As Slack treats an app distributed outside its Marketplace (since 2025-05-29 for new installs): these
        # methods answer one call a minute (then 429 "ratelimited") and at most 15 messages a call.
        self.distributed = False
        self.read_refused: list[Call] = []  # the calls to those methods answered 429
        self._last_read: dict[str, float] = {}
        self.ended_executions: set[str] = set()  # workflow steps completed or failed (functions.complete*)
        self.refuse_streams: str | None = None  # Slack's error for every chat.startStream (a workspace without streams)
        self._lock = threading.RLock()
        self._acked = threading.Condition(self._lock)
        self._last_micros = 0
        self._view_counter = 0
        self._file_counter = 0
        self._hosted: dict[str, _Hosted] = {}
        self._pending: dict[str, _Upload] = {}
        self._uploads: list[dict] = []
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

    def answer_late(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Make the next `times` calls to method do their work at once but answer only `seconds` later."""
        with self._lock:
            self._delays[method].extend([seconds] * times)

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
            # Slack's ts is the time of posting (unique in a channel): the clock, kept increasing.
            self._last_micros = micros = max(self._last_micros + 100, int(time.time() * 1_000_000))
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
            if self.distributed and method in LIMITED_READS and failure is None:
                last = self._last_read.get(method)
                if last is not None and call.at - last < 60:
                    self.read_refused.append(call)
                    return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                             headers={"Retry-After": str(int(60 - (call.at - last)) + 1)})
                self._last_read[method] = call.at
                params["limit"] = min(int(params.get("limit") or LIMITED_MESSAGES), LIMITED_MESSAGES)
        if failure is not None:
            if failure.status >= 500:
                return web.Response(text="server error", status=failure.status, headers=failure.headers)
            return web.json_response({"ok": False, "error": failure.error}, status=failure.status,
                                     headers=failure.headers)
        if method == "oauth.v2.access":  # the app's credentials, not a token
            return web.json_response(self._oauth_access(request, params))
        if method == "openid.connect.token":  # Sign in with Slack: the app's credentials too
            return web.json_response(self._openid_token(request, params))
        if method == "openid.connect.userInfo":  # with the token Sign in with Slack gave a person
            return web.json_response(self._openid_user_info(self._token(request, params)))
        token = call.token = self._token(request, params)
        if not token:
            return self._error("not_authed")
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        function_token = method.startswith("functions.") and token.startswith("xwfp-")  # an execution's own token
        with self._lock:
            team = self.team_tokens.get(token)
        if token != expected and not function_token and team is None:
            return self._error("invalid_auth")
        self.caller_team = team or self.team_id  # read by the handler below, which runs before any other call
        if problems := self._block_problems(method, params):
            return web.json_response({"ok": False, "error": "invalid_blocks", "errors": problems,
                                      "response_metadata": {"messages": problems}})
        handler = self._handlers().get(method)
        body = handler(params) if handler else {"ok": True}
        with self._lock:
            delays = self._delays.get(method)
            delay = delays.popleft() if delays else 0.0
        await asyncio.sleep(delay)  # done, but the answer is late: a client that gives up first never learns it
        return web.json_response(body)

    @staticmethod
    def _block_problems(method: str, params: dict) -> list[str]:
        """What Slack would refuse in the blocks a message or a view carries (a view's own limits are in views.py)."""
        if method.startswith("views.") and isinstance(params.get("view"), dict) and "blocks" in params["view"]:
            return block_problems(params["view"]["blocks"], message=False)
        if method in BLOCK_METHODS and params.get("blocks") is not None:
            return block_problems(params["blocks"])
        return []

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
        """The Web API methods served, by name (FakeSlackServer names every one)."""
        return {}

    def _oauth_access(self, request: web.Request, params: dict) -> dict:
        """oauth.v2.access (tests.support.slack_server.oauth answers it)."""
        raise NotImplementedError

    def _openid_token(self, request: web.Request, params: dict) -> dict:
        """openid.connect.token (tests.support.slack_server.openid answers it)."""
        raise NotImplementedError

    def _openid_user_info(self, token: str) -> dict:
        """openid.connect.userInfo (tests.support.slack_server.openid answers it)."""
        raise NotImplementedError

    def _channel_error(self, channel: str | None) -> str | None:
        info = self.channels.get(channel or "")
        if info is None:
            return "channel_not_found"
        if not info.get("is_member"):
            return "not_in_channel"
        return None

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
        if isinstance(params, dict) and params.get("blocks") is not None and block_problems(params["blocks"]):
            return web.Response(text="invalid_blocks", status=400, content_type="text/plain")
        return web.Response(text="ok", content_type="text/plain")
