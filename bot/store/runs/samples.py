"""The samples behind a verdict: each judge's judgment of a row, saved as it arrives so that none is billed twice."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import bindparam, insert
from sqlalchemy.exc import IntegrityError

from bot.records import SAMPLE_FIELDS, RowState, Verdict
from bot.store.clock import utcnow
from bot.store.counts.billing import bill_samples
from bot.store.counts.counting import standing
from bot.store.tables.as_read import JudgmentSample
from bot.store.tables.core import BILLED_TALLY, JUDGMENT, JUDGMENT_SAMPLE

if TYPE_CHECKING:
    from bot.store.database import Store

SAMPLE_TABLE = JUDGMENT_SAMPLE


@functools.lru_cache(maxsize=2)
def _bill_sample(dialect: str) -> Any:
    """The statement that counts what one saved sample was billed (built once per kind of database)."""
    return bill_samples(dialect, SAMPLE_TABLE, JUDGMENT, BILLED_TALLY,
                        SAMPLE_TABLE.c.id == bindparam("sample_id"))


def save_sample(store: Store, *, judgment_id: int, run_id: int, judge_model: str, sample: int, verdict: Verdict,
                cache_key: str, cached_from: int | None = None) -> bool:
    """Keep one judge's verdict on a row; False when that sample was saved already (the first one stands)."""
    values = {name: getattr(verdict, name) for name in SAMPLE_FIELDS}
    # Core rather than the ORM: this runs once per sample on the judging path.
    try:
        with store.engine.begin() as conn:
            inserted = conn.execute(insert(SAMPLE_TABLE), {
                **values, "judgment_id": judgment_id, "run_id": run_id, "judge_model": judge_model, "sample": sample,
                "cache_key": cache_key, "cached_from": cached_from, "judged_at": utcnow()})
            sample_id = inserted.inserted_primary_key[0]  # type: ignore[index]  # an insert of one row has its key
            conn.execute(_bill_sample(store.engine.dialect.name), {"sample_id": sample_id})
    except IntegrityError:  # saved already (a verdict that landed as the run was stopped): that one stands
        return False
    return True


def samples_of(store: Store, judgment_id: int) -> list[JudgmentSample]:
    """The samples of one row, in the order they were saved."""
    return samples_by_judgment(store, [judgment_id]).get(judgment_id, [])


def samples_by_judgment(store: Store, judgment_ids: Iterable[int]) -> dict[int, list[JudgmentSample]]:
    """The samples of several rows, by row, each in the order they were saved."""
    ids = list(judgment_ids)
    found: dict[int, list[JudgmentSample]] = defaultdict(list)
    if not ids:
        return found
    table = SAMPLE_TABLE
    with store.engine.connect() as conn:
        for row in conn.execute(table.select().where(table.c.judgment_id.in_(ids)).order_by(table.c.id)):
            found[row.judgment_id].append(JudgmentSample.read(row))
    return found


def known_samples(store: Store, judgment_id: int, cache_keys: Iterable[str], *, run_id: int | None = None
                  ) -> tuple[list[JudgmentSample], dict[str, JudgmentSample]]:
    """A row's samples saved so far, and an earlier scored sample under each of `cache_keys` (within one run when
    given): what a row about to be judged need not ask again, read in one go."""
    table = SAMPLE_TABLE
    keys = list(cache_keys)
    cached = table.select().where(table.c.cache_key.in_(keys), table.c.status == RowState.SCORED)
    if run_id is not None:
        cached = cached.where(table.c.run_id == run_id)
    with store.engine.connect() as conn:
        saved = [JudgmentSample.read(row) for row in conn.execute(
            table.select().where(table.c.judgment_id == judgment_id).order_by(table.c.id))]
        found: dict[str, JudgmentSample] = {}
        for row in conn.execute(cached.order_by(table.c.id)):
            found.setdefault(row.cache_key, JudgmentSample.read(row))
    return saved, found


def sampled_in_channel(store: Store, *, channel_id: str | None, since: datetime,
                       until: datetime) -> list[tuple[str, list[JudgmentSample]]]:
    """(rubric, samples) of each case of a channel (None: the terminal's) evaluated between `since` and `until` whose
    latest verdict there was judged several times (samples or a jury): each case once (bot.store.counts.counting)."""
    judgments = JUDGMENT
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(judgments.c.id, judgments.c.rubric_name).where(
            judgments.c.channel_id.is_not_distinct_from(channel_id), judgments.c.status == RowState.SCORED,
            judgments.c.samples > 1, judgments.c.judged_at >= since, judgments.c.judged_at < until,
            standing(judgments.c.replaced_at, until))).all()
    samples = samples_by_judgment(store, [row.id for row in rows])
    return [(row.rubric_name, samples[row.id]) for row in rows if row.id in samples]
