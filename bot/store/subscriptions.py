"""Weekly digest subscriptions, and the claim that lets one process post a channel's digest of a week, once."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import delete, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from bot.records import PostState
from bot.store.judgments import Store
from bot.store.leases import process_name, take_over
from bot.store.models import DigestPost, DigestSubscription, utcnow

STALE_CLAIM = 600.0  # seconds after which a claim of a process on another host that went quiet is taken over


def subscribe(store: Store, *, team_id: str, channel_id: str, weekday: int, hour: int, minute: int, timezone: str,
              user_id: str | None) -> DigestSubscription:
    """Turn a channel's digest on, or change when it is posted; return the subscription as saved."""
    keys = {"team_id": team_id, "channel_id": channel_id}
    store.upsert(DigestSubscription, keys, {"weekday": weekday, "hour": hour, "minute": minute, "timezone": timezone,
                                            "updated_by": user_id, "updated_at": utcnow()})
    found = subscription(store, team_id=team_id, channel_id=channel_id)
    assert found is not None  # just written
    return found


def unsubscribe(store: Store, *, team_id: str, channel_id: str) -> bool:
    """Turn a channel's digest off; False if it was not on."""
    with store.session() as session:
        statement = delete(DigestSubscription).where(col(DigestSubscription.team_id) == team_id,
                                                     col(DigestSubscription.channel_id) == channel_id)
        result = cast(CursorResult[Any], session.execute(statement))
        session.commit()
        return result.rowcount > 0


def subscription(store: Store, *, team_id: str, channel_id: str) -> DigestSubscription | None:
    """The digest subscription of one channel, if it has one."""
    with store.session() as session:
        return session.exec(select(DigestSubscription).where(DigestSubscription.team_id == team_id,
                                                             DigestSubscription.channel_id == channel_id)).first()


def all_subscriptions(store: Store) -> list[DigestSubscription]:
    """Every channel's subscription."""
    with store.session() as session:
        return list(session.exec(select(DigestSubscription).order_by(col(DigestSubscription.id))))


def claim_week(store: Store, *, team_id: str | None, channel_id: str, week: str) -> int | None:
    """Claim the right to post a channel's digest of `week`; the claim's id, or None if another has it.

    A claim left in "posting" by a process that is gone (it died before it could post or give the claim
    up) is taken over.
    """
    try:
        with store.session() as session:
            claim = DigestPost(team_id=team_id, channel_id=channel_id, week=week, owner=process_name())
            session.add(claim)
            session.commit()
            return claim.id
    except IntegrityError:
        pass
    with store.session() as session:
        held = session.exec(select(DigestPost).where(DigestPost.channel_id == channel_id,
                                                     DigestPost.week == week)).first()
        if held is None or held.state != PostState.POSTING:
            return None
        taken = take_over(session, DigestPost, held, seen="claimed_at", stale_after=STALE_CLAIM, now=utcnow(),
                          where=(DigestPost.state == PostState.POSTING,))
        session.commit()
        return held.id if taken else None


def release_week(store: Store, *, claim_id: int) -> None:
    """Give this process's claim up after a failed post, so the digest can be posted by the next try."""
    with store.session() as session:
        session.execute(delete(DigestPost).where(col(DigestPost.id) == claim_id, col(DigestPost.state) == PostState.POSTING,
                                                 col(DigestPost.owner) == process_name()))
        session.commit()


def mark_posted(store: Store, *, claim_id: int, message_ts: str) -> None:
    """Record that the digest this process claimed is in the channel."""
    with store.session() as session:
        session.execute(update(DigestPost).where(col(DigestPost.id) == claim_id, col(DigestPost.owner) == process_name())
                        .values(state=PostState.POSTED, posted_at=utcnow(), message_ts=message_ts))
        session.commit()


def week_taken(store: Store, *, channel_id: str, week: str) -> bool:
    """Whether the channel's weekly digest of ISO week `week` is posted, or being posted."""
    with store.session() as session:
        return session.exec(select(DigestPost.id).where(DigestPost.channel_id == channel_id,
                                                        DigestPost.week == week)).first() is not None


def last_posted(store: Store, *, channel_id: str) -> DigestPost | None:
    """The channel's latest posted weekly digest, if any."""
    with store.session() as session:
        return session.exec(select(DigestPost).where(DigestPost.channel_id == channel_id,
                                                     DigestPost.state == PostState.POSTED)
                            .order_by(col(DigestPost.posted_at).desc()).limit(1)).first()

