"""The schema versions of replicas judging one run together: pending rows claimed by the process judging them (22)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.schema.migrate)
    from alembic.operations import Operations


def _v22_row_claims(op: Operations) -> None:
    # Which process judges a pending row, and when it last showed life: several processes share a run's rows, each
    # row held by one, and a row whose process died is taken by another.
    op.add_column("judgment", sa.Column("claimed_by", sa.String(128)))
    op.add_column("judgment", sa.Column("claimed_at", sa.DateTime))
