"""A run's pending rows claimed in groups by the processes judging it together: each row by one process at a time,
claims that lapse with their process, and what the others did meanwhile.

A claim names its process (host:pid:incarnation) and when it last showed life. A process refreshes its claims with
its heartbeat; a claim lapses once its process is gone: at once when a dead pid of this host held it, and after
CLAIM_STALE seconds without a refresh from another host. PostgreSQL hands each group out with FOR UPDATE SKIP LOCKED,
so two processes claiming at once get different rows; SQLite takes one writer at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.engine import Connection

from bot.records import RowState, RunState, Triple
from bot.store.clock import utcnow
from bot.store.processes.leases import owner_gone
from bot.store.runs.rows import triple_of
from bot.store.tables.as_read import Run
from bot.store.tables.core import JUDGMENT, RUN, RUN_BATCH

if TYPE_CHECKING:
    from bot.store.database import Store

CLAIM_STALE = 20.0  # seconds without a refresh after which another host's claim lapses
HELP_ABOVE = 100  # rows left to claim above which a run is worth another process's help


def _lapsed(conn: Connection, run_id: int, owner: str, now: datetime) -> list[str]:
    """The processes other than `owner` holding claims on the run's pending rows that are gone."""
    table = JUDGMENT
    held = conn.execute(select(table.c.claimed_by, func.max(table.c.claimed_at)).where(
        table.c.run_id == run_id, table.c.status == RowState.PENDING, table.c.claimed_by.is_not(None),
        table.c.claimed_by != owner).group_by(table.c.claimed_by))
    return [name for name, seen in held if owner_gone(name, seen, now, CLAIM_STALE)]


def claim_rows(store: Store, run_id: int, owner: str, *, limit: int, running_only: bool = False
               ) -> list[tuple[int, Triple]]:
    """Claim up to `limit` of the run's pending rows no live process holds, in row order, for `owner`; their ids and
    texts. With `running_only`, none unless the run is being judged (a process helping another stops with it).

    The processes holding claims are looked at only when free rows run short: a run's rows are read once each."""
    now = utcnow()
    with store.engine.begin() as conn:
        rows = _claim(conn, run_id, owner, limit, now, (), running_only)
        if len(rows) < limit and (gone := _lapsed(conn, run_id, owner, now)):
            rows += _claim(conn, run_id, owner, limit - len(rows), now, gone, running_only)
    return [(row.id, triple_of(row)) for row in sorted(rows, key=lambda row: row.id)]


def _claim(conn: Connection, run_id: int, owner: str, limit: int, now: datetime, gone: Sequence[str],
           running_only: bool) -> list[Any]:
    table, runs = JUDGMENT, RUN
    free = or_(table.c.claimed_by.is_(None), table.c.claimed_at < now - timedelta(seconds=CLAIM_STALE),
               table.c.claimed_by.in_(gone))
    chosen = (select(table.c.id).where(table.c.run_id == run_id, table.c.status == RowState.PENDING, free)
              .order_by(table.c.id).limit(limit).with_for_update(skip_locked=True))
    if running_only:
        chosen = chosen.where(select(runs.c.id).where(runs.c.id == run_id, runs.c.status == RunState.RUNNING).exists())
    return list(conn.execute(update(table).where(table.c.id.in_(chosen.scalar_subquery()))
                             .values(claimed_by=owner, claimed_at=now)
                             .returning(table.c.id, table.c.question, table.c.reference, table.c.answer,
                                        table.c.answer_b, table.c.swapped, table.c.context)))


def refresh_claims(store: Store, run_id: int, owner: str) -> int:
    """Show that `owner` still judges the rows it claimed (with its heartbeat); how many it holds."""
    table = JUDGMENT
    with store.engine.begin() as conn:
        return int(conn.execute(update(table).where(table.c.run_id == run_id, table.c.claimed_by == owner,
                                                    table.c.status == RowState.PENDING)
                                .values(claimed_at=utcnow())).rowcount)


def release_claims(store: Store, run_id: int, owner: str) -> int:
    """Give back the pending rows `owner` claimed but did not judge (a stop, a pause), for any process to take."""
    table = JUDGMENT
    with store.engine.begin() as conn:
        return int(conn.execute(update(table).where(table.c.run_id == run_id, table.c.claimed_by == owner,
                                                    table.c.status == RowState.PENDING)
                                .values(claimed_by=None, claimed_at=None)).rowcount)


def pending_elsewhere(store: Store, run_id: int, owner: str) -> int:
    """How many of the run's pending rows `owner` does not hold: claimed by others, or by no one."""
    table = JUDGMENT
    mine = and_(table.c.claimed_by.is_not(None), table.c.claimed_by == owner)
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).where(table.c.run_id == run_id,
                                                           table.c.status == RowState.PENDING, ~mine)).scalar_one())


def judged_elsewhere(store: Store, run_id: int, owner: str, since: datetime) -> tuple[int, int, float]:
    """The rows of the run other processes judged since `since`: (all of them, those that got no score, what they
    cost in USD)."""
    table = JUDGMENT
    unscored = func.sum(case((table.c.status.in_((RowState.ERROR, RowState.INVALID)), 1), else_=0))
    with store.engine.connect() as conn:
        done, errors, cost = conn.execute(select(func.count(), unscored, func.sum(table.c.cost_usd)).where(
            table.c.run_id == run_id, table.c.status != RowState.PENDING, table.c.judged_at >= since,
            table.c.claimed_by.is_not(None), table.c.claimed_by != owner)).one()
    return int(done or 0), int(errors or 0), float(cost or 0.0)


def runs_to_help(store: Store, owner: str, *, sources: Sequence[str], above: int = HELP_ABOVE,
                 limit: int = 10) -> list[Run]:
    """Runs from `sources` being judged live by another process that still have more than `above` rows no live
    process holds (one judgment's run, or the end of a file's, is not worth sharing), oldest first. A run through the
    Batch API is never among them: its pending rows wait in the provider's batches."""
    table, runs, batches = JUDGMENT, RUN, RUN_BATCH
    now = utcnow()
    free = or_(table.c.claimed_by.is_(None), table.c.claimed_at < now - timedelta(seconds=CLAIM_STALE))
    waiting = (select(table.c.id).where(table.c.run_id == runs.c.id, table.c.status == RowState.PENDING, free)
               .order_by(table.c.id).offset(above).limit(1).exists())
    batched = select(batches.c.id).where(batches.c.run_id == runs.c.id).exists()
    with store.engine.connect() as conn:
        return [Run.read(row) for row in conn.execute(
            select(runs).where(runs.c.status == RunState.RUNNING, runs.c.owner != owner, runs.c.source.in_(sources),
                               waiting, ~batched).order_by(runs.c.id).limit(limit))]


def request_cancel(store: Store, run_id: int, user: str) -> bool:
    """Ask whichever process holds the run to cancel it, for `user`; False when it is not being judged."""
    runs = RUN
    with store.engine.begin() as conn:
        asked = conn.execute(update(runs).where(runs.c.id == run_id, runs.c.status == RunState.RUNNING)
                             .values(cancel_requested_by=user[:32]))
        return bool(asked.rowcount)


def cancel_requested(store: Store, run_id: int) -> str | None:
    """Who asked to cancel the run while another process held it (None: nobody)."""
    runs = RUN
    with store.engine.connect() as conn:
        return conn.execute(select(runs.c.cancel_requested_by).where(runs.c.id == run_id)).scalar_one_or_none()
