"""Graded answers read for a comparison: the scored judgments of a run, or of a model in a channel's history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.records import RowState
from bot.store.judgments import Store
from bot.store.models import Judgment, table_of

COLUMNS = ("id", "rubric_name", "question", "reference", "answer", "headline", "passed", "tag", "model_name")


def graded_answers(store: Store, *, run_id: int | None = None, channel_id: str | None = None,
                   model: str | None = None, since: datetime | None = None,
                   rubric_name: str | None = None) -> list[Any]:
    """Scored judgments (the columns a comparison reads), oldest first: of one run, else of a channel's history
    (None: the terminal's); of one model under test and one rubric when named, judged since `since`."""
    table = table_of(Judgment)
    where = [table.c.status == RowState.SCORED, table.c.headline.is_not(None)]
    if run_id is not None:
        where.append(table.c.run_id == run_id)
    else:
        where.append(table.c.channel_id.is_not_distinct_from(channel_id))
    if model is not None:
        where.append(table.c.model_name == model)
    if since is not None:
        where.append(table.c.judged_at >= since)
    if rubric_name is not None:
        where.append(table.c.rubric_name == rubric_name)
    with store.engine.connect() as conn:
        return list(conn.execute(sa.select(*(table.c[name] for name in COLUMNS)).where(*where).order_by(table.c.id)))
