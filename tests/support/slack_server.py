"""A local Slack-compatible Web API, response_url and Socket Mode server for offline tests of the real slack_sdk."""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from aiohttp import BodyPartReader, WSMsgType, web

from tests.support.threaded import ThreadedServer

JSON_FIELDS = ("blocks", "view", "attachments", "metadata", "files")
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
SERVE_MODES = ("file", "html", "redirect")
# What Slack refuses in a modal or Home tab (views.open, push, update, publish) with invalid_arguments: more than 100
# blocks, a section text over 3,000 characters, a view much above 250 kB.
VIEW_BLOCKS, VIEW_SECTION_TEXT, VIEW_BYTES = 100, 3000, 250_000
# extension: (filetype, mimetype, pretty_type), as Slack reports them
FILE_TYPES = {
    "csv": ("csv", "text/csv", "CSV"),
    "tsv": ("tsv", "text/tab-separated-values", "TSV"),
    "txt": ("text", "text/plain", "Plain Text"),
    "json": ("json", "application/json", "JSON"),
    "png": ("png", "image/png", "PNG"),
    "jpg": ("jpg", "image/jpeg", "JPEG"),
    "jpeg": ("jpg", "image/jpeg", "JPEG"),
    "pdf": ("pdf", "application/pdf", "PDF"),
    "xlsx": ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "Excel Spreadsheet"),
}
PLAIN_TEXT = ("text", "text/plain", "Plain Text")
SIGN_IN_PAGE = """<!DOCTYPE html>
<html lang="en-US"><head><meta charset="utf-8"><title>Slack</title></head>
<body><h1>Sign in to your workspace</h1><form action="/signin" method="post"><input name="email"></form></body>
</html>
"""


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


def _file_type(name: str) -> tuple[str, str, str]:
    extension = name.rpartition(".")[2].lower() if "." in name else ""
    return FILE_TYPES.get(extension, PLAIN_TEXT)


def _pretty_type(filetype: str) -> str:
    return next((pretty for kind, _, pretty in FILE_TYPES.values() if kind == filetype), filetype.upper())


def view_problems(view: dict) -> list[str]:
    """Slack's words for each limit a view breaks."""
    blocks = view.get("blocks") or []
    problems = [] if len(blocks) <= VIEW_BLOCKS else [
        f"[ERROR] no more than {VIEW_BLOCKS} items allowed [json-pointer:/view/blocks]"]
    for index, block in enumerate(blocks):
        text = (block.get("text") or {}).get("text", "") if block.get("type") == "section" else ""
        if len(text) > VIEW_SECTION_TEXT:
            problems.append(f"[ERROR] must be less than {VIEW_SECTION_TEXT + 1} characters "
                            f"[json-pointer:/view/blocks/{index}/text/text]")
    size = len(json.dumps(view, ensure_ascii=False).encode("utf-8"))
    if size > VIEW_BYTES:
        problems.append(f"[ERROR] view is too large ({size:,} bytes) [json-pointer:/view]")
    return problems


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true")


