"""The parts of a run sent through the Batch API: saved before anything is uploaded, updated as ids arrive, ended
with what became of their rows."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from bot.store.judgments import Store
from bot.store.models import RunBatch, utcnow

UPLOADING, SENT, ENDED = "uploading", "sent", "ended"
OPEN = (UPLOADING, SENT)


def open_parts(store: Store, run_id: int) -> list[RunBatch]:
    """The run's parts not ended yet (saved but maybe not uploaded, or sent and waited for), oldest first."""
    with store.session() as session:
        return list(session.exec(select(RunBatch).where(RunBatch.run_id == run_id, col(RunBatch.state).in_(OPEN))
                                 .order_by(col(RunBatch.id))))


def parts_of(store: Store, run_id: int) -> list[RunBatch]:
    """Every part of the run, oldest first."""
    with store.session() as session:
        return list(session.exec(select(RunBatch).where(RunBatch.run_id == run_id).order_by(col(RunBatch.id))))


def add_part(store: Store, run_id: int, judgment_ids: list[int]) -> RunBatch:
    """Save a part before its file is uploaded: from here on its rows belong to it."""
    with store.session() as session:
        part = RunBatch(run_id=run_id, state=UPLOADING, judgment_ids=judgment_ids)
        session.add(part)
        session.commit()
        session.refresh(part)
        return part


def update_part(store: Store, part_id: int, **fields: Any) -> None:
    """Record what became known of a part (its file id, batch id, status, counts, or its end)."""
    with store.session() as session:
        part = session.get(RunBatch, part_id)
        if part is None:
            return
        for name, value in fields.items():
            setattr(part, name, value)
        if fields.get("state") == ENDED:
            part.ended_at = utcnow()
        session.add(part)
        session.commit()
