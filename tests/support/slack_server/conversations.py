"""auth.test, users.info and conversations.*: the team, its people, its channels and the messages in them."""

from __future__ import annotations

import base64
from typing import Any

from tests.support.slack_server.core import BOT_ID, BOT_USER_ID, SlackCore


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true")


def _kind(channel: dict) -> str:
    if channel.get("is_im"):
        return "im"
    return "private_channel" if channel["is_private"] else "public_channel"


class ConversationMethods(SlackCore):
    """auth.test, users.info, conversations.info, join, replies and history (with Slack's cursor paging)."""

    def _auth_test(self, params: dict) -> dict:
        team = self.caller_team  # the workspace of the token (the one SLACK_BOT_TOKEN, or one issued at an install)
        if team != self.team_id:
            return {"ok": True, "url": f"https://{team.lower()}.slack.com/", "team": f"Workspace {team}",
                    "user": "judgebot", "team_id": team, "user_id": f"U{team}BOT", "bot_id": f"B{team}BOT",
                    "is_enterprise_install": False}
        return {"ok": True, "url": self.team_url, "team": "Judgebot Test", "user": "judgebot", "team_id": self.team_id,
                "user_id": BOT_USER_ID, "bot_id": BOT_ID, "is_enterprise_install": False}

    def _users_info(self, params: dict) -> dict:
        with self._lock:
            user = self.users.get(params.get("user", ""))
        return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}

    def _users_list(self, params: dict) -> dict:
        with self._lock:
            members = list(self.users.values())
        return self._page(members, params, key="members")

    def _usergroups_list(self, params: dict) -> dict:
        with self._lock:
            groups = [{"id": ident, "handle": group["handle"], "name": group["handle"]}
                      for ident, group in self.usergroups.items()]
        return {"ok": True, "usergroups": groups}

    def _usergroups_users_list(self, params: dict) -> dict:
        with self._lock:
            group = self.usergroups.get(params.get("usergroup", ""))
        return {"ok": True, "users": list(group["users"])} if group else {"ok": False, "error": "no_such_subteam"}

    def _conversations_open(self, params: dict) -> dict:
        """A direct message with one person: the same D channel every time."""
        user = str(params.get("users") or "")
        with self._lock:
            if user not in self.users:
                return {"ok": False, "error": "user_not_found"}
            ident = "D" + user[1:]
            channel = self.channels.setdefault(ident, {**self._channel(ident, user, is_private=True, is_member=True),
                                                       "is_im": True, "user": user})
        return {"ok": True, "channel": {"id": channel["id"]}}

    def _users_conversations(self, params: dict) -> dict:
        """The conversations a person is in, of the types asked for (public channels by default); as with a bot
        token, private ones only where the bot is a member too."""
        user = str(params.get("user") or "")
        types = set(str(params.get("types") or "public_channel").split(","))
        with self._lock:
            if user not in self.users:
                return {"ok": False, "error": "user_not_found"}
            found = [channel for ident, channel in self.channels.items()
                     if _kind(channel) in types and user in self.members.get(ident, set())
                     and (channel["is_member"] or not channel["is_private"])
                     and not (_truthy(params.get("exclude_archived")) and channel["is_archived"])]
        return self._page(found, params, key="channels")

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
            try:  # as Slack reads them: only what was posted after `oldest` and before `latest`
                oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or "inf")
            except ValueError:
                return {"ok": False, "error": "invalid_arguments"}
            messages = [self._as_api_message(m, metadata=metadata) for m in replies if oldest < float(m["ts"]) < latest]
            if parent is not None and oldest < float(ts) < latest:
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
    def _page(messages: list[dict], params: dict, *, key: str = "messages") -> dict:
        cursor = str(params.get("cursor") or "")
        try:
            start = int(base64.b64decode(cursor).decode().removeprefix("offset:")) if cursor else 0
            limit = max(1, int(params.get("limit") or 1000))
        except ValueError:
            return {"ok": False, "error": "invalid_cursor"}
        end = start + limit
        more = end < len(messages)
        cursor = base64.b64encode(f"offset:{end}".encode()).decode() if more else ""
        return {"ok": True, key: messages[start:end], "has_more": more,
                "response_metadata": {"next_cursor": cursor}}
