"""The samples behind a verdict: each judge's judgment of a row, saved as it arrives so that none is billed twice."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from bot.records import RowState, Verdict
from bot.store.judgments import Store
from bot.store.models import JudgmentSample, utcnow

SAMPLE_FIELDS = ("status", "prompt_hash", "output", "derived", "headline", "passed", "label", "tag", "raw_reply",
                 "error", "tokens_in", "tokens_out", "latency_ms", "attempts")


def save_sample(store: Store, *, judgment_id: int, run_id: int, judge_model: str, sample: int, verdict: Verdict,
                cache_key: str, cached_from: int | None = None) -> JudgmentSample:
    """Keep one judge's verdict on a row; the one saved first when the same sample is saved twice."""
    fields = {name: getattr(verdict, name) for name in SAMPLE_FIELDS}
    row = JudgmentSample(judgment_id=judgment_id, run_id=run_id, judge_model=judge_model, sample=sample,
                         cache_key=cache_key, cached_from=cached_from, judged_at=utcnow(), **fields)
    try:
        with store.session() as session:
            session.add(row)
            session.commit()
            return row
    except IntegrityError:  # saved already (a verdict that landed as the run was stopped): that one stands
        with store.session() as session:
            found = session.exec(select(JudgmentSample).where(
                JudgmentSample.judgment_id == judgment_id, JudgmentSample.judge_model == judge_model,
                JudgmentSample.sample == sample)).one()
            return found


def samples_of(store: Store, judgment_id: int) -> list[JudgmentSample]:
    """The samples of one row, in the order they were saved."""
    return samples_by_judgment(store, [judgment_id]).get(judgment_id, [])


def samples_by_judgment(store: Store, judgment_ids: Iterable[int]) -> dict[int, list[JudgmentSample]]:
    """The samples of several rows, by row, each in the order they were saved."""
    ids = list(judgment_ids)
    found: dict[int, list[JudgmentSample]] = defaultdict(list)
    if not ids:
        return found
    with store.session() as session:
        for row in session.exec(select(JudgmentSample).where(col(JudgmentSample.judgment_id).in_(ids))
                                .order_by(col(JudgmentSample.id))):
            found[row.judgment_id].append(row)
    return found


def find_cached_sample(store: Store, cache_key: str, *, run_id: int | None = None) -> JudgmentSample | None:
    """An earlier scored sample under `cache_key` (within one run when given), to reuse instead of billing."""
    statement = select(JudgmentSample).where(JudgmentSample.cache_key == cache_key,
                                             JudgmentSample.status == RowState.SCORED)
    if run_id is not None:
        statement = statement.where(JudgmentSample.run_id == run_id)
    with store.session() as session:
        return session.exec(statement.order_by(col(JudgmentSample.id)).limit(1)).first()
