"""The bot of a workspace under the OAuth install: its own install's, or its Enterprise organisation's org-wide one."""

from __future__ import annotations

from slack_sdk.oauth.installation_store import Bot
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore


async def bot_of(installations: AsyncInstallationStore, team_id: str | None, org_id: str | None) -> Bot | None:
    """The bot (with a token) serving workspace `team_id`, found by the workspace or else by its organisation `org_id`;
    None when it has none (never installed, or uninstalled)."""
    bot = await installations.async_find_bot(enterprise_id=None, team_id=team_id)
    if bot is None and org_id:
        bot = await installations.async_find_bot(enterprise_id=org_id, team_id=None, is_enterprise_install=True)
    return bot if bot is not None and bot.bot_token else None
