"""The background responses of a run: each slot saved before its request is created, its response id saved as soon
as the endpoint gives it, and ended with the response's last status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.store.clock import utcnow
from bot.store.tables.core import RUN_BACKGROUND

if TYPE_CHECKING:
    from bot.store.database import Store
    from bot.store.tables.background import RunBackground

SENDING, ASKED, OVER = "sending", "sent", "ended"
OPEN_BACKGROUND = (SENDING, ASKED)


def add_background(store: Store, *, run_id: int, slot: tuple[int, int, int], window: str, boundary: str) -> RunBackground:
    """Save a slot about to be asked in the background, before its request is created: from here on it belongs to
    this request (a restart that finds it without a response id may have created it, and says so)."""
    from bot.store.tables.background import RunBackground  # the table model: only for the instance this returns

    judgment_id, judge_index, sample = slot
    with store.session() as session:
        asked = RunBackground(run_id=run_id, judgment_id=judgment_id, judge_index=judge_index, sample=sample,
                              completion_window=window, boundary=boundary, state=SENDING)
        session.add(asked)
        session.commit()
        session.refresh(asked)
        return asked


def update_background(store: Store, background_id: int, **fields: Any) -> None:
    """Record what became known of a background request: its response id (then it is `sent`), its status, or its end
    (`state` ended, with the error that left its row pending, if any)."""
    values = dict(fields)
    if fields.get("response_id") is not None and "state" not in fields:
        values["state"] = ASKED
    if fields.get("state") == OVER:
        values["ended_at"] = utcnow()
    if not values:  # nothing became known
        return
    with store.engine.begin() as conn:
        conn.execute(sa.update(RUN_BACKGROUND).where(RUN_BACKGROUND.c.id == background_id).values(values))


def open_backgrounds(store: Store, run_id: int) -> list[RunBackground]:
    """The run's background requests not ended yet (saved, maybe created; or created and waited for), oldest first."""
    from sqlmodel import col, select  # the ORM and the table model: only for the model instances this returns

    from bot.store.tables.background import RunBackground

    with store.session() as session:
        return list(session.exec(select(RunBackground).where(RunBackground.run_id == run_id,
                                                             col(RunBackground.state).in_(OPEN_BACKGROUND))
                                 .order_by(col(RunBackground.id))))


def background_window(store: Store, run_id: int) -> str | None:
    """The completion window the run's rows were asked in the background with (its latest request's), or None for a
    run never asked in the background."""
    table = RUN_BACKGROUND.c
    with store.engine.connect() as conn:
        return conn.execute(sa.select(table.completion_window).where(table.run_id == run_id)
                            .order_by(table.id.desc()).limit(1)).scalar()
