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
from bot.store.runs.rows import id_chunks
from bot.store.tables.core import RUN_BATCH

if TYPE_CHECKING:
    from bot.store.database import Store
    from bot.store.tables.history import Judgment, RunBatch

UPLOADING, SENT, ENDED = "uploading", "sent", "ended"
OPEN_PARTS = (UPLOADING, SENT)
Slot = tuple[int, int, int]  # (row id, judge index, sample number)


def slots_of(part: RunBatch) -> list[Slot]:
    """The slots a part asks for."""
    return [(int(row), int(judge), int(sample)) for row, judge, sample in part.slots]


def open_parts(store: Store, run_id: int) -> list[RunBatch]:
    """The run's parts not ended yet (saved but maybe not uploaded, or sent and waited for), oldest first."""
    from sqlmodel import col, select  # the ORM and the table model: only for the model instances this returns

    from bot.store.tables.history import RunBatch

    with store.session() as session:
        return list(session.exec(select(RunBatch).where(RunBatch.run_id == run_id, col(RunBatch.state).in_(OPEN_PARTS))
                                 .order_by(col(RunBatch.id))))


def parts_of(store: Store, run_id: int) -> list[RunBatch]:
    """Every part of the run, oldest first."""
    from sqlmodel import col, select  # the ORM and the table model: only for the model instances this returns

    from bot.store.tables.history import RunBatch

    with store.session() as session:
        return list(session.exec(select(RunBatch).where(RunBatch.run_id == run_id).order_by(col(RunBatch.id))))


def add_part(store: Store, run_id: int, slots: list[Slot]) -> RunBatch:
    """Save a part before its file is uploaded: from here on its rows (or slots) belong to it."""
    from bot.store.tables.history import RunBatch  # the table model: only for the instance this returns

    with store.session() as session:
        part = RunBatch(run_id=run_id, state=UPLOADING, slots=[list(slot) for slot in slots])
        session.add(part)
        session.commit()
        session.refresh(part)
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
    from sqlmodel import col, select  # the ORM and the table model: only for the model instances this returns

    from bot.store.tables.history import Judgment

    found: list[Judgment] = []
    with store.session() as session:
        for chunk in id_chunks(sorted(set(judgment_ids))):
            found += session.exec(select(Judgment).where(col(Judgment.id).in_(chunk),
                                                         Judgment.status == RowState.PENDING))
    return found
