"""Runs in the history: made, read, listed, updated, claimed by the process judging them, and failed when the process
that loaded them died. Each function is its own transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import and_, or_, update
from sqlalchemy.engine import CursorResult
from sqlmodel import col, select

from bot.records import CLAIMABLE, RESUMABLE, RunState
from bot.records import COST_NOT_AGREED as COST_NOT_AGREED  # the door names it here
from bot.store.clock import utcnow
from bot.store.processes.leases import take_over
from bot.store.runs.listing import never_started
from bot.store.tables.history import Run

if TYPE_CHECKING:
    from bot.store.database import Store

INTERRUPTED = "interrupted"  # the stop reason of a run stopped by its process (Ctrl-C) with rows left to judge
LOAD_LOST = "run {run_id} was marked failed by another process while its rows were loading; start it again"


def create_run(store: Store, **fields: Any) -> Run:
    """Insert a run and return it with its id."""
    with store.session() as session:
        run = Run(**fields)
        session.add(run)
        session.commit()
        return run

def get_run(store: Store, run_id: int) -> Run | None:
    """The run with `run_id`, if any."""
    with store.session() as session:
        return session.get(Run, run_id)

def latest_unfinished_run(store: Store, *, source: str = "cli") -> Run | None:
    """The newest run from `source` that still has work to do: paused, interrupted, cut off by a crash, or judged
    but killed before its results file was written."""
    unwritten = and_(col(Run.status) == RunState.DONE, col(Run.results_path).is_not(None),
                     col(Run.results_written_at).is_(None))
    with store.session() as session:
        statement = (select(Run).where(or_(col(Run.status).in_(RESUMABLE), unwritten), Run.source == source)
                     .order_by(col(Run.id).desc()))
        return session.exec(statement.limit(1)).first()

def newer_results(store: Store, path: str, run_id: int) -> Run | None:
    """A run newer than `run_id` whose results file, written whole, is the one at `path` (its resolved path)."""
    with store.session() as session:
        return session.exec(select(Run).where(Run.results_path == path, col(Run.id) > run_id,
                                              col(Run.results_written_at).is_not(None))
                            .order_by(col(Run.id).desc()).limit(1)).first()

def unfinished_runs(store: Store, *, source: str) -> list[Run]:
    """Every run from `source` that still has work to do, oldest first."""
    with store.session() as session:
        return list(session.exec(select(Run).where(col(Run.status).in_(RESUMABLE), Run.source == source)
                                 .order_by(col(Run.id))))

def recent_runs(store: Store, limit: int = 20) -> list[Run]:
    """The newest runs first, but those cancelled because their cost was not agreed to: nothing of them was
    judged."""
    with store.session() as session:
        refused = never_started(col(Run.status), col(Run.stop_reason))
        return list(session.exec(select(Run).where(~refused).order_by(col(Run.id).desc()).limit(limit)))

def update_run(store: Store, run_id: int, *, held_by: str | None = None, **fields: Any) -> bool:
    """Set fields of a run (only while process `held_by` still holds it, when given); False if none was set."""
    statement = update(Run).where(col(Run.id) == run_id)
    if held_by is not None:
        statement = statement.where(col(Run.owner) == held_by)
    with store.session() as session:
        result = cast(CursorResult[Any], session.execute(statement.values(**fields)))
        session.commit()
        return result.rowcount == 1

def claim_run(store: Store, run_id: int, *, owner: str, stale_after: float,
              statuses: tuple[str, ...] = CLAIMABLE) -> bool:
    """Mark a run in one of `statuses` as judged by `owner`, unless another live process is judging it."""
    now = utcnow()
    with store.session() as session:
        run = session.get(Run, run_id)
        if run is None or run.status not in statuses:
            return False
        # Only a running run is held by its owner; one paused or done is free, whoever was named in it.
        claimed = take_over(session, Run, run, seen="heartbeat_at", stale_after=stale_after, now=now, owner=owner,
                            held=run.status == RunState.RUNNING, where=(Run.status == run.status,),
                            status=RunState.RUNNING, started_at=run.started_at or now, stop_reason=None,
                            cancel_requested_by=run.cancel_requested_by if run.status == RunState.RUNNING else None)
        session.commit()
        return claimed

def interrupt_run(store: Store, run_id: int, *, owner: str) -> bool:
    """Mark paused, as interrupted, a run that process `owner` stopped before judging it (still pending) or while
    judging it (running, held by `owner`); False when it is in another state (paused or over already, or held by
    another process)."""
    ours = or_(col(Run.status) == RunState.PENDING, and_(col(Run.status) == RunState.RUNNING, col(Run.owner) == owner))
    with store.session() as session:
        result = cast(CursorResult[Any], session.execute(update(Run).where(col(Run.id) == run_id, ours).values(
            status=RunState.PAUSED, stop_reason=INTERRUPTED, owner=None, finished_at=utcnow())))
        session.commit()
        return result.rowcount == 1

def beat_run(store: Store, run_id: int, owner: str) -> bool:
    """Record that `owner` is alive and judging the run; False when another process has taken it over."""
    return update_run(store, run_id, held_by=owner, heartbeat_at=utcnow())
