"""Many workspaces: Slack's OAuth install through bolt, with slack_sdk's SQLAlchemy stores on the history's database
(the tokens sealed with SECRETS_KEY when it is set)."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable
from logging import Logger
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from bot.errors import SetupError
from bot.slack.context import Context, Workspace
from bot.slack.messenger import Messenger
from bot.store import Sealer, Store, remember_org, sealed, stored_tokens

log = logging.getLogger(__name__)

INSTALL_PATH, REDIRECT_PATH = "/slack/install", "/slack/oauth_redirect"
STATE_SECONDS = 600  # how long an install started at INSTALL_PATH may take to come back to REDIRECT_PATH
# The bot scopes of manifest.yml (oauth_config.scopes.bot), asked for at each install (a test holds the two together)
BOT_SCOPES = ("commands", "chat:write", "files:read", "files:write", "channels:history", "groups:history", "users:read",
              "usergroups:read", "im:write", "im:history", "assistant:write", "channels:read", "groups:read",
              "mcp:connect")
TOKENS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")  # of an Installation (a Bot: the first two)
UNSEALED = ("the OAuth install's Slack tokens are stored unencrypted in the history database: set SECRETS_KEY to "
            "encrypt them (docs/operations.md)")
SOME_UNSEALED = ("{n} Slack tokens stored before SECRETS_KEY was set are still unencrypted: `judgebot secrets rotate` "
                 "encrypts them")


class SealedInstallationStore(InstallationStore):
    """slack_sdk's installation store with every token sealed on its way in and opened on its way out."""

    def __init__(self, store: InstallationStore, sealer: Sealer) -> None:
        self.store, self.sealer = store, sealer

    @property
    def logger(self) -> Logger:
        return self.store.logger

    def save(self, installation: Installation) -> None:
        self.store.save(self._sealed(installation))

    def save_bot(self, bot: Bot) -> None:
        self.store.save_bot(self._sealed(bot))

    def find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                 is_enterprise_install: bool | None = False) -> Bot | None:
        return self._opened(self.store.find_bot(enterprise_id=enterprise_id, team_id=team_id,
                                                is_enterprise_install=is_enterprise_install))

    def find_installation(self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
                          is_enterprise_install: bool | None = False) -> Installation | None:
        return self._opened(self.store.find_installation(enterprise_id=enterprise_id, team_id=team_id, user_id=user_id,
                                                         is_enterprise_install=is_enterprise_install))

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.store.delete_bot(enterprise_id=enterprise_id, team_id=team_id)

    def delete_installation(self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None) -> None:
        self.store.delete_installation(enterprise_id=enterprise_id, team_id=team_id, user_id=user_id)

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.store.delete_all(enterprise_id=enterprise_id, team_id=team_id)

    def _sealed(self, item: Any) -> Any:
        sealed_copy = copy.copy(item)  # bolt goes on using the installation it saved, with its tokens plain
        for name in TOKENS:
            if hasattr(item, name):
                setattr(sealed_copy, name, self.sealer.seal(getattr(item, name)))
        return sealed_copy

    def _opened(self, item: Any) -> Any:
        """`item` with its tokens opened; None (as if not installed: a reinstall stores a token anew) when a token
        cannot be, which is logged in a sentence."""
        if item is None:
            return None
        try:
            for name in TOKENS:
                if hasattr(item, name):
                    setattr(item, name, self.sealer.open(getattr(item, name)))
        except SetupError as err:
            log.error("the bot token of workspace %s cannot be read: %s", item.team_id or item.enterprise_id, err)
            return None
        return item


