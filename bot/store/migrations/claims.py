"""The schema versions of replicas judging together: pending rows claimed by the process judging them (22), and the
judge endpoints' pauses told to every process (23), and a cancel asked of whichever process holds a run (25)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v22_row_claims(op: Operations) -> None:
    # Which process judges a pending row, and when it last showed life: several processes share a run's rows, each
    # row held by one, and a row whose process died is taken by another.
    op.add_column("judgment", sa.Column("claimed_by", sa.String(128)))
    op.add_column("judgment", sa.Column("claimed_at", sa.DateTime))


def _v23_endpoint_pauses(op: Operations) -> None:
    # The pause a 429 set on an endpoint and model, told to every process judging with them (one row each, its end
    # moved later when another 429 asks more).
    op.create_table(
        "endpoint_pause",
        sa.Column("endpoint", sa.String(255), primary_key=True),
        sa.Column("model", sa.String(128), primary_key=True),
        sa.Column("until", sa.DateTime, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("told_by", sa.String(128), nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )


def _v25_cancel_requests(op: Operations) -> None:
    # Who asked to cancel a run another process is judging (a click that reached another replica): the process that
    # holds the run reads it with its heartbeat and stops.
    op.add_column("run", sa.Column("cancel_requested_by", sa.String(32)))
