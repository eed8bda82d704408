"""The schema versions of comparisons: a row that holds two answers to one question, for a pairwise judge (19)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v19_pairs(op: Operations) -> None:
    # A pair's row keeps its answers as the file gave them (answer: A, answer_b: B) with both models; `swapped` says
    # the judge was shown B first. A pointwise row leaves all three empty.
    op.add_column("judgment", sa.Column("answer_b", sa.Text))
    op.add_column("judgment", sa.Column("model_b", sa.Text))
    op.add_column("judgment", sa.Column("swapped", sa.Boolean))
