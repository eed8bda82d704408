"""Files: shared by people and downloaded by the bot (files.info, /files-pri/), uploaded by the bot (files_upload_v2)."""

from __future__ import annotations

import time
import uuid
from typing import Any
from urllib.parse import quote

from aiohttp import BodyPartReader, web

from tests.support.slack_server.core import BOT_USER_ID, Call, SlackCore, _Hosted, _Upload

SERVE_MODES = ("file", "html", "redirect")
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


def _file_type(name: str) -> tuple[str, str, str]:
    extension = name.rpartition(".")[2].lower() if "." in name else ""
    return FILE_TYPES.get(extension, PLAIN_TEXT)


def _pretty_type(filetype: str) -> str:
    return next((pretty for kind, _, pretty in FILE_TYPES.values() if kind == filetype), filetype.upper())


class FileMethods(SlackCore):
    """Files people share (add_file, file_share_event), their downloads, and the bot's uploads."""

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
