"""The schema versions of reasoning judges: the output tokens a judge spent reasoning, kept with each judgment, sample
and billed tally (31)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v31_reasoning_tokens(op: Operations) -> None:
    # Part of tokens_out, counted apart; 0 for what was judged before (no reply was read for them, and most judges
    # then did not reason): their cost, already recorded, is unchanged.
    for table in ("judgment", "judgment_sample", "billed_tally"):
        op.add_column(table, sa.Column("tokens_reasoning", sa.Integer, nullable=False, server_default=sa.text("0")))
