"""A random sample of a channel's recent scored judgments of one rubric, for two judges to be compared on."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.records import RowState
from bot.store.counts.case_keys import texts_removed
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import JUDGMENT

if TYPE_CHECKING:
    from bot.store.database import Store

POOL = 10  # the sample is drawn from the newest POOL times as many judgments


def recent_sample(store: Store, *, rubric_name: str, channel_id: str | None, limit: int,
                  seed: int = 0) -> list[Judgment]:
    """Up to `limit` scored judgments of `rubric_name` in a channel (None: the terminal's), drawn with `seed` from its
    newest ones, one per set of texts, oldest first."""
    where = JUDGMENT.c.channel_id.is_(None) if channel_id is None else JUDGMENT.c.channel_id == channel_id
    with store.engine.connect() as conn:
        newest = [Judgment.read(row) for row in conn.execute(sa.select(JUDGMENT).where(
            where, JUDGMENT.c.rubric_name == rubric_name, JUDGMENT.c.status == RowState.SCORED,
            ~texts_removed(JUDGMENT.c.question, JUDGMENT.c.reference))  # texts removed: nothing to judge again
            .order_by(JUDGMENT.c.id.desc()).limit(max(limit, 1) * POOL))]
    distinct = list({(j.question, j.reference, j.answer): j for j in reversed(newest)}.values())
    picked = distinct if len(distinct) <= limit else random.Random(seed).sample(distinct, limit)
    return sorted(picked, key=lambda judgment: judgment.id)
