"""The shutdown dates the judge endpoints' model lists gave, shared by the processes on one database: the list is
read once a day per endpoint, by whichever process asks first, and kept across restarts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.connections import conflict_insert
from bot.store.tables.core import LISTED_SHUTDOWN, MODEL_LIST_READ

if TYPE_CHECKING:
    from bot.store.database import Store


@dataclass(frozen=True)
class ListRead:
    """When an endpoint's model list was last read (naive UTC), and the shutdown dates it gave then, by model."""

    read_at: datetime
    dates: dict[str, date]


def listed_shutdowns(store: Store, endpoints: Iterable[str] | None = None) -> dict[str, ListRead]:
    """What each endpoint's model list gave when last read, by endpoint: of `endpoints` (None: every endpoint read);
    an endpoint never read is not there."""
    reads, listed = MODEL_LIST_READ, LISTED_SHUTDOWN
    which = None if endpoints is None else [endpoint[:255] for endpoint in endpoints]
    with store.engine.connect() as conn:
        asked = sa.select(reads.c.endpoint, reads.c.read_at)
        found = {row.endpoint: ListRead(row.read_at, {}) for row in conn.execute(
            asked if which is None else asked.where(reads.c.endpoint.in_(which)))}
        if found:
            dated = sa.select(listed.c.endpoint, listed.c.model, listed.c.shutdown_date)
            for row in conn.execute(dated.where(listed.c.endpoint.in_(list(found)))):
                found[row.endpoint].dates[row.model] = row.shutdown_date
        return found


def keep_listed_shutdowns(store: Store, endpoint: str, dates: dict[str, date], read_at: datetime) -> None:
    """Keep what `endpoint`'s model list gave at `read_at` (naive UTC; {} for nothing) in place of an older read; a
    newer read another process kept stands."""
    reads, listed = MODEL_LIST_READ, LISTED_SHUTDOWN
    key = endpoint[:255]
    statement = conflict_insert(store.engine.dialect.name)(reads).values(endpoint=key, read_at=read_at)
    with store.engine.begin() as conn:
        kept = conn.execute(statement.on_conflict_do_update(
            index_elements=[reads.c.endpoint], set_={"read_at": statement.excluded.read_at},
            where=reads.c.read_at < statement.excluded.read_at).returning(reads.c.endpoint)).first()
        if kept is None:  # another process read it later
            return
        conn.execute(sa.delete(listed).where(listed.c.endpoint == key))
        if dates:
            conn.execute(sa.insert(listed), [{"endpoint": key, "model": model[:128], "shutdown_date": when,
                                              "read_at": read_at} for model, when in dates.items()])
