"""The schema versions of several bot processes on one database: Slack's deliveries recorded once (21)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.schema.migrate)
    from alembic.operations import Operations


def _v21_deliveries(op: Operations) -> None:
    # Every request and event Slack delivers, recorded before it is processed: the key is unique, so whichever process
    # records it first processes it, and a retry or replay reaching any process is dropped. Kept about an hour.
    op.create_table(
        "slack_delivery",
        sa.Column("key", sa.String(80), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("received_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_slack_delivery_received_at", "slack_delivery", ["received_at"])
