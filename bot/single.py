"""Judging one triple end to end: a run of one row, judged through the same path as a file, read back."""

from __future__ import annotations

import asyncio

from bot.execution import execute_run, failure_verdict
from bot.judge import Triple, Verdict
from bot.llm import JudgeClient
from bot.models import Judgment, Run
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
    message_ts: str | None = None,
) -> Judgment:
    """Judge one triple and return its row: scored, invalid, or an error saying what went wrong.

    The row is saved, pending, before the judge is asked (with `message_ts`, the message waiting for it),
    so a process that dies meanwhile leaves a run that `finish_triple` completes later.
    """
    run = await asyncio.to_thread(start_single_run, store, rubric, triple, judge_model=client.model,
                                  model_name=model_name, fresh=fresh, origin=origin, message_ts=message_ts)
    return await finish_triple(store, run, rubric, client)


async def finish_triple(store: Store, run: Run, rubric: Rubric, client: JudgeClient) -> Judgment:
    """Judge the pending row of a run of one triple and return it.

    A judge that cannot be used right now (quota, key, unreachable) would pause a file's run; one
    triple has nothing to come back to, so its row ends as an error with that reason instead.
    """
    outcome = await execute_run(store, run, rubric, client, concurrency=1)
    return await asyncio.to_thread(_settle, store, run, rubric, outcome.stop_reason)


async def abandon_triple(store: Store, run: Run, reason: str) -> Judgment:
    """End the pending row of a run of one triple as an error with `reason`, without asking the judge."""
    return await asyncio.to_thread(_settle, store, run, None, reason)


def _settle(store: Store, run: Run, rubric: Rubric | None, stop_reason: str | None) -> Judgment:
    row = store.first_judgment(run.id)  # type: ignore[arg-type]
    assert row is not None and row.id is not None, "a run of one triple has one row"
    if row.status == "pending":
        reason = stop_reason or "the judge did not answer"
        if rubric is not None:
            triple = Triple(question=row.question, reference=row.reference, answer=row.answer)
            verdict = failure_verdict(rubric, run.judge_model, triple, reason)
        else:  # the rubric is gone or changed: the row keeps the one it was started with
            verdict = Verdict(status="error", error=reason, rubric_name=run.rubric_name,
                              rubric_version=run.rubric_version, rubric_hash=run.rubric_hash,
                              judge_model=run.judge_model, prompt_hash="")
        store.save_verdict(row.id, verdict, cache_key="")
        store.update_run(run.id, status="done", stop_reason=reason)  # type: ignore[arg-type]
        row = store.get_judgment(row.id)
        assert row is not None
    return row
