"""Runs in the history: made, read, listed, updated, claimed by the process judging them, and failed when the process
that loaded them died. Each function is its own transaction, over the runs' Core table; a run comes back as a
record (bot.store.tables.as_read.Run)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import CursorResult

from bot.records import CLAIMABLE, RESUMABLE, RunState
from bot.records import COST_NOT_AGREED as COST_NOT_AGREED  # the door names it here
from bot.store.clock import utcnow
from bot.store.processes.leases import take_over
from bot.store.runs.listing import never_started
from bot.store.tables.as_read import Run
from bot.store.tables.core import RUN

if TYPE_CHECKING:
    from bot.store.database import Store

INTERRUPTED = "interrupted"  # the stop reason of a run stopped by its process (Ctrl-C) with rows left to judge
LOAD_LOST = "run {run_id} was marked failed by another process while its rows were loading; start it again"


def insert_record(store: Store, table: sa.Table, record: Any) -> None:
    """Insert a record (a run, a batch part) into its Core table, every field as it holds it, and give it its id."""
    values = asdict(record)
    del values["id"]
    with store.engine.begin() as conn:
        key = conn.execute(sa.insert(table).values(values)).inserted_primary_key
    assert key is not None  # an insert's key
    record.id = key[0]

def create_run(store: Store, **fields: Any) -> Run:
    """Insert a run and return it with its id."""
    run = Run(**fields)
    insert_record(store, RUN, run)
    return run

def get_run(store: Store, run_id: int) -> Run | None:
    """The run with `run_id`, if any."""
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(RUN).where(RUN.c.id == run_id)).first()
    return Run.read(row) if row is not None else None

def _runs(store: Store, statement: sa.Select[Any]) -> list[Run]:
    with store.engine.connect() as conn:
        return [Run.read(row) for row in conn.execute(statement)]

def latest_unfinished_run(store: Store, *, source: str = "cli") -> Run | None:
    """The newest run from `source` that still has work to do: paused, interrupted, cut off by a crash, or judged
    but killed before its results file was written."""
    r = RUN.c
    unwritten = sa.and_(r.status == RunState.DONE, r.results_path.is_not(None), r.results_written_at.is_(None))
    statement = sa.select(RUN).where(sa.or_(r.status.in_(RESUMABLE), unwritten), r.source == source)
    return next(iter(_runs(store, statement.order_by(r.id.desc()).limit(1))), None)

def newer_results(store: Store, path: str, run_id: int) -> Run | None:
    """A run newer than `run_id` whose results file, written whole, is the one at `path` (its resolved path)."""
    r = RUN.c
    statement = sa.select(RUN).where(r.results_path == path, r.id > run_id, r.results_written_at.is_not(None))
    return next(iter(_runs(store, statement.order_by(r.id.desc()).limit(1))), None)

def unfinished_runs(store: Store, *, source: str) -> list[Run]:
    """Every run from `source` that still has work to do, oldest first."""
    r = RUN.c
    return _runs(store, sa.select(RUN).where(r.status.in_(RESUMABLE), r.source == source).order_by(r.id))

def recent_runs(store: Store, limit: int = 20) -> list[Run]:
    """The newest runs first, but those cancelled because their cost was not agreed to: nothing of them was
    judged."""
    r = RUN.c
    refused = never_started(r.status, r.stop_reason)
    return _runs(store, sa.select(RUN).where(~refused).order_by(r.id.desc()).limit(limit))

def update_run(store: Store, run_id: int, *, held_by: str | None = None, **fields: Any) -> bool:
    """Set fields of a run (only while process `held_by` still holds it, when given); False if none was set."""
    statement = sa.update(RUN).where(RUN.c.id == run_id)
    if held_by is not None:
        statement = statement.where(RUN.c.owner == held_by)
    with store.engine.begin() as conn:
        result = cast(CursorResult[Any], conn.execute(statement.values(**fields)))
        return result.rowcount == 1

def claim_run(store: Store, run_id: int, *, owner: str, stale_after: float,
              statuses: tuple[str, ...] = CLAIMABLE) -> bool:
    """Mark a run in one of `statuses` as judged by `owner`, unless another live process is judging it."""
    now = utcnow()
    with store.engine.begin() as conn:
        row = conn.execute(sa.select(RUN).where(RUN.c.id == run_id)).first()
        if row is None or row.status not in statuses:
            return False
        # Only a running run is held by its owner; one paused or done is free, whoever was named in it.
        running = row.status == RunState.RUNNING
        return take_over(conn, RUN, row, seen="heartbeat_at", stale_after=stale_after, now=now, owner=owner,
                         held=running, where=(RUN.c.status == row.status,), status=RunState.RUNNING,
                         started_at=row.started_at or now, stop_reason=None,
                         cancel_requested_by=row.cancel_requested_by if running else None)

def interrupt_run(store: Store, run_id: int, *, owner: str) -> bool:
    """Mark paused, as interrupted, a run that process `owner` stopped before judging it (still pending) or while
    judging it (running, held by `owner`); False when it is in another state (paused or over already, or held by
    another process)."""
    r = RUN.c
    ours = sa.or_(r.status == RunState.PENDING, sa.and_(r.status == RunState.RUNNING, r.owner == owner))
    with store.engine.begin() as conn:
        result = cast(CursorResult[Any], conn.execute(sa.update(RUN).where(r.id == run_id, ours).values(
            status=RunState.PAUSED, stop_reason=INTERRUPTED, owner=None, finished_at=utcnow())))
        return result.rowcount == 1

def beat_run(store: Store, run_id: int, owner: str) -> bool:
    """Record that `owner` is alive and judging the run; False when another process has taken it over."""
    return update_run(store, run_id, held_by=owner, heartbeat_at=utcnow())
