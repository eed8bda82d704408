"""The schema version of reasoning efforts: the effort each judgment and sample asked its judge for, and a channel's
own judge's effort (33)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v33_reasoning_effort(op: Operations) -> None:
    # None for what was judged before: which effort its judge used was not kept.
    for table in ("judgment", "judgment_sample"):
        op.add_column(table, sa.Column("reasoning_effort", sa.String(16), nullable=True))
    op.add_column("channel_judge", sa.Column("reasoning_effort", sa.String(16), nullable=True))
