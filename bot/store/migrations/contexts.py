"""The schema versions of retrieved context: the passages a RAG assistant retrieved for a judgment's case (30), and
the context cell of a judgment's input cells kept as the way to write it back from them, not a second copy (36)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.csvfiles.passages import kept_cell
from bot.records import context_of
from bot.store.counts.case_keys import REMOVED

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations

PAGE = 1_000  # judgments read and rewritten at a time: a history's passages are never held whole


def _v30_retrieved_context(op: Operations) -> None:
    # The passages as one JSON list of strings, kept as text so that a case's key reads exactly what was saved; NULL
    # for a case without context, whose rows keep their case keys, cache keys and prompt hashes (nothing is filled in).
    op.add_column("judgment", sa.Column("context", sa.Text))


def _v36_passages_kept_once(op: Operations) -> None:
    # A row's passages were kept twice: in `context` and in the context cell of its input cells. The cell becomes the
    # way to write it back from `context` ({"passages": form}, bot.csvfiles.passages) wherever that gives it back
    # exactly; nothing else changes, so every key, case and figure stays as it was.
    bind = op.get_bind()
    judgment = sa.table("judgment", sa.column("id"), sa.column("run_id"), sa.column("cells", sa.JSON),
                        sa.column("context", sa.Text))
    run = sa.table("run", sa.column("id"), sa.column("column_roles", sa.JSON))
    rewrite = (judgment.update().where(judgment.c.id == sa.bindparam("row_id"))
               .values(cells=sa.bindparam("kept", type_=sa.JSON)))
    after = 0
    while True:
        rows = bind.execute(sa.select(judgment.c.id, judgment.c.cells, judgment.c.context, run.c.column_roles)
                            .join(run, run.c.id == judgment.c.run_id)
                            .where(judgment.c.context.is_not(None), judgment.c.id > after)
                            .order_by(judgment.c.id).limit(PAGE)).all()
        if not rows:
            return
        kept = [{"row_id": row.id, "kept": cells} for row in rows if (cells := _kept_cells(row)) is not None]
        if kept:
            bind.execute(rewrite, kept)
        after = rows[-1].id


def _kept_cells(row: Any) -> dict[str, Any] | None:
    """A row's cells with its context cell kept as the way to write it back; None when there is nothing to change:
    no context cell, its texts removed (bot.store.retention.texts), or a cell no form gives back exactly."""
    cells = row.cells if isinstance(row.cells, dict) else None
    header = (row.column_roles or {}).get("context") or "context"  # a run of one triple names its cell "context"
    if cells is None or not isinstance(cells.get(header), str) or cells[header] == REMOVED:
        return None
    try:
        passages = context_of(row.context)
    except (ValueError, TypeError):  # not a JSON list: nothing to write the cell back from
        return None
    if passages is None:
        return None
    kept = kept_cell(cells[header], passages, row.context)
    return None if isinstance(kept, str) else {**cells, header: kept}
