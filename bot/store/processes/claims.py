"""Claims that let one process do a thing once however many processes try: a channel's digest of a week, a reviewer's
nudge of a day. Whoever inserts the claim first does it; a claim left by a process that is gone is taken over."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from bot.records import PostState
from bot.store.clock import utcnow
from bot.store.processes.leases import process_name, take_over
from bot.store.tables.history import table_of

if TYPE_CHECKING:  # the tables whose rows are claimed come with the callers that claim them
    from bot.store.database import Store
    from bot.store.tables.chat import DigestPost
    from bot.store.tables.trust import ReviewNudge

STALE_CLAIM = 600.0  # seconds after which a claim of a process on another host that went quiet is taken over

Claimed = type["DigestPost"] | type["ReviewNudge"]


@dataclass(frozen=True)
class Claim:
    """A claim this process holds; `earlier` is when an earlier try claimed it, when that try may have posted (its
    post got no answer, or its process died): the place it posts to is to be looked at first, from then on."""

    id: int
    earlier: datetime | None = None


def claim(store: Store, table: Claimed, **keys: Any) -> Claim | None:
    """Claim the thing `keys` name (the unique key of `table`, with the team); None if another has it. A claim left in
    "posting" by a process that is gone (it died before it could post or give the claim up), or in "unknown" (a post
    that got no answer), is taken over, and says since when its post may be there."""
    try:
        with store.session() as session:
            row = table(**keys, owner=process_name())
            session.add(row)
            session.commit()
            return Claim(row.id)
    except IntegrityError:
        pass
    unique = {name: value for name, value in keys.items() if name != "team_id"}
    with store.session() as session:
        held = cast("DigestPost | ReviewNudge | None", session.exec(select(table).filter_by(**unique)).first())
        if held is None or held.state not in (PostState.POSTING, PostState.UNKNOWN):
            return None
        earlier, unknown = held.claimed_at, held.state == PostState.UNKNOWN
        taken = take_over(session, table_of(table), held, seen="claimed_at", stale_after=STALE_CLAIM, now=utcnow(),
                          held=not unknown, where=(col(table.state) == held.state,), state=PostState.POSTING)
        session.commit()
        return Claim(held.id, earlier) if taken else None


def unanswered(store: Store, table: Claimed, *, claim_id: int) -> None:
    """This process's post got no answer (a timeout, a connection lost): it may be in the channel, so the next try
    takes the claim over and looks first."""
    with store.session() as session:
        session.execute(update(table).where(col(table.id) == claim_id, col(table.state) == PostState.POSTING,
                                            col(table.owner) == process_name()).values(state=PostState.UNKNOWN))
        session.commit()


def release(store: Store, table: Claimed, *, claim_id: int) -> None:
    """Give this process's claim up after a failed post, so that the next try can post."""
    with store.session() as session:
        session.execute(delete(table).where(col(table.id) == claim_id, col(table.state) == PostState.POSTING,
                                            col(table.owner) == process_name()))
        session.commit()


def mark_sent(store: Store, table: Claimed, *, claim_id: int, message_ts: str) -> None:
    """Record that what this process claimed is posted."""
    with store.session() as session:
        session.execute(update(table).where(col(table.id) == claim_id, col(table.owner) == process_name())
                        .values(state=PostState.POSTED, posted_at=utcnow(), message_ts=message_ts))
        session.commit()
