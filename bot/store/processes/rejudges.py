"""A card judged again once, however many people click its Re-judge (or an error card's Retry) at once, on whichever
process: the first click's claim is inserted, the others find it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.processes.leases import owner_gone, process_name
from bot.store.tables.history import table_of
from bot.store.tables.processes import Rejudge

if TYPE_CHECKING:
    from bot.store.database import Store

STALE = 600.0  # seconds after which the claim of a process on another host that saved no run is taken over


def claim_rejudge(store: Store, *, judgment_id: int) -> Rejudge | None:
    """Claim judging the card of `judgment_id` again for this process; None when it is this process's to do, else
    the claim that holds it (its `run_id` once the run judging it again is saved).

    One INSERT ... ON CONFLICT DO NOTHING on the judgment's id: of any number of clicks at once, on SQLite or
    PostgreSQL, one gets the claim. A claim whose process is gone before it saved a run (a crash between the click
    and the run) is taken over; once its run is saved, the run is the card's, completed by whichever process recovers
    it.
    """
    table, me, now = table_of(Rejudge), process_name(), utcnow()
    insert = conflict_insert(store.engine.dialect.name)(table).values(judgment_id=judgment_id, owner=me,
                                                                      claimed_at=now)
    with store.engine.begin() as conn:
        for _ in range(2):  # a claim given up between the two statements is claimed again
            if conn.execute(insert.on_conflict_do_nothing(index_elements=[table.c.judgment_id])
                            .returning(table.c.judgment_id)).first() is not None:
                return None
            held = conn.execute(sa.select(table).where(table.c.judgment_id == judgment_id)).mappings().first()
            if held is not None:
                break
        else:  # given up and claimed again under our feet twice: some other click has it
            return Rejudge(judgment_id=judgment_id, owner="", claimed_at=now)
        if held["run_id"] is None and owner_gone(held["owner"], held["claimed_at"], now, STALE):
            taken = conn.execute(table.update().where(table.c.judgment_id == judgment_id,
                                                      table.c.owner == held["owner"], table.c.run_id.is_(None))
                                 .values(owner=me, claimed_at=now))
            if taken.rowcount == 1:
                return None
        return Rejudge.model_validate(dict(held))


def rejudge_saved(store: Store, *, judgment_id: int, run_id: int) -> None:
    """The run judging the card of `judgment_id` again is saved: the claim is kept with it, for good."""
    table = table_of(Rejudge)
    with store.engine.begin() as conn:
        conn.execute(table.update().where(table.c.judgment_id == judgment_id, table.c.owner == process_name())
                     .values(run_id=run_id))


def give_up_rejudge(store: Store, *, judgment_id: int) -> None:
    """Nothing was shown (refused, or the card could not be posted): this process's claim goes, and the next click
    may try again."""
    table = table_of(Rejudge)
    with store.engine.begin() as conn:
        conn.execute(table.delete().where(table.c.judgment_id == judgment_id, table.c.owner == process_name()))
