"""Weekly digest subscriptions, and the claim that lets one process post a channel's digest of a week, once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import delete
from sqlalchemy.engine import CursorResult
from sqlmodel import col, select

from bot.records import PostState
from bot.store.upserts import upsert

if TYPE_CHECKING:
    from bot.store.database import Store
from bot.store.clock import utcnow
from bot.store.processes.claims import Claim, claim, mark_sent, release, unanswered
from bot.store.tables.chat import DigestPost, DigestSubscription


def subscribe(store: Store, *, team_id: str, channel_id: str, weekday: int, hour: int, minute: int, timezone: str,
              user_id: str | None) -> DigestSubscription:
    """Turn a channel's digest on, or change when it is posted; return the subscription as saved."""
    keys = {"team_id": team_id, "channel_id": channel_id}
    upsert(store, DigestSubscription, keys, {"weekday": weekday, "hour": hour, "minute": minute, "timezone": timezone,
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


def claim_week(store: Store, *, team_id: str | None, channel_id: str, week: str) -> Claim | None:
    """Claim the right to post a channel's digest of `week`; None if another has it."""
    return claim(store, DigestPost, team_id=team_id, channel_id=channel_id, week=week)


def unanswered_week(store: Store, *, claim_id: int) -> None:
    """The digest this process claimed was sent and got no answer: the next try looks for it first."""
    unanswered(store, DigestPost, claim_id=claim_id)


def release_week(store: Store, *, claim_id: int) -> None:
    """Give this process's claim up after a failed post, so the digest can be posted by the next try."""
    release(store, DigestPost, claim_id=claim_id)


def mark_posted(store: Store, *, claim_id: int, message_ts: str) -> None:
    """Record that the digest this process claimed is in the channel."""
    mark_sent(store, DigestPost, claim_id=claim_id, message_ts=message_ts)


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

