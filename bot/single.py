"""Judging one triple end to end: a run of one row, judged through the same path as a file, read back."""

from __future__ import annotations

import asyncio

from bot.execution import execute_run, failure_verdict
from bot.judge import Triple
from bot.llm import JudgeClient
from bot.models import Judgment
from bot.rubrics import Rubric
from bot.runs import Origin, start_single_run
from bot.store import Store


async def judge_triple(
    store: Store,
    rubric: Rubric,
    triple: Triple,
    client: JudgeClient,
    *,
    origin: Origin,
    model_name: str | None = None,
    fresh: bool = False,
) -> Judgment:
    """Judge one triple and return its row: scored, invalid, or an error saying what went wrong.

    A judge that cannot be used right now (quota, key, unreachable) would pause a file's run; one
    triple has nothing to come back to, so its row ends as an error with that reason instead.
    """
    run = await asyncio.to_thread(start_single_run, store, rubric, triple, judge_model=client.model,
                                  model_name=model_name, fresh=fresh, origin=origin)
    outcome = await execute_run(store, run, rubric, client, concurrency=1)
    return await asyncio.to_thread(_settle, store, run.id, rubric, client.model, triple, outcome.stop_reason)


def _settle(store: Store, run_id: int, rubric: Rubric, judge_model: str, triple: Triple,
            stop_reason: str | None) -> Judgment:
    row = store.first_judgment(run_id)
    assert row is not None and row.id is not None, "a run of one triple has one row"
    if row.status == "pending":
        reason = stop_reason or "the judge did not answer"
        store.save_verdict(row.id, failure_verdict(rubric, judge_model, triple, reason), cache_key="")
        store.update_run(run_id, status="done", stop_reason=reason)
        row = store.get_judgment(row.id)
        assert row is not None
    return row
