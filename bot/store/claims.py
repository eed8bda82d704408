"""Claims that let one process do a thing once however many processes try: a channel's digest of a week, a reviewer's
nudge of a day. Whoever inserts the claim first does it; a claim left by a process that is gone is taken over."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from bot.records import PostState
from bot.store.judgments import Store
from bot.store.leases import process_name, take_over
from bot.store.models import DigestPost, utcnow
from bot.store.models_trust import ReviewNudge

STALE_CLAIM = 600.0  # seconds after which a claim of a process on another host that went quiet is taken over

Claimed = type[DigestPost] | type[ReviewNudge]


def claim(store: Store, table: Claimed, **keys: Any) -> int | None:
    """Claim the thing `keys` name (the unique key of `table`, with the team); the claim's id, or None if another has
    it. A claim left in "posting" by a process that is gone (it died before it could post or give the claim up) is
    taken over."""
    try:
        with store.session() as session:
            row = table(**keys, owner=process_name())
            session.add(row)
            session.commit()
            return row.id
    except IntegrityError:
        pass
    unique = {name: value for name, value in keys.items() if name != "team_id"}
    with store.session() as session:
        held = cast(DigestPost | ReviewNudge | None, session.exec(select(table).filter_by(**unique)).first())
        if held is None or held.state != PostState.POSTING:
            return None
        taken = take_over(session, table, held, seen="claimed_at", stale_after=STALE_CLAIM, now=utcnow(),
                          where=(col(table.state) == PostState.POSTING,))
        session.commit()
        return held.id if taken else None


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
