"""The schema versions of retrieved context: the passages a RAG assistant retrieved for a judgment's case (30)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v30_retrieved_context(op: Operations) -> None:
    # The passages as one JSON list of strings, kept as text so that a case's key reads exactly what was saved; NULL
    # for a case without context, whose rows keep their case keys, cache keys and prompt hashes (nothing is filled in).
    op.add_column("judgment", sa.Column("context", sa.Text))
