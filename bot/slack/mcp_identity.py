"""The Slack identity of the MCP server's callers: Slack's signature on Slackbot's requests (the app's signing secret), and
how far the Slack person it calls for reaches: their direct conversation with judgebot and the channels they are in,
asked of Slack with judgebot's bot token in their workspace (kept a minute)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import UsageError
from bot.slack.http_mode import signed
from bot.slack.installed import bot_of
from bot.slack.messenger import make_web_client
from bot.slack.text import escape

log = logging.getLogger(__name__)

KEEP_SECONDS = 60.0  # how long what Slack said of a person's channels is believed
UNREACHABLE = "judgebot could not learn from Slack which channels you are in: try again in a minute"
MISSING_SCOPE = ("judgebot's Slack app lacks a scope this needs (channels:read, groups:read, im:write): reinstall "
                 "it from manifest.yml")


class Person(Protocol):
    """The Slack person a signed request names (bot.mcp.gate.SlackPerson)."""

    @property
    def user_id(self) -> str: ...

    @property
    def team_id(self) -> str | None: ...

    @property
    def enterprise_id(self) -> str | None: ...


@dataclass
class SlackReach:
    """Slack's side of Slackbot's calls: one SLACK_BOT_TOKEN (its workspace only), or the OAuth install's tokens."""

    signing_secret: str = field(repr=False)
    api_url: str
    bot_token: str | None = field(default=None, repr=False)
    installations: AsyncInstallationStore | None = None
    _verifier: SignatureVerifier = field(init=False)
    _home: dict[str, Any] | None = field(default=None, init=False)  # auth.test of SLACK_BOT_TOKEN, once
    _known: dict[tuple[str, str], tuple[float, tuple[str, frozenset[str]]]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._verifier = SignatureVerifier(self.signing_secret)

    def signed(self, body: bytes, timestamp: str, signature: str) -> bool:
        """Whether Slack signed `body` with the app's signing secret, within five minutes."""
        return signed(self._verifier, body, timestamp, signature)

    async def reach(self, person: Person) -> tuple[str, frozenset[str]]:
        """The person's direct conversation with judgebot, and the public and private channels they are in."""
        team = person.team_id or ""
        key = (team, person.user_id)
        known = self._known.get(key)
        if known is not None and known[0] > time.monotonic():
            return known[1]
        try:
            client = await self._client(team, person.enterprise_id)
            home = str((await client.conversations_open(users=person.user_id))["channel"]["id"])
            channels: set[str] = set()
            pages = await client.users_conversations(user=person.user_id, types="public_channel,private_channel",
                                                     exclude_archived=True, limit=200)
            async for page in pages:
                channels.update(str(channel["id"]) for channel in page.get("channels", []))
        except UsageError:
            raise
        except SlackApiError as err:
            code = str(err.response.get("error", "unknown error"))
            log.info("Slack answered %s about a person of workspace %s", code, team)
            raise UsageError(MISSING_SCOPE if code == "missing_scope" else
                             f"Slack answered `{escape(code)}` when judgebot asked which channels you are in") from None
        except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError) as err:
            log.info("Slack could not be reached for workspace %s: %s", team, type(err).__name__)
            raise UsageError(UNREACHABLE) from None
        except Exception:  # Slack's answer in a shape it never has, or the history out of reach
            log.exception("learning the channels of a person of workspace %s failed", team)
            raise UsageError(UNREACHABLE) from None
        now = time.monotonic()
        self._known = {known: entry for known, entry in self._known.items() if entry[0] > now}
        found = (home, frozenset(channels))
        self._known[key] = (now + KEEP_SECONDS, found)
        return found

    async def _client(self, team_id: str, org_id: str | None) -> AsyncWebClient:
        """A client with judgebot's bot token in workspace `team_id`; UsageError when judgebot is not installed there."""
        not_installed = UsageError(f"judgebot is not installed in your workspace ({team_id}): an admin installs it "
                                   "first")
        if self.installations is not None:
            bot = await bot_of(self.installations, team_id, org_id)
            if bot is None:
                raise not_installed
            return make_web_client(bot.bot_token, self.api_url)
        client = make_web_client(self.bot_token, self.api_url)
        if self._home is None:
            try:
                self._home = (await client.auth_test()).data  # type: ignore[assignment]
            except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError) as err:
                log.warning("auth.test failed for the MCP server: %s", type(err).__name__)
                raise UsageError("judgebot could not reach Slack with its bot token: try again in a minute") from None
        home = self._home or {}
        if team_id != home.get("team_id") and not (org_id and org_id == home.get("enterprise_id")
                                                   and home.get("is_enterprise_install")):
            raise not_installed
        return client
