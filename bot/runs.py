"""Many judgments: a run over rows persisted as pending, judged with bounded concurrency, resumable."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bot.csvio import CsvRow, CsvSource, MalformedRow
from bot.judge import Triple, Verdict, cache_key, judge, prompt_hash
from bot.llm import JudgeClient, RunStopped
from bot.models import Judgment, Run, utcnow
from bot.rubrics import Rubric
from bot.store import Store

UNSCORED = ("invalid", "error", "malformed")


class Origin(BaseModel):
    """Who asked for a run and where its results belong (Slack fields stay empty in a terminal)."""

    source: str = "cli"
    team_id: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None
    user_id: str | None = None


@dataclass(frozen=True)
class Progress:
    """A snapshot of a run in flight, for a terminal bar or a Slack message."""

    run_id: int
    done: int
    total: int
    errors: int
    cached: int
    judged_now: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Rows finished per second in this session."""
        return self.judged_now / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until the last row, at the current rate."""
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: done, paused (resumable) or cancelled, with its row counts by status."""

    run_id: int
    status: str
    stop_reason: str | None
    counts: dict[str, int]

    @property
    def all_scored(self) -> bool:
        """True when every row of the run got a score."""
        return self.status == "done" and not any(self.counts.get(s) for s in (*UNSCORED, "pending"))


class RubricChanged(RuntimeError):
    """A run cannot go on with a rubric other than the one it started with."""


def _run_fields(rubric: Rubric, judge_model: str, origin: Origin) -> dict[str, Any]:
    return {
        "rubric_name": rubric.name, "rubric_version": rubric.version, "rubric_hash": rubric.content_hash,
        "judge_model": judge_model, **origin.model_dump(exclude={"source"}),
    }


def start_run(
    store: Store,
    rubric: Rubric,
    rows: Iterable[CsvRow | MalformedRow],
    *,
    judge_model: str,
    columns: list[str],
    source_name: str | None = None,
    model_name: str | None = None,
    fresh: bool = False,
    origin: Origin | None = None,
) -> Run:
    """Persist a run and every row (pending, or malformed with its reason) before anything is judged."""
    origin = origin or Origin()
    common = _run_fields(rubric, judge_model, origin)
    run = store.create_run(
        **common, source=origin.source, source_name=source_name, columns=columns, model_name=model_name, fresh=fresh
    )

    def judgment_rows() -> Iterable[dict[str, Any]]:
        for row in rows:
            if isinstance(row, MalformedRow):
                yield {**common, "run_id": run.id, "row_number": row.line, "status": "malformed", "error": row.reason,
                       "question": "", "reference": "", "answer": "", "model_name": model_name,
                       "cells": dict(zip(columns, row.cells))}
            else:
                yield {**common, "run_id": run.id, "row_number": row.line, "status": "pending",
                       "question": row.question, "reference": row.reference, "answer": row.answer,
                       "model_name": row.model or model_name, "cells": row.cells}

    total = store.add_rows(judgment_rows())
    store.update_run(run.id, total_rows=total)
    run.total_rows = total
    return run


def start_csv_run(store: Store, rubric: Rubric, source: CsvSource, **kwargs: Any) -> Run:
    """Start a run over every row of an opened CSV file."""
    return start_run(store, rubric, source, columns=source.headers, source_name=source.path.name, **kwargs)


def start_single_run(store: Store, rubric: Rubric, triple: Triple, **kwargs: Any) -> Run:
    """Start a run of one triple (a command rather than a file)."""
    row = CsvRow(line=1, question=triple.question, reference=triple.reference, answer=triple.answer, model=None,
                 cells={"question": triple.question, "reference": triple.reference, "answer": triple.answer})
    return start_run(store, rubric, [row], columns=["question", "reference", "answer"], **kwargs)


def _reuse(cached: Judgment, rubric: Rubric, judge_model: str, triple: Triple) -> Verdict:
    return Verdict(
        status="scored", output=cached.output, derived=cached.derived or {}, headline=cached.headline,
        passed=cached.passed, label=cached.label, tag=cached.tag, raw_reply=cached.raw_reply, flags=cached.flags or [],
        rubric_name=rubric.name, rubric_version=rubric.version, rubric_hash=rubric.content_hash,
        judge_model=judge_model, prompt_hash=prompt_hash(rubric, triple, judge_model),
    )


