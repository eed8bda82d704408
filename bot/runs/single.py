"""Judging one triple end to end: a run of one row, judged through the same path as a file, read back."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.errors import RunBusy
from bot.judge.panel import Panel
from bot.judge.verdicts import failed, unjudged
from bot.llm.answers import RESUME
from bot.llm.client import JudgeClient
from bot.records import RESUMABLE, RowState, RunState, Triple
from bot.rubric import Rubric
from bot.runs.execute import execute_run
from bot.runs.ownership import STALE_AFTER
from bot.runs.start import start_single_run
from bot.store import Judgment, Run, Store, process_name
from bot.store.judgments import triple_of


async def start_triple(store: Store, *, rubric: Rubric, triple: Triple, judge_model: str, **kwargs: Any) -> Run:
    """Save a run of one triple, its row pending, before anything is shown or judged."""
    return await asyncio.to_thread(start_single_run, store, rubric=rubric, triple=triple, judge_model=judge_model, **kwargs)


async def finish_triple(store: Store, *, run: Run, rubric: Rubric, client: JudgeClient | Panel) -> Judgment:
    """Judge the pending row of a run of one triple (unless another live process holds it) and return it.

    A judge that cannot be used right now (quota, key, unreachable) would pause a file's run; one
    triple has nothing to come back to, so its row ends as an error with that reason instead.
    RunBusy when the run is finished already or held by another live process.
    """
    outcome = await execute_run(store, run, rubric, client, concurrency=1, statuses=RESUMABLE)
    return await asyncio.to_thread(_settle, store, run, rubric, outcome.stop_reason, process_name())


async def abandon_triple(store: Store, *, run: Run, reason: str) -> Judgment:
    """End the pending row of a run of one triple as an error with `reason`, without asking the judge.

    RunBusy when the run is finished already or held by another live process.
    """
    owner = process_name()

    def claim_and_settle() -> Judgment:
        if not store.claim_run(run.id, owner=owner, stale_after=STALE_AFTER, statuses=RESUMABLE):
            raise RunBusy(f"run {run.id} is finished or held by another judgebot process")
        return _settle(store, run, None, reason, owner, holding=True)

    return await asyncio.to_thread(claim_and_settle)


def _settle(store: Store, run: Run, rubric: Rubric | None, stop_reason: str | None, owner: str, *,
            holding: bool = False) -> Judgment:
    """Read the row back; one still pending becomes an error with the reason, unless another process took it."""
    row = store.first_judgment(run.id)
    assert row is not None and row.id is not None, "a run of one triple has one row"
    current = store.get_run(run.id)
    taken = current is not None and current.owner not in (None, owner)
    if row.status != RowState.PENDING or taken:
        return row
    # a stop reason says to resume the run; this row ends here, and judging it again is a retry
    reason = (stop_reason or "the judge did not answer").replace(RESUME, "try again")
    if rubric is not None:
        verdict = failed(rubric, run.judge_model, triple_of(row), reason)
    else:  # the rubric is gone or changed: the row keeps the one it was started with
        verdict = unjudged(rubric_name=run.rubric_name, rubric_version=run.rubric_version, rubric_hash=run.rubric_hash,
                           judge_model=run.judge_model, message=reason)
    store.save_verdict(row.id, verdict, cache_key="")
    store.update_run(run.id, held_by=owner if holding else None, status=RunState.DONE,
                     stop_reason=reason, owner=None)
    saved = store.get_judgment(row.id)
    assert saved is not None
    return saved
