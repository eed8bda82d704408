"""Pairs of answers judged pairwise, read back for a period's win rates, and what people said of them (each pair a
case of the review queue, its label a winner)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.records import JUDGED
from bot.store.counts.case_keys import case_key
from bot.store.counts.counting import standing
from bot.store.runs.rows import ID_CHUNK
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import JUDGMENT
from bot.store.tables.history import table_of
from bot.store.tables.trust import Label

if TYPE_CHECKING:
    from bot.store.database import Store

COLUMNS = ("id", "run_id", "row_number", "team_id", "channel_id", "rubric_name", "question", "reference", "answer",
           "answer_b", "model_name", "model_b", "swapped", "status", "output", "context")


@dataclass(frozen=True)
class PairRow:
    """One order of a pair as the figures read it, with the case the pair is."""

    id: int
    run_id: int
    row_number: int | None
    question: str
    model_name: str | None
    model_b: str | None
    swapped: bool | None
    status: str
    output: dict[str, Any] | None
    case_key: str


def pair_case(row: Any) -> str:
    """The case a pair's row is of: its texts in the file's order, in its channel (both orders are one case)."""
    return case_key(row.team_id, row.channel_id, row.rubric_name, row.question, row.reference, row.answer,
                    row.answer_b, row.context)


def judged_pairs(store: Store, *, channel_key: str, since: datetime, until: datetime) -> list[PairRow]:
    """The orders of pairs judged in [since, until) under a channel key (where pairwise runs keep their judgments,
    `checks_of`), each order of each pair once: its latest judgment there (bot.store.counts.counting), by run and line."""
    table = JUDGMENT
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(*(table.c[name] for name in COLUMNS))
                            .where(table.c.channel_id == channel_key, table.c.swapped.is_not(None),
                                   table.c.status.in_(JUDGED), table.c.judged_at >= since, table.c.judged_at < until,
                                   standing(table.c.replaced_at, until))
                            .order_by(table.c.run_id, table.c.row_number, table.c.id)).all()
    return [PairRow(row.id, row.run_id, row.row_number, row.question, row.model_name, row.model_b, row.swapped,
                    row.status, row.output, pair_case(row)) for row in rows]


def orders_of(store: Store, judgment: Judgment) -> list[Judgment]:
    """The judgments of a pair in each order it was shown (the pair of `judgment`: same run and line)."""
    j = JUDGMENT.c
    with store.engine.connect() as conn:
        return [Judgment.read(row) for row in conn.execute(
            sa.select(JUDGMENT).where(j.run_id == judgment.run_id, j.row_number == judgment.row_number,
                                      j.swapped.is_not(None)).order_by(j.id))]


def pair_labels(store: Store, keys: Iterable[str]) -> dict[str, list[str]]:
    """What people said of each of these pairs: the winner of each person's label (A, B or tie), by case."""
    wanted = sorted(set(keys))
    table = table_of(Label)
    said: dict[str, list[str]] = {}
    with store.engine.connect() as conn:
        for start in range(0, len(wanted), ID_CHUNK):
            for key, values in conn.execute(sa.select(table.c.case_key, table.c["values"])
                                            .where(table.c.case_key.in_(wanted[start:start + ID_CHUNK]))
                                            .order_by(table.c.id)):
                winner = (values or {}).get("winner")
                if isinstance(winner, str):
                    said.setdefault(key, []).append(winner)
    return said
