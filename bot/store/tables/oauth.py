"""The tables of slack_sdk's SQLAlchemy installation and OAuth state stores (slack_sdk 3.x), in the history's schema."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, DateTime, Index, Integer, String, Table, func
from sqlmodel import SQLModel

# slack_sdk.oauth.installation_store.sqlalchemy.SQLAlchemyInstallationStore and
# slack_sdk.oauth.state_store.sqlalchemy.SQLAlchemyOAuthStateStore read and write these tables with their default
# names. They are declared here, column for column as those classes build them (tests/slack/test_oauth.py holds the
# two to the same definition), because the store cannot import slack_sdk: nothing below the Slack layer does.
# `installed_at` defaults to func.now() on the Python side, as slack_sdk declares it (no server default).

INSTALLATIONS = Table(
    "slack_installations", SQLModel.metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("client_id", String(32), nullable=False),
    Column("app_id", String(32), nullable=False),
    Column("enterprise_id", String(32)),
    Column("enterprise_name", String(200)),
    Column("enterprise_url", String(200)),
    Column("team_id", String(32)),
    Column("team_name", String(200)),
    Column("bot_token", String(200)),
    Column("bot_id", String(32)),
    Column("bot_user_id", String(32)),
    Column("bot_scopes", String(1000)),
    Column("bot_refresh_token", String(200)),
    Column("bot_token_expires_at", DateTime),
    Column("user_id", String(32), nullable=False),
    Column("user_token", String(200)),
    Column("user_scopes", String(1000)),
    Column("user_refresh_token", String(200)),
    Column("user_token_expires_at", DateTime),
    Column("incoming_webhook_url", String(200)),
    Column("incoming_webhook_channel", String(200)),
    Column("incoming_webhook_channel_id", String(200)),
    Column("incoming_webhook_configuration_url", String(200)),
    Column("is_enterprise_install", Boolean, default=False, nullable=False),
    Column("token_type", String(32)),
    Column("installed_at", DateTime, nullable=False, default=func.now()),
    Index("slack_installations_idx", "client_id", "enterprise_id", "team_id", "user_id", "installed_at"),
)

BOTS = Table(
    "slack_bots", SQLModel.metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("client_id", String(32), nullable=False),
    Column("app_id", String(32), nullable=False),
    Column("enterprise_id", String(32)),
    Column("enterprise_name", String(200)),
    Column("team_id", String(32)),
    Column("team_name", String(200)),
    Column("bot_token", String(200)),
    Column("bot_id", String(32)),
    Column("bot_user_id", String(32)),
    Column("bot_scopes", String(1000)),
    Column("bot_refresh_token", String(200)),
    Column("bot_token_expires_at", DateTime),
    Column("is_enterprise_install", Boolean, default=False, nullable=False),
    Column("installed_at", DateTime, nullable=False, default=func.now()),
    Index("slack_bots_idx", "client_id", "enterprise_id", "team_id", "installed_at"),
)

OAUTH_STATES = Table(
    "slack_oauth_states", SQLModel.metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("state", String(200), nullable=False),
    Column("expire_at", DateTime, nullable=False),
)
