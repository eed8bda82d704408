"""The latest judgments of a channel as `judgebot history` lists them: only the columns a list shows (the same rows as
bot.store.reads.channel.recent_in_channel, which returns whole judgment records)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.records import JUDGED
from bot.store.tables.core import JUDGMENT

if TYPE_CHECKING:
    from bot.store.database import Store


@dataclass(frozen=True)
class ListedJudgment:
    """A judgment as a list shows it."""

    id: int
    run_id: int
    created_at: datetime
    judged_at: datetime | None
    status: str
    rubric_name: str
    rubric_version: str
    judge_model: str
    model_name: str | None
    headline: float | None
    passed: bool | None
    label: str | None
    tag: str | None
    user_id: str | None
    question: str


def latest_in_channel(store: Store, *, channel_id: str | None, limit: int = 10) -> list[ListedJudgment]:
    """The newest judgments made in one channel (None: in a terminal), newest first: each case once, its latest
    verdict (one not replaced: bot.store.counts.counting.standing)."""
    j = JUDGMENT.c
    where = j.channel_id.is_(None) if channel_id is None else j.channel_id == channel_id
    names = list(ListedJudgment.__dataclass_fields__)
    statement = (sa.select(*(j[name] for name in names))
                 .where(where, j.status.in_(JUDGED), j.replaced_at.is_(None)).order_by(j.id.desc()).limit(limit))
    with store.engine.connect() as conn:
        return [ListedJudgment(*row) for row in conn.execute(statement)]
