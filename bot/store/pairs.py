"""Pairs of answers judged pairwise, read back for a period's win rates: every order of each pair judged in it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.records import JUDGED
from bot.store.judgments import Store
from bot.store.models import Judgment, table_of

COLUMNS = ("id", "run_id", "row_number", "question", "model_name", "model_b", "swapped", "status", "output")


def judged_pairs(store: Store, *, channel_key: str, since: datetime, until: datetime) -> list[Any]:
    """The judged orders of the pairs of a channel key (where pairwise runs keep their judgments, `checks_of`) whose
    run judged some of them in [since, until): every order of those pairs, by run and line."""
    table = table_of(Judgment)
    runs = (sa.select(table.c.run_id).where(table.c.channel_id == channel_key, table.c.swapped.is_not(None),
                                            table.c.judged_at >= since, table.c.judged_at < until)
            .distinct().scalar_subquery())
    with store.engine.connect() as conn:
        return list(conn.execute(
            sa.select(*(table.c[name] for name in COLUMNS))
            .where(table.c.run_id.in_(runs), table.c.swapped.is_not(None), table.c.status.in_(JUDGED))
            .order_by(table.c.run_id, table.c.row_number, table.c.id)))
