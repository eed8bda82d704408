"""Each channel's own judge: every choice kept, with who made it, when and why; the newest is in force."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlmodel import col, select

from bot.store.clock import utcnow
from bot.store.tables.trust import ChannelJudge

if TYPE_CHECKING:
    from bot.store.database import Store


def channel_judge(store: Store, *, team_id: str | None, channel_id: str) -> ChannelJudge | None:
    """The choice in force in a channel (its `judge_model` None: back to the configured judge), or None if never set;
    `team_id` None (the terminal, which names a channel by its id alone): of any workspace."""
    statement = select(ChannelJudge).where(ChannelJudge.channel_id == channel_id)
    if team_id is not None:
        statement = statement.where(ChannelJudge.team_id == team_id)
    with store.session() as session:
        return session.exec(statement.order_by(col(ChannelJudge.set_at).desc(), col(ChannelJudge.id).desc())
                            .limit(1)).first()


def judge_of_channel(store: Store, *, team_id: str | None, channel_id: str | None) -> str | None:
    """The judge model a channel chose, or None: the configured judge judges there (and in the terminal)."""
    if channel_id is None:
        return None
    choice = channel_judge(store, team_id=team_id, channel_id=channel_id)
    return None if choice is None else choice.judge_model


def set_channel_judge(store: Store, *, team_id: str, channel_id: str, judge_model: str | None, user_id: str,
                      note: str | None = None, effort: str | None = None) -> ChannelJudge:
    """Record a channel's new judge (None: back to the configured one) and the reasoning effort it is asked at, who
    chose it and why; the record made."""
    before = judge_of_channel(store, team_id=team_id, channel_id=channel_id)
    choice = ChannelJudge(team_id=team_id, channel_id=channel_id, judge_model=judge_model, previous=before,
                          reasoning_effort=effort if judge_model else None, set_by=user_id, set_at=utcnow(), note=note)
    with store.session() as session:
        session.add(choice)
        session.commit()
        session.refresh(choice)
        return choice


def judge_choices(store: Store, *, channel_id: str | None, since: datetime, until: datetime) -> list[ChannelJudge]:
    """The judge choices made in a channel between `since` and `until` (naive UTC), oldest first."""
    if channel_id is None:
        return []
    with store.session() as session:
        return list(session.exec(select(ChannelJudge).where(
            ChannelJudge.channel_id == channel_id, col(ChannelJudge.set_at) >= since, col(ChannelJudge.set_at) < until)
            .order_by(col(ChannelJudge.set_at), col(ChannelJudge.id))))
