"""The parts of a run sent through the Batch API: saved before anything is uploaded, updated as ids arrive, ended
with what became of their rows.

A part lists the slots it asks for: each a row, a judge (its index in the panel) and a sample number from 1; all
the slots of one part are asked of one judge, through that judge's endpoint."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.records import RowState
from bot.store.clock import utcnow
from bot.store.runs.records import insert_record
from bot.store.runs.rows import id_chunks
from bot.store.tables.as_read import Judgment, RunBatch
from bot.store.tables.core import JUDGMENT, RUN_BATCH

if TYPE_CHECKING:
    from bot.store.database import Store

UPLOADING, SENT, ENDED = "uploading", "sent", "ended"
OPEN_PARTS = (UPLOADING, SENT)
Slot = tuple[int, int, int]  # (row id, judge index, sample number)


def slots_of(part: RunBatch) -> list[Slot]:
    """The slots a part asks for."""
    return [(int(row), int(judge), int(sample)) for row, judge, sample in part.slots]


def open_parts(store: Store, run_id: int) -> list[RunBatch]:
    """The run's parts not ended yet (saved but maybe not uploaded, or sent and waited for), oldest first."""
    return _parts(store, RUN_BATCH.c.run_id == run_id, RUN_BATCH.c.state.in_(OPEN_PARTS))


def parts_of(store: Store, run_id: int) -> list[RunBatch]:
    """Every part of the run, oldest first."""
    return _parts(store, RUN_BATCH.c.run_id == run_id)


def _parts(store: Store, *where: sa.ColumnElement[bool]) -> list[RunBatch]:
    with store.engine.connect() as conn:
        return [RunBatch.read(row) for row in conn.execute(sa.select(RUN_BATCH).where(*where).order_by(RUN_BATCH.c.id))]


def add_part(store: Store, run_id: int, slots: list[Slot]) -> RunBatch:
    """Save a part before its file is uploaded: from here on its rows (or slots) belong to it."""
    part = RunBatch(run_id=run_id, state=UPLOADING, slots=[list(slot) for slot in slots])
    insert_record(store, RUN_BATCH, part)
    return part


def update_part(store: Store, part_id: int, **fields: Any) -> None:
    """Record what became known of a part (its file id, batch id, status, counts, or its end)."""
    values = {**fields, **({"ended_at": utcnow()} if fields.get("state") == ENDED else {})}
    if not values:  # nothing became known
        return
    with store.engine.begin() as conn:
        conn.execute(sa.update(RUN_BATCH).where(RUN_BATCH.c.id == part_id).values(values))


def pending_rows(store: Store, judgment_ids: Iterable[int]) -> list[Judgment]:
    """The rows among `judgment_ids` still pending (those a batch's replies may still settle)."""
    found: list[Judgment] = []
    with store.engine.connect() as conn:
        for chunk in id_chunks(sorted(set(judgment_ids))):
            found += [Judgment.read(row) for row in conn.execute(
                sa.select(JUDGMENT).where(JUDGMENT.c.id.in_(chunk), JUDGMENT.c.status == RowState.PENDING))]
    return found
