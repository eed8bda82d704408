"""Slack's side of the OAuth install: a code given to an installer of a workspace, exchanged for that workspace's token."""

from __future__ import annotations

import base64
import itertools

from aiohttp import web

from bot.slack.oauth import BOT_SCOPES
from tests.support.slack_server.core import SlackCore

_codes = itertools.count(1)


class OAuthMethods(SlackCore):
    """oauth.v2.access, and the codes that Slack's authorize page would give an installer."""

    def grant(self, team_id: str, *, org: bool = False) -> str:
        """What Slack's authorize page does when a person of `team_id` allows the app: a code for the redirect. With
        `org`, `team_id` is an Enterprise Grid organisation (E...) installing the app org-wide."""
        code = f"code-{team_id}-{next(_codes)}"
        with self._lock:
            self.codes[code] = team_id
            if org:
                self.orgs.add(team_id)
        return code

    def tokens_of(self, team_id: str) -> list[str]:
        """The bot tokens issued for a workspace so far (and not revoked)."""
        with self._lock:
            return [token for token, team in self.team_tokens.items() if team == team_id]

    def revoke(self, team_id: str) -> None:
        """The workspace uninstalled the app: its tokens stop working (Slack then sends app_uninstalled)."""
        with self._lock:
            for token in [t for t, team in self.team_tokens.items() if team == team_id]:
                del self.team_tokens[token]

    def _oauth_access(self, request: web.Request, params: dict) -> dict:
        client_id, client_secret = self._credentials(request, params)
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            return {"ok": False, "error": "invalid_client_id" if client_id != self.client_id else "bad_client_secret"}
        with self._lock:
            team = self.codes.pop(str(params.get("code") or ""), None)  # a code works once
            if team is None:
                return {"ok": False, "error": "invalid_code"}
            token = f"xoxb-{team}-{len(self.team_tokens) + 1}"
            self.team_tokens[token] = team
        granted = {"ok": True, "app_id": "A0TEST", "authed_user": {"id": "U0ADMIN"}, "scope": ",".join(BOT_SCOPES),
                   "token_type": "bot", "access_token": token, "bot_user_id": f"U{team}BOT"}
        if team in self.orgs:  # org-wide: the organisation installs, no one workspace
            return {**granted, "team": None, "enterprise": {"id": team, "name": f"Org {team}"},
                    "is_enterprise_install": True}
        return {**granted, "team": {"id": team, "name": f"Workspace {team}"}, "enterprise": None,
                "is_enterprise_install": False}

    @staticmethod
    def _credentials(request: web.Request, params: dict) -> tuple[str, str]:
        auth = request.headers.get("Authorization", "")
        if auth.lower().startswith("basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            return user, password
        return str(params.get("client_id") or ""), str(params.get("client_secret") or "")
