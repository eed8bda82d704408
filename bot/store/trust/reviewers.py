"""Who a channel's review queue asks, whether they label blind, when they are nudged, and the claim that sends each
reviewer's nudge of a day once."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlmodel import col, select

from bot.store.upserts import upsert

if TYPE_CHECKING:
    from bot.store.database import Store
from bot.store.clock import utcnow
from bot.store.processes.claims import Claim, claim, mark_sent, release, unanswered
from bot.store.tables.chat import ChannelSetting
from bot.store.tables.trust import ReviewNudge


class ReviewSetup(BaseModel):
    """A channel's review settings: reviewers (user ids, and user groups as S ids), blind review, and the local
    time of the weekday nudge (None: no nudge)."""

    team_id: str
    channel_id: str
    reviewers: list[str] = []
    blind: bool = False
    nudge_hour: int | None = None
    nudge_minute: int | None = None
    nudge_timezone: str | None = None
    nudge_set_at: datetime | None = None

    @property
    def nudges(self) -> bool:
        """Whether the channel's reviewers are nudged."""
        return self.nudge_timezone is not None and self.nudge_hour is not None and self.nudge_minute is not None


def _setup(row: ChannelSetting) -> ReviewSetup:
    return ReviewSetup(team_id=row.team_id, channel_id=row.channel_id, reviewers=list(row.reviewers or []),
                       blind=row.review_blind, nudge_hour=row.nudge_hour, nudge_minute=row.nudge_minute,
                       nudge_timezone=row.nudge_timezone, nudge_set_at=row.nudge_set_at)


def review_setup(store: Store, *, team_id: str, channel_id: str) -> ReviewSetup:
    """The channel's review settings (the defaults when it has none)."""
    with store.session() as session:
        row = session.exec(select(ChannelSetting).where(ChannelSetting.team_id == team_id,
                                                        ChannelSetting.channel_id == channel_id)).first()
    return _setup(row) if row is not None else ReviewSetup(team_id=team_id, channel_id=channel_id)


def set_reviewers(store: Store, *, team_id: str, channel_id: str, reviewers: list[str], user_id: str) -> None:
    """Who the channel's queue asks (an empty list: nobody in particular)."""
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"reviewers": reviewers or None, "updated_by": user_id, "updated_at": utcnow()})


def set_blind(store: Store, *, team_id: str, channel_id: str, blind: bool, user_id: str) -> None:
    """Whether reviewers see the judge's verdict only after saving their own label."""
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"review_blind": blind, "updated_by": user_id, "updated_at": utcnow()})


def set_nudge(store: Store, *, team_id: str, channel_id: str, hour: int | None, minute: int | None,
              timezone: str | None, user_id: str) -> ReviewSetup:
    """Nudge the channel's reviewers on weekdays at a local time (None: stop); the settings as saved."""
    now = utcnow()
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"nudge_hour": hour, "nudge_minute": minute, "nudge_timezone": timezone, "nudge_set_at": now,
                  "updated_by": user_id, "updated_at": now})
    return review_setup(store, team_id=team_id, channel_id=channel_id)


def nudged_channels(store: Store) -> list[ReviewSetup]:
    """Every channel whose reviewers are nudged."""
    with store.session() as session:
        rows = session.exec(select(ChannelSetting).where(col(ChannelSetting.nudge_timezone).is_not(None))
                            .order_by(col(ChannelSetting.id)))
        return [_setup(row) for row in rows]


def claim_nudge(store: Store, *, team_id: str, channel_id: str, user_id: str, day: str) -> Claim | None:
    """Claim the right to nudge a reviewer of a channel on a (local) day; None if another has it."""
    return claim(store, ReviewNudge, team_id=team_id, channel_id=channel_id, user_id=user_id, day=day)


def unanswered_nudge(store: Store, *, claim_id: int) -> None:
    """The nudge this process claimed was sent and got no answer: the next try looks for it first."""
    unanswered(store, ReviewNudge, claim_id=claim_id)


def release_nudge(store: Store, *, claim_id: int) -> None:
    """Give a nudge's claim up after Slack refused it, so that the next try can send it."""
    release(store, ReviewNudge, claim_id=claim_id)


def mark_nudged(store: Store, *, claim_id: int, message_ts: str) -> None:
    """Record that the nudge this process claimed was sent."""
    mark_sent(store, ReviewNudge, claim_id=claim_id, message_ts=message_ts)
