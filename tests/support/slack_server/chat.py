"""chat.*: messages posted, updated and linked to, and ephemeral messages."""

from __future__ import annotations

from tests.support.slack_server.core import BOT_ID, BOT_USER_ID, SlackCore


class ChatMethods(SlackCore):
    """chat.postMessage, chat.update, chat.postEphemeral and chat.getPermalink."""

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
