"""The workspace a terminal command posts in (`digest --post`, `review --nudge`): SLACK_BOT_TOKEN's, or with the OAuth
install the channel's own workspace, its bot token found in the installation store."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.errors import SetupError
from bot.slack.installed import bot_of
from bot.slack.messenger import BAD_BOT_TOKEN, make_web_client, slack_call
from bot.slack.oauth import installation_store
from bot.store import Sealer, Store, channel_teams, org_of


@dataclass(frozen=True)
class TerminalWorkspace:
    """A client with the workspace's bot token, the workspace (the channel's, else the token's), and what auth.test
    says of the token (its URL, for links)."""

    client: AsyncWebClient
    team_id: str | None
    auth: dict[str, Any]

    @property
    def url(self) -> str | None:
        return self.auth.get("url")


def can_post(settings: Settings) -> None:
    """SetupError, at once, when a terminal command could post nowhere: neither the OAuth install nor a bot token."""
    if not _client_id(settings):
        settings.bot_token()


async def workspace_of(settings: Settings, store: Store, channel_id: str, *,
                       team_id: str | None = None) -> TerminalWorkspace:
    """The workspace to post in channel `channel_id` (of workspace `team_id` when known); SetupError in a sentence when
    there is no token for it, or the token is refused."""
    client_id = _client_id(settings)
    if not client_id:
        return await _checked(make_web_client(settings.bot_token(), settings.slack_api_url), settings, team_id)
    teams = [team_id] if team_id else await asyncio.to_thread(channel_teams, store, channel_id)
    if not teams:
        raise SetupError(f"judgebot knows of no workspace with channel {channel_id}: with the OAuth install a channel's "
                         "workspace is learned from its judgments and settings. Judge something there first.")
    if len(teams) > 1:
        raise SetupError(f"{channel_id} is shared by the workspaces {', '.join(teams)}, both with judgebot: post from "
                         "Slack in the workspace you mean (`/judge digest now`, `/judge review nudge`).")
    team = teams[0]
    org = await asyncio.to_thread(org_of, store, team)
    bot = await bot_of(installation_store(client_id, store, Sealer(settings.secrets_keys)), team, org)
    if bot is None:
        raise SetupError(f"judgebot is not installed in workspace {team} (any more): install it from /slack/install "
                         "first.")
    return await _checked(make_web_client(bot.bot_token, settings.slack_api_url), settings, team)


async def _checked(client: AsyncWebClient, settings: Settings, team_id: str | None) -> TerminalWorkspace:
    """The token asked about itself (a refusal, or no Slack at all, said in a sentence); the workspace is `team_id`,
    else the token's own (one SLACK_BOT_TOKEN)."""
    auth = await slack_call(client.auth_test, BAD_BOT_TOKEN, settings.slack_api_url)
    return TerminalWorkspace(client, team_id or auth.get("team_id"), auth)


def _client_id(settings: Settings) -> str:
    """The OAuth install's client id ("": one SLACK_BOT_TOKEN); a terminal needs no signing secret to post."""
    return (settings.slack_client_id or "").strip()
