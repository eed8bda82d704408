"""Runs left loading by a process that is gone, failed when the history is opened (over SQLAlchemy Core: opening the
history loads no ORM class)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.records import RunState
from bot.store.clock import utcnow
from bot.store.processes.leases import owner_gone
from bot.store.tables.core import JUDGMENT, RUN

if TYPE_CHECKING:
    from bot.store.database import Store

LOADING_STALE_AFTER = 120.0  # seconds without a batch of rows after which another host's loading run is abandoned
ABANDONED_LOAD = "its process stopped while its rows were loading"


def fail_abandoned_loads(store: Store) -> list[int]:
    """Mark failed each run left loading by a process that is gone, dropping its half-loaded rows; their ids.

    Such a run can never be judged (its file was not read to the end), so its rows, all without a verdict,
    are not kept as if it could. A live process loading a run beats its heartbeat at every batch of rows.
    """
    now, failed = utcnow(), []
    with store.engine.begin() as conn:
        loading = conn.execute(sa.select(RUN.c.id, RUN.c.owner, RUN.c.heartbeat_at, RUN.c.created_at)
                               .where(RUN.c.status == RunState.LOADING)).all()
        for run in loading:
            if not owner_gone(run.owner, run.heartbeat_at or run.created_at, now, LOADING_STALE_AFTER):
                continue
            unchanged = (RUN.c.id == run.id, RUN.c.status == RunState.LOADING,
                         RUN.c.owner.is_not_distinct_from(run.owner))
            result = conn.execute(sa.update(RUN).where(*unchanged).values(
                status=RunState.FAILED, owner=None, finished_at=now, stop_reason=ABANDONED_LOAD))
            if result.rowcount == 1:
                conn.execute(sa.delete(JUDGMENT).where(JUDGMENT.c.run_id == run.id))
                failed.append(run.id)
    return failed
