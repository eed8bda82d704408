"""Files shared in chat and channel settings: claimed once, moved from state to state, found again by thread."""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from bot.store.judgments import Store
from bot.store.leases import owner_gone, process_name
from bot.store.models import ChannelSetting, Judgment, Run, SharedFile, utcnow

UNFINISHED = ("received", "loading", "running", "finishing")  # what a restarted bot takes up by itself
WAITING = ("asking", "confirm", "paused")  # what waits for a person to click


def claim_share(store: Store, **fields: Any) -> SharedFile | None:
    """Record a shared file; None when it was recorded already (Slack delivered the same share again)."""
    try:
        with store.session() as session:
            share = SharedFile(**fields)
            session.add(share)
            session.commit()
            return share
    except IntegrityError:
        return None


def get_share(store: Store, share_id: int) -> SharedFile | None:
    """The shared file with `share_id`, if any."""
    with store.session() as session:
        return session.get(SharedFile, share_id)


def share_of_run(store: Store, run_id: int) -> SharedFile | None:
    """The shared file a run was started from, if any."""
    with store.session() as session:
        return session.exec(select(SharedFile).where(SharedFile.run_id == run_id)).first()


def move_share(store: Store, share_id: int, *, expect: tuple[str, ...] | None = None, **fields: Any) -> bool:
    """Set fields of a shared file, only while its state is one of `expect` (when given); False if it was not."""
    statement = update(SharedFile).where(SharedFile.id == share_id)
    if expect is not None:
        statement = statement.where(SharedFile.state.in_(expect))
    with store.session() as session:
        result = session.execute(statement.values(updated_at=utcnow(), **fields))
        session.commit()
        return result.rowcount == 1


def unfinished_shares(store: Store) -> list[SharedFile]:
    """Shared files whose run a stopped process left half way, oldest first."""
    with store.session() as session:
        return list(session.exec(select(SharedFile).where(SharedFile.state.in_(UNFINISHED)).order_by(SharedFile.id)))


def earlier_share(store: Store, share: SharedFile) -> SharedFile | None:
    """An earlier share of the same file (same id, or same bytes) in the same thread, judged or on its way."""
    same = SharedFile.file_id == share.file_id
    if share.sha256:
        same = or_(same, SharedFile.sha256 == share.sha256)
    with store.session() as session:
        statement = (
            select(SharedFile)
            .where(SharedFile.team_id == share.team_id, SharedFile.channel_id == share.channel_id,
                   SharedFile.thread_ts == share.thread_ts, SharedFile.id < share.id,
                   SharedFile.state.not_in(("refused", "skipped")), same)
            .order_by(SharedFile.id.desc())
        )
        return session.exec(statement.limit(1)).first()


def thread_rubric(store: Store, channel_id: str, thread_ts: str) -> str | None:
    """The rubric of the thread: that of the card it hangs under, else of the latest run started in it."""
    with store.session() as session:
        card = session.exec(
            select(Judgment.rubric_name)
            .where(Judgment.channel_id == channel_id, Judgment.message_ts == thread_ts)
            .order_by(Judgment.id.desc()).limit(1)
        ).first()
        if card is not None:
            return card
        return session.exec(
            select(Run.rubric_name).where(Run.channel_id == channel_id, Run.thread_ts == thread_ts)
            .order_by(Run.id.desc()).limit(1)
        ).first()


def default_rubric(store: Store, team_id: str, channel_id: str) -> str | None:
    """The rubric a channel judges shared files with when nothing else names one."""
    with store.session() as session:
        return session.exec(select(ChannelSetting.default_rubric).where(
            ChannelSetting.team_id == team_id, ChannelSetting.channel_id == channel_id)).first()


def set_default_rubric(store: Store, team_id: str, channel_id: str, rubric_name: str | None, user_id: str) -> None:
    """Set (or, with None, clear) the channel's default rubric."""
    store.upsert(ChannelSetting, {"team_id": team_id, "channel_id": channel_id},
                 {"default_rubric": rubric_name, "updated_by": user_id, "updated_at": utcnow()})


def take_share(store: Store, share: SharedFile, *, stale_after: float, state: str | None = None) -> bool:
    """Make this process the one handling `share`, unless a live process handles it; optionally set its state.

    Succeeds only if the share is unchanged since it was read, so of two processes taking it one wins.
    """
    if share.owner and not owner_gone(share.owner, share.updated_at, utcnow(), stale_after):
        return False
    with store.session() as session:
        result = session.execute(
            update(SharedFile)
            .where(SharedFile.id == share.id, SharedFile.state == share.state,
                   SharedFile.owner.is_not_distinct_from(share.owner), SharedFile.updated_at == share.updated_at)
            .values(owner=process_name(), updated_at=utcnow(), state=state or share.state)
        )
        session.commit()
        return result.rowcount == 1
