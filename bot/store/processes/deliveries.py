"""Slack's deliveries, recorded once across every process on the database, and forgotten in batches once old."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.processes.leases import process_name
from bot.store.tables.chat import SlackDelivery
from bot.store.tables.history import table_of

if TYPE_CHECKING:
    from bot.store.database import Store

FORGET_BATCH = 1000  # rows deleted in one transaction: a long backlog never holds the write lock for long


def record_delivery(store: Store, *, key: str, kind: str, now: datetime | None = None) -> bool:
    """Record the delivery `key`; True if this call recorded it (process it), False if it was recorded before, by
    this process or any other (a repeat: drop it).

    One INSERT ... ON CONFLICT DO NOTHING RETURNING on the unique key: two processes recording the same key at once get one
    True between them, on SQLite and PostgreSQL alike, without reading first.
    """
    table = table_of(SlackDelivery)
    statement = conflict_insert(store.engine.dialect.name)(table).values(
        key=key, kind=kind[:32], owner=process_name(), received_at=now or utcnow())
    with store.engine.begin() as conn:
        taken = conn.execute(statement.on_conflict_do_nothing(index_elements=[table.c.key]).returning(table.c.key))
        return taken.first() is not None  # RETURNING, as PostgreSQL's driver counts no rows of an upsert (-1)


def forget_deliveries(store: Store, *, before: datetime, batch: int = FORGET_BATCH) -> int:
    """Delete the deliveries received before `before`, `batch` rows a transaction; return how many went.

    On PostgreSQL each batch skips rows another process is deleting at the same moment (every bot process runs this
    clean-up), so two of them never wait on each other or deadlock; what one skips, the other deletes.
    """
    table, gone = table_of(SlackDelivery), 0
    while True:
        old = (sa.select(table.c.key).where(table.c.received_at < before).limit(batch)
               .with_for_update(skip_locked=True))  # SQLite has no FOR UPDATE: its write lock serialises the deletes
        with store.engine.begin() as conn:
            deleted = conn.execute(sa.delete(table).where(table.c.key.in_(old.scalar_subquery()))).rowcount
        gone += deleted
        if deleted < batch:
            return gone