class FakeSlackServer(ThreadedServer):
    """Serves /api/{method}, /response/{key}, files (/files-pri/, /upload/) and Socket Mode (/link/) in a thread."""

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
            # an admin of another organisation, in a channel shared with it (Slack Connect)
            "U0GUEST": {**self._user("U0GUEST", "gus", "Gus Guest", is_admin=True), "team_id": "T0PARTNER"},
        }
        self.channels: dict[str, dict] = {
            "C0GENERAL": self._channel("C0GENERAL", "general", is_private=False, is_member=True),
            "C0OTHER": self._channel("C0OTHER", "other", is_private=False, is_member=True),
            "G0PRIVATE": self._channel("G0PRIVATE", "secret", is_private=True, is_member=True),
            "C0NOBOT": self._channel("C0NOBOT", "nobot", is_private=False, is_member=False),
        }
        self.messages: dict[tuple[str, str], dict] = {}
        self.files: dict[str, dict] = {}
        self.acks: dict[str, dict] = {}
        self.connected = threading.Event()
        self._failures: dict[str, collections.deque[_Failure]] = collections.defaultdict(collections.deque)
        self._delays: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
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

    # -- lifecycle ---------------------------------------------------------------------------------

    thread_name = "fake-slack"

    def routes(self, app: web.Application) -> None:
        """The Web API, response_urls, file downloads and uploads, and the Socket Mode websocket."""
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{key:.*}", self._response_url)
        app.router.add_get("/files-pri/{key}/download/{name:.+}", self._download)
        app.router.add_get("/files-pri/{key}/{name:.+}", self._download)
        app.router.add_post("/upload/{file_id}", self._upload)
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
        with self._lock:
            delays = self._delays.get(method)
            delay = delays.popleft() if delays else 0.0
        await asyncio.sleep(delay)  # done, but the answer is late: a client that gives up first never learns it
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
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "files.info": self._files_info,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
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
                       "thread_ts": params.get("thread_ts"), "user": BOT_USER_ID, "edits": 0,
                       "metadata": params.get("metadata")}
            self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": self._as_api_message(message)}

    @staticmethod
    def _as_api_message(message: dict, *, metadata: bool = True) -> dict:
        out = {"type": "message", "user": message["user"], "text": message["text"], "ts": message["ts"]}
        if message["user"] == BOT_USER_ID:
            out["bot_id"] = BOT_ID
        if message.get("blocks") is not None:
            out["blocks"] = message["blocks"]
        if message.get("thread_ts"):
            out["thread_ts"] = message["thread_ts"]
        if message.get("files"):
            out["files"] = [dict(f) for f in message["files"]]
        if metadata and message.get("metadata") is not None:
            out["metadata"] = message["metadata"]
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
            if "metadata" in params:
                message["metadata"] = params["metadata"]
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
        if problems := view_problems(view):
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
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

    def _conversations_replies(self, params: dict) -> dict:
        channel, ts = params.get("channel", ""), str(params.get("ts", ""))
        with self._lock:
            error = self._channel_error(channel)
            if error:
                return {"ok": False, "error": error}
            parent = self.messages.get((channel, ts)) if ts else None
            replies = self.thread(channel, ts) if ts else []
            if parent is None and not replies:
                return {"ok": False, "error": "thread_not_found"}
            metadata = _truthy(params.get("include_all_metadata"))
            messages = [self._as_api_message(m, metadata=metadata) for m in replies]
            if parent is not None:
                messages.insert(0, self._as_parent(parent, replies, metadata=metadata))
        return self._page(messages, params)

    def _conversations_history(self, params: dict) -> dict:
        channel = params.get("channel", "")
        try:
            oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or "inf")
        except ValueError:
            return {"ok": False, "error": "invalid_arguments"}
        with self._lock:
            error = self._channel_error(channel)
            if error:
                return {"ok": False, "error": error}
            metadata = _truthy(params.get("include_all_metadata"))
            parents = sorted((m for (ch, ts), m in self.messages.items() if ch == channel
                              and m.get("thread_ts") in (None, ts) and oldest < float(ts) < latest),
                             key=lambda m: float(m["ts"]), reverse=True)
            messages = [self._as_parent(m, self.thread(channel, m["ts"]), metadata=metadata) for m in parents]
        return self._page(messages, params)

    def _as_parent(self, parent: dict, replies: list[dict], *, metadata: bool) -> dict:
        out = self._as_api_message(parent, metadata=metadata)
        if replies:
            users = list(dict.fromkeys(m["user"] for m in replies))
            out |= {"thread_ts": parent["ts"], "reply_count": len(replies), "reply_users": users,
                    "reply_users_count": len(users), "latest_reply": replies[-1]["ts"]}
        return out

    @staticmethod
    def _page(messages: list[dict], params: dict) -> dict:
        cursor = str(params.get("cursor") or "")
        try:
            start = int(base64.b64decode(cursor).decode().removeprefix("offset:")) if cursor else 0
            limit = max(1, int(params.get("limit") or 1000))
        except ValueError:
            return {"ok": False, "error": "invalid_cursor"}
        end = start + limit
        more = end < len(messages)
        cursor = base64.b64encode(f"offset:{end}".encode()).decode() if more else ""
        return {"ok": True, "messages": messages[start:end], "has_more": more,
                "response_metadata": {"next_cursor": cursor}}

    def _connections_open(self, params: dict) -> dict:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket={uuid.uuid4()}"}

    # -- files: shared by people, downloaded by the bot --------------------------------------------

    def _next_file_id(self) -> str:
        with self._lock:
            self._file_counter += 1
            return f"F{self._file_counter:08d}"

    def _file_object(self, file_id: str, name: str, *, title: str, filetype: str, mimetype: str, user: str,
                     size: int) -> dict:
        quoted = quote(name)
        now = int(time.time())
        return {
            "id": file_id, "created": now, "timestamp": now, "name": name, "title": title, "mimetype": mimetype,
            "filetype": filetype, "pretty_type": _pretty_type(filetype), "user": user, "user_team": self.team_id,
            "editable": False, "size": size, "mode": "hosted", "is_external": False, "external_type": "",
            "is_public": True, "public_url_shared": False, "display_as_bot": False, "username": "",
            "url_private": f"{self.base_url}/files-pri/{self.team_id}-{file_id}/{quoted}",
            "url_private_download": f"{self.base_url}/files-pri/{self.team_id}-{file_id}/download/{quoted}",
            "permalink": f"{self.team_url}files/{user}/{file_id}/{quoted}",
            "has_rich_preview": False, "file_access": "visible",
        }

    def add_file(self, content: bytes, name: str, *, filetype: str | None = None, mimetype: str | None = None,
                 user: str = "U0USER", serve: str = "file", redirect_to: str | None = None,
                 size: int | None = None) -> dict:
        """Host a file and return its Slack file object; serve is "file", "html" (no files:read) or "redirect"."""
        if serve not in SERVE_MODES:
            raise ValueError(f"serve must be one of {SERVE_MODES}, not {serve!r}")
        if serve == "redirect" and not redirect_to:
            raise ValueError('serve="redirect" needs redirect_to')
        default_type, default_mime, _ = _file_type(name)
        file_id = self._next_file_id()
        obj = self._file_object(file_id, name, title=name, filetype=filetype or default_type,
                                mimetype=mimetype or default_mime, user=user,
                                size=len(content) if size is None else size)
        with self._lock:
            self.files[file_id] = obj
            self._hosted[file_id] = _Hosted(bytes(content), serve, redirect_to)
        return dict(obj)

    def _files_info(self, params: dict) -> dict:
        with self._lock:
            obj = self.files.get(str(params.get("file", "")))
        return {"ok": True, "file": dict(obj)} if obj else {"ok": False, "error": "file_not_found"}

    async def _download(self, request: web.Request) -> web.Response:
        team, _, file_id = request.match_info["key"].rpartition("-")
        call = Call(method="file_download", params={"file": file_id}, headers=dict(request.headers),
                    at=time.monotonic(), path=request.path)
        with self._lock:
            self.calls.append(call)
            hosted = self._hosted.get(file_id) if team == self.team_id else None
            mimetype = self.files[file_id]["mimetype"] if hosted else ""
        if hosted is None:
            return web.Response(status=404, text="<html><body>Not Found</body></html>", content_type="text/html",
                                charset="utf-8")
        if hosted.serve == "redirect":
            return web.Response(status=302, headers={"Location": hosted.redirect_to or ""})
        if hosted.serve == "file" and self._token(request, {}) == self.bot_token:
            return web.Response(body=hosted.content, headers={"Content-Type": mimetype})
        return web.Response(text=SIGN_IN_PAGE, content_type="text/html", charset="utf-8")

    def file_share_event(self, file: dict | list[dict], *, channel: str = "C0GENERAL", text: str = "",
                         user: str = "U0USER", thread_ts: str | None = None) -> dict:
        """Store a person's message sharing file(s) and return the message event (subtype file_share) Slack sends."""
        files = [dict(f) for f in (file if isinstance(file, list) else [file])]
        ts = self._next_ts()
        blocks = [{"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [
            {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}] if text else None
        with self._lock:
            parent = self.messages.get((channel, thread_ts)) if thread_ts else None
            self.messages[(channel, ts)] = {"channel": channel, "ts": ts, "text": text, "blocks": blocks,
                                            "thread_ts": thread_ts, "user": user, "edits": 0, "files": files}
        event: dict[str, Any] = {
            "type": "message", "subtype": "file_share", "text": text, "files": [dict(f) for f in files],
            "upload": True, "user": user, "display_as_bot": False, "ts": ts, "client_msg_id": str(uuid.uuid4()),
            "channel": channel, "event_ts": ts, "channel_type": self._channel_type(channel),
        }
        if blocks:
            event["blocks"] = blocks
        if thread_ts:
            event |= {"thread_ts": thread_ts, "parent_user_id": parent["user"] if parent else user}
        return event

    def file_shared_event(self, file: dict, *, channel: str = "C0GENERAL", user: str = "U0USER") -> dict:
        """The file_shared event Slack sends alongside a file_share message."""
        return {"type": "file_shared", "file_id": file["id"], "user_id": user, "file": {"id": file["id"]},
                "channel_id": channel, "event_ts": self._next_ts()}

    @staticmethod
    def _channel_type(channel: str) -> str:
        return {"G": "group", "D": "im"}.get(channel[:1], "channel")

    # -- files: uploaded by the bot (files_upload_v2) ----------------------------------------------

    def uploads(self, channel: str, thread_ts: str | None = None) -> list[dict]:
        """The files completed into a channel (only that thread's, given thread_ts), in order, with their bytes."""
        with self._lock:
            return [dict(u) for u in self._uploads
                    if u["channel"] == channel and (thread_ts is None or u["thread_ts"] == thread_ts)]

    def _get_upload_url(self, params: dict) -> dict:
        filename, length = params.get("filename"), str(params.get("length", ""))
        if not filename or not length.isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        file_id = self._next_file_id()
        with self._lock:
            self._pending[file_id] = _Upload(str(filename), int(length))
        return {"ok": True, "upload_url": f"{self.base_url}/upload/{file_id}", "file_id": file_id}

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        if request.content_type == "multipart/form-data":
            data = await self._multipart_file(request)
        else:
            data = await request.read()
        call = Call(method="file_upload", params={"file": file_id, "length": len(data)},
                    headers=dict(request.headers), at=time.monotonic(), path=request.path)
        with self._lock:
            self.calls.append(call)
            pending = self._pending.get(file_id)
            if pending is not None:
                pending.content = data
        if pending is None:
            return web.Response(status=404, text="Not Found", content_type="text/plain")
        return web.Response(text=f"OK - {len(data)}", content_type="text/plain")

    @staticmethod
    async def _multipart_file(request: web.Request) -> bytes:
        first: bytes | None = None
        async for part in await request.multipart():
            if not isinstance(part, BodyPartReader):
                continue
            body = bytes(await part.read())
            if part.filename:
                return body
            first = body if first is None else first
        return first or b""

    def _complete_upload(self, params: dict) -> dict:
        entries = params.get("files")
        if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) and e.get("id")
                                                                   for e in entries):
            return {"ok": False, "error": "invalid_arguments"}
        channel = params.get("channel_id") or str(params.get("channels") or "").split(",")[0] or None
        thread_ts = params.get("thread_ts") or None
        with self._lock:
            uploaded = {str(e["id"]): self._pending.get(str(e["id"])) for e in entries}
            if len(uploaded) != len(entries):
                return {"ok": False, "error": "invalid_arguments"}
            if any(u is None or u.content is None for u in uploaded.values()):
                return {"ok": False, "error": "file_not_found"}
            error = self._channel_error(channel) if channel else None
            if error:
                return {"ok": False, "error": error}
            done = [self._finish_upload(str(e["id"]), e.get("title")) for e in entries]
            if channel:
                self._post_upload_message(channel, thread_ts, done, str(params.get("initial_comment") or ""))
        return {"ok": True, "files": [{"id": f["id"], "title": f["title"], "name": f["name"]} for f in done]}

    def _finish_upload(self, file_id: str, title: str | None) -> dict:
        with self._lock:
            upload = self._pending.pop(file_id)
        content, title = upload.content or b"", title or upload.filename
        filetype, mimetype, _ = _file_type(upload.filename)
        obj = self._file_object(file_id, upload.filename, title=title, filetype=filetype, mimetype=mimetype,
                                user=BOT_USER_ID, size=len(content))
        with self._lock:
            self.files[file_id] = obj
            self._hosted[file_id] = _Hosted(content, "file", None)
        return {"id": file_id, "name": upload.filename, "title": title, "content": content}

    def _post_upload_message(self, channel: str, thread_ts: str | None, done: list[dict], text: str) -> None:
        ts = self._next_ts()
        with self._lock:
            self.messages[(channel, ts)] = {
                "channel": channel, "ts": ts, "text": text, "blocks": None, "thread_ts": thread_ts,
                "user": BOT_USER_ID, "edits": 0, "metadata": None,
                "files": [{"id": f["id"], "name": f["name"], "title": f["title"]} for f in done]}
            self._uploads.extend({**f, "channel": channel, "thread_ts": thread_ts, "message_ts": ts} for f in done)

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
