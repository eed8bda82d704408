"""Workflow Builder steps being judged: kept with the step's token until completed, so that a process taking over
after a restart completes the step once its card's run is judged."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.upserts import upsert

if TYPE_CHECKING:
    from bot.store.database import Store
from bot.store.clock import utcnow
from bot.store.tables.history import table_of
from bot.store.tables.processes import WorkflowStep


def keep_step(store: Store, *, execution_id: str, team_id: str, channel_id: str, token: str,
              expires_at: datetime) -> None:
    """A step started: kept until it is completed, failed or its token lapses (kept once, if Slack sends it again)."""
    upsert(store, WorkflowStep, {"execution_id": execution_id},
                 {"team_id": team_id[:32], "channel_id": channel_id[:32], "token": token[:255],
                  "expires_at": expires_at})


def step_run(store: Store, execution_id: str, run_id: int) -> None:
    """The run that judges the step (its card's)."""
    table = table_of(WorkflowStep)
    with store.engine.begin() as conn:
        conn.execute(table.update().where(table.c.execution_id == execution_id).values(run_id=run_id))


def drop_step(store: Store, execution_id: str) -> bool:
    """Claim the step to end it: its token is forgotten. False when another process claimed it first."""
    table = table_of(WorkflowStep)
    with store.engine.begin() as conn:
        return conn.execute(table.delete().where(table.c.execution_id == execution_id)).rowcount == 1


def waiting_steps(store: Store, *, now: datetime | None = None) -> list[WorkflowStep]:
    """The steps not ended yet whose token is still good (the lapsed ones are deleted), oldest first."""
    table = table_of(WorkflowStep)
    now = now or utcnow()
    with store.engine.begin() as conn:
        conn.execute(table.delete().where(table.c.expires_at <= now))
        rows = conn.execute(sa.select(table).order_by(table.c.created_at)).mappings().all()
    return [WorkflowStep.model_validate(dict(row)) for row in rows]
