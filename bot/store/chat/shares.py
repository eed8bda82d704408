"""Files shared in chat: claimed once, moved through their lifecycle by one table of moves, found again by thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import ColumnElement, or_, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from bot.errors import IllegalMove
from bot.records import ShareState
from bot.store.clock import utcnow
from bot.store.processes.leases import take_over
from bot.store.tables.chat import SharedFile
from bot.store.tables.core import JUDGMENT, RUN
from bot.store.tables.history import table_of

if TYPE_CHECKING:
    from bot.store.database import Store

S = ShareState
# The lifecycle of a shared file: each state, and the states it may move to. Every move goes through this
# table; a move it does not list is a bug, raised as IllegalMove rather than written.
MOVES: dict[ShareState, frozenset[ShareState]] = {
    S.RECEIVED: frozenset({S.ASKING, S.CONFIRM, S.LOADING, S.REFUSED, S.SKIPPED}),
    S.ASKING: frozenset({S.RECEIVED, S.REFUSED}),  # a rubric was picked: judged as if just received
    S.CONFIRM: frozenset({S.RECEIVED, S.SKIPPED, S.REFUSED}),  # Run again, or Don't
    # a restart takes a loading file up again; its rubric may be gone by then (ask again)
    S.LOADING: frozenset({S.LOADING, S.ASKING, S.RUNNING, S.REFUSED}),
    S.RUNNING: frozenset({S.PAUSED, S.FINISHING, S.REFUSED}),
    S.PAUSED: frozenset({S.RUNNING, S.FINISHING}),  # Resume, or Finish here
    # a restart finishes what an earlier life began; a rubric changed meanwhile refuses it
    S.FINISHING: frozenset({S.FINISHING, S.DONE, S.FAILED, S.REFUSED}),
    S.DONE: frozenset(),
    S.FAILED: frozenset(),
    S.REFUSED: frozenset(),
    S.SKIPPED: frozenset(),
}
UNFINISHED = (S.RECEIVED, S.LOADING, S.RUNNING, S.FINISHING)  # what a restarted bot takes up by itself
SETTLED = (S.REFUSED, S.SKIPPED)  # shares that never became a run


def sources(to: ShareState) -> tuple[ShareState, ...]:
    """The states a share may move to `to` from."""
    return tuple(state for state, targets in MOVES.items() if to in targets)


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


def get_share(store: Store, *, share_id: int) -> SharedFile | None:
    """The shared file with `share_id`, if any."""
    with store.session() as session:
        return session.get(SharedFile, share_id)


def share_of_run(store: Store, *, run_id: int) -> SharedFile | None:
    """The shared file a run was started from, if any."""
    with store.session() as session:
        return session.exec(select(SharedFile).where(SharedFile.run_id == run_id)).first()


def move_share(store: Store, *, share_id: int, to: ShareState, expect: tuple[ShareState, ...] | None = None,
               **fields: Any) -> bool:
    """Move a shared file to state `to` (setting `fields` too), as the lifecycle allows.

    With `expect`, the move happens only from those states, and False says another move won the race (a
    second click). Without it, the move happens from wherever the share is, and a state the lifecycle does
    not allow leaving for `to` raises IllegalMove.
    """
    allowed = sources(to)
    chosen = [state for state in allowed if expect is None or state in expect]
    with store.session() as session:
        statement = (update(SharedFile).where(col(SharedFile.id) == share_id, col(SharedFile.state).in_(chosen))
                     .values(state=to, updated_at=utcnow(), **fields))
        result = cast(CursorResult[Any], session.execute(statement))
        session.commit()
        if result.rowcount == 1 or expect is not None:
            return result.rowcount == 1
        current = session.get(SharedFile, share_id)
    if current is None:
        return False
    raise IllegalMove(f"shared file {share_id} cannot move from {current.state} to {to}")


def update_share(store: Store, *, share_id: int, **fields: Any) -> None:
    """Set fields of a shared file other than its state (which only `move_share` changes)."""
    if "state" in fields:
        raise IllegalMove("a shared file's state changes through move_share")
    with store.session() as session:
        session.execute(update(SharedFile).where(col(SharedFile.id) == share_id).values(updated_at=utcnow(), **fields))
        session.commit()


def unfinished_shares(store: Store) -> list[SharedFile]:
    """Shared files whose run a stopped process left half way, oldest first."""
    with store.session() as session:
        return list(session.exec(select(SharedFile).where(col(SharedFile.state).in_(UNFINISHED)).order_by(col(SharedFile.id))))


def earlier_share(store: Store, *, share: SharedFile) -> SharedFile | None:
    """An earlier share of the same file (same id, or same bytes) in the same thread, judged or on its way."""
    same: ColumnElement[bool] = col(SharedFile.file_id) == share.file_id
    if share.sha256:
        same = or_(same, col(SharedFile.sha256) == share.sha256)
    with store.session() as session:
        statement = (
            select(SharedFile)
            .where(SharedFile.team_id == share.team_id, SharedFile.channel_id == share.channel_id,
                   SharedFile.thread_ts == share.thread_ts, SharedFile.id < share.id,
                   col(SharedFile.state).not_in(SETTLED), same)
            .order_by(col(SharedFile.id).desc())
        )
        return session.exec(statement.limit(1)).first()


def earlier_unread(store: Store, *, share: SharedFile) -> bool:
    """Whether an earlier share in the same thread is still being fetched: its bytes, maybe the same, are unknown."""
    with store.session() as session:
        statement = (
            select(SharedFile.id)
            .where(SharedFile.team_id == share.team_id, SharedFile.channel_id == share.channel_id,
                   SharedFile.thread_ts == share.thread_ts, SharedFile.id < share.id,
                   SharedFile.state == ShareState.RECEIVED, col(SharedFile.sha256).is_(None))
        )
        return session.exec(statement.limit(1)).first() is not None


def thread_rubric(store: Store, *, channel_id: str, thread_ts: str) -> str | None:
    """The rubric of the thread: that of the card it hangs under, else of the latest run started in it."""
    with store.session() as session:
        card = session.exec(
            select(JUDGMENT.c.rubric_name)
            .where(JUDGMENT.c.channel_id == channel_id, JUDGMENT.c.message_ts == thread_ts)
            .order_by(JUDGMENT.c.id.desc()).limit(1)
        ).first()
        if card is not None:
            return card
        return session.exec(
            select(RUN.c.rubric_name).where(RUN.c.channel_id == channel_id, RUN.c.thread_ts == thread_ts)
            .order_by(RUN.c.id.desc()).limit(1)
        ).first()


def take_share(store: Store, *, share: SharedFile, stale_after: float) -> bool:
    """Make this process the one handling `share`, unless a live process handles it.

    Succeeds only if the share is unchanged since it was read, so of two processes taking it one wins.
    """
    with store.session() as session:
        taken = take_over(session, table_of(SharedFile), share, seen="updated_at", stale_after=stale_after, now=utcnow(),
                          where=(SharedFile.state == share.state, SharedFile.updated_at == share.updated_at))
        session.commit()
        return taken
