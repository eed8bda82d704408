"""What the bot remembers between requests: the model under test each person named last, each channel's rubric and
samples."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlmodel import select

from bot.store.upserts import upsert

if TYPE_CHECKING:
    from bot.store.database import Store
from bot.store.clock import utcnow
from bot.store.tables.chat import ChannelSetting, UserSetting


def remembered_model(store: Store, *, team_id: str, user_id: str) -> str | None:
    """The model under test this person named last."""
    with store.session() as session:
        setting = session.exec(select(UserSetting).where(
            UserSetting.team_id == team_id, UserSetting.user_id == user_id)).first()
        return setting.model_name if setting else None


def remember_model(store: Store, *, team_id: str, user_id: str, model_name: str | None) -> None:
    """Keep the model under test this person named, for the next time."""
    upsert(store, UserSetting, {"team_id": team_id, "user_id": user_id},
                 {"model_name": model_name, "updated_at": utcnow()})


def default_rubric(store: Store, *, team_id: str, channel_id: str) -> str | None:
    """The rubric a channel judges shared files with when nothing else names one."""
    with store.session() as session:
        return session.exec(select(ChannelSetting.default_rubric).where(
            ChannelSetting.team_id == team_id, ChannelSetting.channel_id == channel_id)).first()


def set_default_rubric(store: Store, *, team_id: str, channel_id: str, rubric_name: str | None, user_id: str) -> None:
    """Set (or, with None, clear) the channel's default rubric."""
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"default_rubric": rubric_name, "updated_by": user_id, "updated_at": utcnow()})


def default_samples(store: Store, *, team_id: str, channel_id: str) -> int | None:
    """How many times a row judged in a channel is judged, when the channel says."""
    with store.session() as session:
        return session.exec(select(ChannelSetting.default_samples).where(
            ChannelSetting.team_id == team_id, ChannelSetting.channel_id == channel_id)).first()


def set_default_samples(store: Store, *, team_id: str, channel_id: str, samples: int | None, user_id: str) -> None:
    """Set (or, with None, clear) how many times a row judged in the channel is judged."""
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"default_samples": samples, "updated_by": user_id, "updated_at": utcnow()})


class CostLimits(BaseModel):
    """What a channel may spend: a monthly budget, and the estimate above which a shared file asks before it starts
    (None: the bot's CONFIRM_ABOVE_USD)."""

    monthly_budget: float | None = None
    confirm_above: float | None = None


def cost_limits(store: Store, *, team_id: str, channel_id: str) -> CostLimits:
    """The channel's budget and confirmation threshold, as set with `/judge budget`."""
    with store.session() as session:
        found = session.exec(select(ChannelSetting.monthly_budget, ChannelSetting.confirm_above).where(
            ChannelSetting.team_id == team_id, ChannelSetting.channel_id == channel_id)).first()
    return CostLimits(monthly_budget=found[0], confirm_above=found[1]) if found else CostLimits()


def set_cost_limits(store: Store, *, team_id: str, channel_id: str, user_id: str, **changes: float | None) -> None:
    """Set the channel's `monthly_budget` and/or `confirm_above` (None clears one)."""
    unknown = set(changes) - set(CostLimits.model_fields)
    if unknown:
        raise ValueError(f"not a cost limit: {', '.join(sorted(unknown))}")
    upsert(store, ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {**changes, "updated_by": user_id, "updated_at": utcnow()})
