"""The schema versions of several bot processes on one database: Slack's deliveries recorded once (21), the
workflow steps being judged, so that a process taking over completes them (27), and a card judged again once however
many click its button on whichever process (29)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
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


def _v27_workflow_steps(op: Operations) -> None:
    # A Workflow Builder step being judged, with the step's own token (it lapses within 15 minutes): the process that
    # finds its run judged after a restart completes the step. Deleted once completed, failed or lapsed.
    op.create_table(
        "workflow_step",
        sa.Column("execution_id", sa.String(64), primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("token", sa.String(255), nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id")),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_workflow_step_run_id", "workflow_step", ["run_id"])


def _v29_rejudges(op: Operations) -> None:
    # A card judged again (Re-judge, or Retry on an error card): the first click inserts the claim, on any process;
    # the others find it. It keeps the run that judges the card again once that run is saved.
    op.create_table(
        "rejudge",
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), primary_key=True, autoincrement=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id")),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("claimed_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_rejudge_run_id", "rejudge", ["run_id"])
