"""The parts of a run sent through the Batch API: saved before anything is uploaded, updated as ids arrive, ended
with what became of their rows.

A part of a run with one judge asked once lists its rows' ids. A part of a run with samples or a jury lists slots
instead: each a row, a judge (its index in the panel) and a sample number, packed in one number (see `slot_code`);
all the slots of one part are asked of one judge, through that judge's endpoint."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from bot.store.judgments import Store
from bot.store.models import RunBatch, utcnow

UPLOADING, SENT, ENDED = "uploading", "sent", "ended"
OPEN = (UPLOADING, SENT)
SLOT_BASE = 10  # judges and samples each fit one decimal digit (at most 9 of each)


def slot_code(judgment_id: int, judge: int, sample: int) -> int:
    """One slot (a row, the index of its judge in the panel, a sample number from 1) as the number a part lists."""
    if not (0 <= judge < SLOT_BASE and 1 <= sample <= SLOT_BASE):
        raise ValueError(f"no slot for judge {judge}, sample {sample}")
    return (judgment_id * SLOT_BASE + judge) * SLOT_BASE + sample - 1


def slot_of(code: int) -> tuple[int, int, int]:
    """(row id, judge index, sample number) of a number a part lists."""
    rest, sample = divmod(code, SLOT_BASE)
    judgment_id, judge = divmod(rest, SLOT_BASE)
    return judgment_id, judge, sample + 1


def slots_of(part: RunBatch, *, single: bool) -> list[tuple[int, int, int]]:
    """The slots a part asks for: for a run with one judge asked once, its rows, each as (row id, 0, 1)."""
    return [(judgment_id, 0, 1) for judgment_id in part.judgment_ids] if single else [
        slot_of(code) for code in part.judgment_ids]


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
    """Save a part before its file is uploaded: from here on its rows (or slots) belong to it."""
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
