"""chat.startStream, chat.appendStream and chat.stopStream: a message streamed in chunks, checked as Slack checks them."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.messages.chunk import Chunk

from tests.support.slack_server.block_checks import block_problems
from tests.support.slack_server.core import BOT_USER_ID, SlackCore

TASK_TEXT = 256  # characters of a task's title, details or output
STATUSES = ("pending", "in_progress", "complete", "error")
STREAMING, STOPPED = "streaming", "stopped"


def chunk_problems(chunks: Any) -> list[str]:
    """What is wrong with a list of streaming chunks (nothing: an empty list)."""
    if chunks is None:
        return []
    if not isinstance(chunks, list):
        return ["chunks must be a list"]
    problems = []
    for index, raw in enumerate(chunks):
        try:
            parsed = Chunk.parse(raw) if isinstance(raw, dict) else None
            if parsed is None:
                problems.append(f"unknown chunk at {index}")
                continue
            parsed.to_dict()
        except (SlackObjectFormationError, TypeError) as error:
            problems.append(f"{error} at {index}")
            continue
        if raw["type"] == "task_update":
            if raw.get("status") not in STATUSES:
                problems.append(f"a task's status must be one of {STATUSES} at {index}")
            for key in ("title", "details", "output"):
                if len(str(raw.get(key) or "")) > TASK_TEXT:
                    problems.append(f"a task's {key} must be at most {TASK_TEXT} characters at {index}")
        if raw["type"] == "blocks":
            problems += block_problems(raw.get("blocks"))
    return problems


class StreamMethods(SlackCore):
    """Streamed messages: started in a thread for a recipient, appended to while streaming, then stopped."""

    def _start_stream(self, params: dict) -> dict:
        channel = params.get("channel") or ""
        if problems := chunk_problems(params.get("chunks")):
            return {"ok": False, "error": "invalid_chunks", "errors": problems}
        with self._lock:
            if error := self._channel_error(channel) or self.refuse_streams:
                return {"ok": False, "error": error}
            if not channel.startswith("D") and not (params.get("recipient_user_id") and params.get("recipient_team_id")):
                return {"ok": False, "error": "missing_recipient_user_id"}
            ts = self._next_ts()
            self.messages[(channel, ts)] = {
                "channel": channel, "ts": ts, "text": "", "blocks": None, "thread_ts": params.get("thread_ts"),
                "user": BOT_USER_ID, "edits": 0, "metadata": None, "stream": STREAMING, "chunks": [], "tasks": {},
                "plan": None, "recipient": params.get("recipient_user_id"),
                "display": params.get("task_display_mode") or "timeline"}
            self._add_chunks(self.messages[(channel, ts)], params)
        return {"ok": True, "channel": channel, "ts": ts}

    def _append_stream(self, params: dict) -> dict:
        return self._streaming(params, stop=False)

    def _stop_stream(self, params: dict) -> dict:
        return self._streaming(params, stop=True)

    def _streaming(self, params: dict, *, stop: bool) -> dict:
        channel, ts = params.get("channel") or "", params.get("ts") or ""
        if problems := chunk_problems(params.get("chunks")):
            return {"ok": False, "error": "invalid_chunks", "errors": problems}
        with self._lock:
            message = self.messages.get((channel, ts))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            if message.get("stream") != STREAMING:
                return {"ok": False, "error": "message_not_in_streaming_state"}
            if not stop and not (params.get("chunks") or params.get("markdown_text")):
                return {"ok": False, "error": "no_text"}
            self._add_chunks(message, params)
            if stop:
                message["stream"] = STOPPED
                if params.get("blocks") is not None:
                    message["blocks"] = params["blocks"]
        return {"ok": True, "channel": channel, "ts": ts}

    @staticmethod
    def _add_chunks(message: dict, params: dict) -> None:
        chunks = list(params.get("chunks") or [])
        if params.get("markdown_text"):
            chunks.insert(0, {"type": "markdown_text", "text": params["markdown_text"]})
        for chunk in chunks:
            message["chunks"].append(chunk)
            if chunk["type"] == "markdown_text":
                message["text"] += chunk["text"]
            elif chunk["type"] == "task_update":
                message["tasks"][chunk["id"]] = chunk
            elif chunk["type"] == "plan_update":
                message["plan"] = chunk["title"]