async def execute_run(
    store: Store,
    run: Run,
    rubric: Rubric,
    client: JudgeClient,
    *,
    concurrency: int,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: asyncio.Event | None = None,
) -> RunOutcome:
    """Judge every pending row of `run`; stop early on a quota or key problem, leaving the rest pending.

    Each verdict is committed as soon as it arrives, so a crash loses at most the rows in flight,
    which stay pending and are judged on resume; a row already saved is never judged again.
    """
    if run.rubric_hash != rubric.content_hash:
        raise RubricChanged(
            f"run {run.id} started with rubric {run.rubric_name} {run.rubric_version} ({run.rubric_hash}); the "
            f"loaded rubric is {rubric.version} ({rubric.content_hash}). Restore that file, or start a new run."
        )
    run_id: int = run.id  # type: ignore[assignment]
    counts = store.status_counts(run_id)
    total = sum(n for status, n in counts.items() if status != "malformed")
    done = total - counts.get("pending", 0)
    errors = counts.get("invalid", 0) + counts.get("error", 0)
    store.update_run(run_id, status="running", started_at=run.started_at or utcnow(), stop_reason=None)

    # Database calls of the hot path run on one thread of their own: the event loop never waits on
    # SQLite, and a single writer never contends with itself for the lock.
    loop = asyncio.get_running_loop()
    db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebot-db")

    async def in_db(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await loop.run_in_executor(db_thread, partial(function, *args, **kwargs))

    queue: asyncio.Queue[Judgment | None] = asyncio.Queue(maxsize=concurrency * 2)
    stop = cancel or asyncio.Event()
    stop_reason: list[str] = []
    inflight: dict[str, asyncio.Future[None]] = {}
    state = {"done": done, "errors": errors, "cached": 0, "now": 0}
    started = time.monotonic()

    def report() -> None:
        if on_progress is not None:
            on_progress(Progress(run_id, state["done"], total, state["errors"], state["cached"], state["now"],
                                 time.monotonic() - started))

    async def produce() -> None:
        after = 0
        while not stop.is_set():
            batch = await in_db(store.pending, run_id, after_id=after)
            if not batch:
                break
            for item in batch:
                if stop.is_set():
                    break
                await queue.put(item)
            after = batch[-1].id  # type: ignore[assignment]
        for _ in range(concurrency):
            await queue.put(None)

    async def record(item: Judgment, verdict: Verdict, key: str, cached_from: int | None = None) -> None:
        await in_db(store.save_verdict, item.id, verdict, cache_key=key, cached_from=cached_from)
        state["done"] += 1
        state["now"] += 1
        state["errors"] += verdict.status != "scored"
        state["cached"] += cached_from is not None
        report()

    async def grade(item: Judgment) -> None:
        triple = Triple(question=item.question, reference=item.reference, answer=item.answer)
        key = cache_key(rubric, client.model, triple)
        while not run.fresh and key in inflight:  # the same triple is being judged for another row: wait for it
            await inflight[key]
            if stop.is_set():
                return
        future = inflight[key] = loop.create_future()
        try:
            cached = None if run.fresh else await in_db(store.find_cached, key)
            if cached is not None:
                await record(item, _reuse(cached, rubric, client.model, triple), key, cached.id)
            else:
                await record(item, await judge(rubric, triple, client), key)
        except RunStopped as err:
            stop_reason.append(str(err))
            stop.set()
        finally:
            if inflight.get(key) is future:
                del inflight[key]
            future.set_result(None)

    async def work() -> None:
        while (item := await queue.get()) is not None:
            if not stop.is_set():
                await grade(item)

    report()
    try:
        await asyncio.gather(produce(), *(work() for _ in range(concurrency)))
    finally:
        db_thread.shutdown(wait=True)
        counts = store.status_counts(run_id)
        if stop_reason:
            status, reason = "paused", stop_reason[0]
        elif stop.is_set() or counts.get("pending"):
            status, reason = ("cancelled", "cancelled") if stop.is_set() else ("paused", "interrupted")
        else:
            status, reason = "done", None
        store.update_run(run_id, status=status, stop_reason=reason, finished_at=utcnow())
    return RunOutcome(run_id, status, reason, counts)
