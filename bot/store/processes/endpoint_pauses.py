"""The judge endpoints' pauses shared by the processes on one database: one that gets a 429 tells the others, which
hold their requests to that endpoint and model as long."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.processes.leases import process_name
from bot.store.tables.as_read import EndpointPause
from bot.store.tables.core import ENDPOINT_PAUSE

if TYPE_CHECKING:
    from bot.store.database import Store


def tell_pause(store: Store, *, endpoint: str, model: str, until: datetime, kind: str) -> None:
    """Record that `endpoint` refuses `model`'s requests until `until` (UTC); an end already later is kept."""
    table = ENDPOINT_PAUSE
    values = {"endpoint": endpoint[:255], "model": model[:128], "until": until, "kind": kind[:16],
              "told_by": process_name(), "updated_at": utcnow()}
    statement = conflict_insert(store.engine.dialect.name)(table).values(**values)
    later = {name: statement.excluded[name] for name in ("until", "kind", "told_by", "updated_at")}
    with store.engine.begin() as conn:
        conn.execute(statement.on_conflict_do_update(index_elements=[table.c.endpoint, table.c.model], set_=later,
                                                     where=table.c.until < statement.excluded.until))


def current_pauses(store: Store, *, now: datetime | None = None) -> list[EndpointPause]:
    """The pauses not over yet, told by any process."""
    table = ENDPOINT_PAUSE
    with store.engine.connect() as conn:
        return [EndpointPause.read(row) for row in conn.execute(sa.select(table).where(table.c.until > (now or utcnow())))]
