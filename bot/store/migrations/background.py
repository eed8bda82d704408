"""The schema version of background responses: each slot a run asks in a background completion window, saved before
its request is created and with its response id as soon as it exists (34)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v34_background_responses(op: Operations) -> None:
    # A slot saved before its request is created: a restart polls the ids saved and never creates those again.
    op.create_table(
        "run_background",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id"), nullable=False),
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), nullable=False),
        sa.Column("judge_index", sa.Integer, nullable=False),
        sa.Column("sample", sa.Integer, nullable=False),
        sa.Column("completion_window", sa.String(8), nullable=False),
        sa.Column("boundary", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("response_id", sa.String(128)),
        sa.Column("status", sa.String(32)),
        sa.Column("error", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("ended_at", sa.DateTime),
    )
    op.create_index("ix_run_background_run_id", "run_background", ["run_id"])
