"""assistant.threads.*: the app's Messages tab as an AI app (status, suggested prompts, titles), and the events of it."""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.slack_server.core import BOT_ID, BOT_USER_ID, SlackCore

MAX_PROMPTS = 4  # Slack's bound on suggested prompts
MAX_LOADING_MESSAGES = 10


class AssistantMethods(SlackCore):
    """assistant.threads.setStatus, setSuggestedPrompts and setTitle, refused as Slack refuses them (a channel that is
    not a direct conversation with the app, no thread, a bad prompt); direct conversations and their events."""

    def _assistant_thread_error(self, params: dict) -> str | None:
        channel = self.channels.get(str(params.get("channel_id") or ""))
        if channel is None or not channel.get("is_im"):
            return "channel_not_found"
        if not params.get("thread_ts"):
            return "invalid_thread_ts"
        return None

    def _set_status(self, params: dict) -> dict:
        with self._lock:
            error = self._assistant_thread_error(params)
        if error:
            return {"ok": False, "error": error}
        if not isinstance(params.get("status"), str):  # "" clears the status
            return {"ok": False, "error": "invalid_arguments"}
        loading = params.get("loading_messages")
        if loading is not None and (not isinstance(loading, list) or len(loading) > MAX_LOADING_MESSAGES):
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _set_suggested_prompts(self, params: dict) -> dict:
        with self._lock:
            error = self._assistant_thread_error(params)
        if error:
            return {"ok": False, "error": error}
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS or not all(
                isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _set_title(self, params: dict) -> dict:
        with self._lock:
            error = self._assistant_thread_error(params)
        if error:
            return {"ok": False, "error": error}
        return {"ok": True} if params.get("title") else {"ok": False, "error": "invalid_arguments"}

    # -- what a person does in the Messages tab ----------------------------------------------------------------

    def open_im(self, user: str = "U0USER") -> str:
        """The direct conversation of `user` with the app (as conversations.open makes it): its D... id."""
        ident = "D" + user[1:]
        with self._lock:
            self.channels.setdefault(ident, {**self._channel(ident, user, is_private=True, is_member=True),
                                             "is_im": True, "user": user})
        return ident

    def thread_started_event(self, channel: str, *, user: str = "U0USER", viewing: str = "C0GENERAL") -> dict:
        """A person opens a new thread with the app (its root message stored); the assistant_thread_started event."""
        ts = self._next_ts()
        with self._lock:
            self.messages[(channel, ts)] = {"channel": channel, "ts": ts, "text": "New chat", "blocks": None,
                                            "thread_ts": None, "user": user, "edits": 0,
                                            "subtype": "assistant_app_thread"}
        return {"type": "assistant_thread_started", "event_ts": self._next_ts(),
                "assistant_thread": {"user_id": user, "channel_id": channel, "thread_ts": ts,
                                     "context": {"channel_id": viewing, "team_id": self.team_id,
                                                 "enterprise_id": None}}}

    def im_message_event(self, channel: str, text: str, *, thread_ts: str | None, user: str = "U0USER",
                         team: str | None = None, from_bot: bool = False) -> dict:
        """A message written in a direct conversation with the app (stored), as the message.im event Slack sends;
        `from_bot`: the app's own message, as Slack echoes it."""
        ts = self._next_ts()
        author = BOT_USER_ID if from_bot else user
        with self._lock:
            self.messages[(channel, ts)] = {"channel": channel, "ts": ts, "text": text, "blocks": None,
                                            "thread_ts": thread_ts, "user": author, "edits": 0}
        event: dict[str, Any] = {"type": "message", "user": author, "text": text, "ts": ts, "channel": channel,
                                 "event_ts": ts, "channel_type": "im", "team": team or self.team_id}
        if from_bot:
            event |= {"bot_id": BOT_ID, "app_id": "A0TEST"}
        else:
            event |= {"client_msg_id": str(uuid.uuid4()), "blocks": [
                {"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [
                    {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}]}
        if thread_ts:
            event |= {"thread_ts": thread_ts, "parent_user_id": author}
        return event
