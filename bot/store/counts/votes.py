"""Which votes stand: the rule of a person's vote counted once a case, over whichever tables a query reads (the
models' or the Core tables of bot.store.tables.core)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

ONE: sa.ColumnClause[Any] = sa.literal_column("1")  # what an EXISTS asks for: nothing of the row


def vote_stands(feedback: sa.Table, label: sa.Table) -> Any:
    """A vote of `feedback` that stands: its person gave no label of the same case in `label` (their label stands in
    for their votes) and no later vote on it (on another judgment of the same texts), so that a case counts once a
    person. Each EXISTS asks for a constant rather than every column, so that SQLite answers the first one from its
    index alone."""
    vote, said, later = feedback.c, label.c, feedback.alias().c
    return sa.and_(
        ~sa.exists(ONE).where(said.case_key == vote.case_key, said.user_id == vote.user_id),
        ~sa.exists(ONE).where(later.case_key == vote.case_key, later.user_id == vote.user_id,
                              sa.or_(later.updated_at > vote.updated_at,
                                     sa.and_(later.updated_at == vote.updated_at, later.id > vote.id))))
