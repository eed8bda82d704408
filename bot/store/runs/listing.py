"""The recent runs as lists show them, read over SQLAlchemy Core: `judgebot runs` loads no ORM class."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.records import COST_NOT_AGREED, STALE_AFTER, RunState
from bot.store.processes.leases import owner_gone
from bot.store.tables.core import RUN

if TYPE_CHECKING:
    from bot.store.database import Store


@dataclass(frozen=True)
class ListedRun:
    """A run as a list shows it."""

    id: int
    created_at: datetime
    status: str
    stop_reason: str | None
    rubric_name: str
    rubric_version: str
    judge_model: str
    total_rows: int
    source: str
    source_name: str | None
    model_name: str | None


def gone_while_running(status: str, owner: str | None, heartbeat_at: datetime | None, now: datetime) -> bool:
    """Whether a run is shown as interrupted: it is running, and the process judging it is gone."""
    return status == RunState.RUNNING and owner_gone(owner, heartbeat_at, now, STALE_AFTER)


SHOWN_INTERRUPTED, PROCESS_GONE = "interrupted", "its process is gone"  # such a run's status and reason, as lists show them


def never_started(status: Any, stop_reason: Any) -> Any:
    """SQL: a run cancelled because its cost was not agreed to (nothing of it was judged: lists leave it out)."""
    return sa.and_(status == RunState.CANCELLED, stop_reason == COST_NOT_AGREED)


def listed_runs(store: Store, limit: int, now: datetime) -> list[ListedRun]:
    """The `limit` newest runs, newest first, but those never started; one whose process is gone while it ran shown
    as interrupted (at `now`)."""
    fields = [RUN.c[name] for name in ListedRun.__dataclass_fields__]
    statement = (sa.select(*fields, RUN.c.owner, RUN.c.heartbeat_at)
                 .where(~never_started(RUN.c.status, RUN.c.stop_reason)).order_by(RUN.c.id.desc()).limit(limit))
    with store.engine.connect() as conn:
        rows = conn.execute(statement).all()
    listed = []
    for row in rows:
        run = ListedRun(**{name: row._mapping[name] for name in ListedRun.__dataclass_fields__})
        if gone_while_running(run.status, row.owner, row.heartbeat_at, now):
            run = replace(run, status=SHOWN_INTERRUPTED, stop_reason=PROCESS_GONE)
        listed.append(run)
    return listed
