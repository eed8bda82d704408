"""The cases waiting in a review queue as `judgebot review` lists them, read over SQLAlchemy Core: the command loads
no ORM class (the same rows as bot.store.trust.review.open_cases, which returns the case models)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.records import ANY_TEAM, OPEN
from bot.store.reads.latest import ListedJudgment
from bot.store.tables.core import JUDGMENT, REVIEW_CASE

if TYPE_CHECKING:
    from bot.store.database import Store



@dataclass(frozen=True)
class WaitingCase:
    """A case as the list of a queue shows it."""

    id: int
    created_at: datetime
    reason: str
    random: bool
    rubric_name: str


def waiting_cases(store: Store, *, team_id: str | None, channel_id: str | None,
                  limit: int = 100) -> list[tuple[WaitingCase, ListedJudgment]]:
    """The channel's open cases, oldest first, with the verdicts that queued them."""
    c, j = REVIEW_CASE.c, JUDGMENT.c
    case_names = [field.name for field in fields(WaitingCase)]
    judgment_names = [field.name for field in fields(ListedJudgment)]
    team = [] if team_id == ANY_TEAM else [c.team_id.is_not_distinct_from(team_id)]
    statement = (sa.select(*(c[name] for name in case_names), *(j[name] for name in judgment_names))
                 .join_from(REVIEW_CASE, JUDGMENT, j.id == c.judgment_id)
                 .where(*team, c.channel_id.is_not_distinct_from(channel_id), c.state == OPEN)
                 .order_by(c.created_at, c.id).limit(limit))
    with store.engine.connect() as conn:
        rows = conn.execute(statement).all()
    split = len(case_names)
    return [(WaitingCase(*row[:split]), ListedJudgment(*row[split:])) for row in rows]
