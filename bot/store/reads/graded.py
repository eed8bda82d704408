"""Verdicts read for a comparison, one per case: a run's rows, or the standing verdicts of a channel's history."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.records import JUDGED, RowState
from bot.store.counts.counting import standing
from bot.store.tables.core import JUDGMENT

if TYPE_CHECKING:
    from bot.store.database import Store

COLUMNS = ("id", "status", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "question", "reference",
           "answer", "headline", "passed", "tag", "model_name", "case_hash")
STATUS, CASE = COLUMNS.index("status"), COLUMNS.index("case_hash")


def graded_answers(store: Store, *, run_id: int | None = None, channel_id: str | None = None,
                   model: str | None = None, since: datetime | None = None,
                   rubric_name: str | None = None) -> list[Any]:
    """The verdicts of single answers a comparison reads (scored, or a judge's failure: invalid, error), one per
    case (bot.store.counts.counting), oldest first: rows of COLUMNS, in that order.

    Of one run: its rows, a case its file holds more than once counted once (its last scored row, else its last
    row). Else of a channel's history (None: the terminal's): each case's standing verdict, so re-reads from the
    cache and re-runs replace and never add. Of one model under test and one rubric when named, judged since
    `since`. Pairs (a pairwise judge's rows) are left out.
    """
    table = JUDGMENT
    where: list[Any] = [table.c.status.in_(JUDGED), table.c.answer_b.is_(None)]
    if run_id is not None:
        where.append(table.c.run_id == run_id)
        if model is not None:  # the run's (run_id, model_name, status) index
            where.append(table.c.model_name == model)
    else:
        where += [table.c.channel_id.is_not_distinct_from(channel_id), standing(table.c.replaced_at, None)]
        if model is not None:  # read by the channel's standing verdicts (a few thousand), not by the model's index
            # (every answer the model ever gave, in every channel: without statistics SQLite took it, 30x slower)
            where.append(table.c.model_name.op("||")("") == model)
    if since is not None:
        where.append(table.c.judged_at >= since)
    if rubric_name is not None:
        where.append(table.c.rubric_name == rubric_name)
    with store.engine.connect() as conn:
        # Put in order here, not by ORDER BY id: that made SQLite walk the model's index over the whole history (its
        # rows come in id order) rather than the run's (run_id, model_name, status) index, 25x slower on a million.
        rows = conn.execute(sa.select(*(table.c[name] for name in COLUMNS)).where(*where)).all()
    return once_per_case(sorted(rows, key=_first))


def once_per_case(rows: list[Any]) -> list[Any]:
    """Each case's row that counts, in the order given (by id): its last scored row, else its last row (a judge's
    failure never takes a score's place)."""
    kept: dict[Any, Any] = {}
    for row in rows:  # by position (COLUMNS): a row's attributes cost more than the rest of reading it
        case = row[CASE] or row[0]
        if case not in kept or row[STATUS] == RowState.SCORED or kept[case][STATUS] != RowState.SCORED:
            kept[case] = row
    return sorted(kept.values(), key=_first)


def _first(row: Any) -> Any:
    return row[0]