class ThreadedInstallationStore(AsyncInstallationStore):
    """A sync slack_sdk installation store for the async app: each call in a worker thread, so that a busy database
    never delays an ack (the way the rest of the bot reaches the history: Context.db)."""

    def __init__(self, store: InstallationStore) -> None:
        self.store = store

    @property
    def logger(self) -> Logger:
        return self.store.logger

    async def async_save(self, installation: Installation) -> None:
        await asyncio.to_thread(self.store.save, installation)

    async def async_save_bot(self, bot: Bot) -> None:
        await asyncio.to_thread(self.store.save_bot, bot)

    async def async_find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                             is_enterprise_install: bool | None = False) -> Bot | None:
        return await asyncio.to_thread(self.store.find_bot, enterprise_id=enterprise_id, team_id=team_id,
                                       is_enterprise_install=is_enterprise_install)

    async def async_find_installation(self, *, enterprise_id: str | None, team_id: str | None,
                                      user_id: str | None = None,
                                      is_enterprise_install: bool | None = False) -> Installation | None:
        return await asyncio.to_thread(self.store.find_installation, enterprise_id=enterprise_id, team_id=team_id,
                                       user_id=user_id, is_enterprise_install=is_enterprise_install)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await asyncio.to_thread(self.store.delete_bot, enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(self, *, enterprise_id: str | None, team_id: str | None,
                                        user_id: str | None = None) -> None:
        await asyncio.to_thread(self.store.delete_installation, enterprise_id=enterprise_id, team_id=team_id,
                                user_id=user_id)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await asyncio.to_thread(self.store.delete_all, enterprise_id=enterprise_id, team_id=team_id)


class ThreadedStateStore(AsyncOAuthStateStore):
    """A sync slack_sdk OAuth state store for the async app, each call in a worker thread."""

    def __init__(self, store: OAuthStateStore) -> None:
        self.store = store

    @property
    def logger(self) -> Logger:
        return self.store.logger

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self.store.issue, *args, **kwargs)

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self.store.consume, state)


def installation_store(client_id: str, store: Store, sealer: Sealer) -> ThreadedInstallationStore:
    """slack_sdk's SQLAlchemy installation store on the history's engine (its tables: schema version 24), its tokens
    sealed by `sealer`."""
    return ThreadedInstallationStore(SealedInstallationStore(
        SQLAlchemyInstallationStore(client_id=client_id, engine=store.engine), sealer))


def sealing_warnings(store: Store, sealer: Sealer) -> list[str]:
    """What to say at start of how the tokens are stored: unencrypted without SECRETS_KEY, or some still plain with
    it; SetupError in a sentence when SECRETS_KEY cannot open a stored token (the wrong key, or none)."""
    tokens = stored_tokens(store)
    for token in tokens:
        sealer.open(token)
    if not sealer.keyed:
        return [UNSEALED]
    plain = sum(not sealed(token) for token in tokens)
    return [SOME_UNSEALED.format(n=plain)] if plain else []


def oauth_settings(*, client_id: str, client_secret: str, redirect_uri: str | None, store: Store,
                   installations: AsyncInstallationStore) -> AsyncOAuthSettings:
    """bolt's OAuth flow: the install page at INSTALL_PATH, Slack's answer at REDIRECT_PATH with its state checked
    against the state store (and the installer's browser cookie), each installation saved to `installations`, and
    every request authorized from there (the workspace's newest bot token)."""
    return AsyncOAuthSettings(
        client_id=client_id, client_secret=client_secret, scopes=list(BOT_SCOPES), user_scopes=[],
        redirect_uri=redirect_uri, install_path=INSTALL_PATH, redirect_uri_path=REDIRECT_PATH,
        installation_store=installations, installation_store_bot_only=True,
        state_store=ThreadedStateStore(SQLAlchemyOAuthStateStore(expiration_seconds=STATE_SECONDS,
                                                                 engine=store.engine)),
        state_expiration_seconds=STATE_SECONDS, logger=logging.getLogger("judgebot.bolt.oauth"),
    )


def workspace_middleware(ctx: Context) -> Callable[..., Awaitable[None]]:
    """A global middleware: each request is answered for its own workspace, with the client bolt authorized for it
    (`ctx.say`, `ctx.client` and `ctx.team_id` are that workspace's in its listeners and the tasks they start)."""

    orgs: set[tuple[str, str]] = set()  # (workspace, organisation) pairs saved by this process

    async def answer_for_workspace(context: AsyncBoltContext, next: Callable[[], Awaitable[None]]) -> None:
        if context.is_enterprise_install and context.enterprise_id and context.team_id:
            pair = (context.team_id, context.enterprise_id)  # an org-wide install: digests find its bot by the org
            if pair not in orgs:
                await ctx.db(remember_org, team_id=pair[0], enterprise_id=pair[1])
                orgs.add(pair)
        authorized = context.authorize_result  # bolt asked auth.test for it (cached): it has the workspace's URL
        ctx.answer_for(Workspace(Messenger(context.client), team_id=context.team_id,
                                 bot_user_id=context.bot_user_id, team_url=authorized.url if authorized else None))
        await next()

    return answer_for_workspace
