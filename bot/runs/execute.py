"""Judging a run: its pending rows through bounded concurrency, progress events, pause, cancel and resume."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from bot.errors import JudgebotError, RubricChanged, RunNotResumable, RunStopped
from bot.judge.judgment import judge
from bot.judge.panel import Panel
from bot.judge.samples import UNSURE_SPREAD
from bot.judge.verdicts import failed, reused
from bot.llm.client import JudgeClient
from bot.llm.limiters import Usage, paced_text
from bot.records import CLAIMABLE, STALE_AFTER, RowState, RunState, Triple, Verdict
from bot.rubric import Rubric
from bot.runs.budget import Budget
from bot.runs.call_groups import Grouped
from bot.runs.duplicate_rows import DuplicateRows
from bot.runs.heartbeat import Heartbeat
from bot.runs.job import RowKeys, RunJob
from bot.runs.ownership import busy
from bot.runs.panel_rows import PanelRows
from bot.runs.progress import Progress, RunOutcome
from bot.store import (
    Judgment,
    RowVerdict,
    Run,
    Store,
    claim_rows,
    claim_run,
    find_cached_many,
    get_run,
    pending_elsewhere,
    process_name,
    release_claims,
    reset_rows,
    save_verdicts,
    status_counts,
    unsure_count,
    update_run,
    utcnow,
)

log = logging.getLogger(__name__)

CLAIM_POLL = 1.0  # seconds between looks at rows other processes hold, once none is left to claim
# Verdicts saved in one transaction at most (and cache lookups made in one query). The workers never wait for a
# group being committed, only for a whole group waiting behind it: stopped together, they would start again together,
# and their requests would come back as a wave.
GROUP_ROWS = 64
# How long the first verdict of a group waits for others to be saved with it. A transaction costs about 0.8 ms of
# CPU whatever it holds, and 60 us more a verdict: at 160 verdicts a second, 200 ms makes groups of 30 rather than 8.
GROUP_SECONDS = 0.2


@dataclass(frozen=True)
class _Next:
    """A pending row as a worker takes it: its texts, its key, what the cache held for the key when its group was
    looked up, and which look that was (the count of looks made so far)."""

    judgment_id: int
    triple: Triple
    key: str
    cached: Judgment | None
    look: int


async def execute_run(
    store: Store,
    run: Run,
    rubric: Rubric,
    client: JudgeClient | Panel,
    *,
    concurrency: int,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: asyncio.Event | None = None,
    rejudge: tuple[RowState, ...] = (),
    statuses: tuple[str, ...] = CLAIMABLE,
    unsure_spread: float = UNSURE_SPREAD,
    budget: Budget | None = None,
    joining: bool = False,
    keys: RowKeys | None = None,
) -> RunOutcome:
    """Judge every pending row of `run`; stop early on a quota or key problem, leaving the rest pending.

    Rows in the states of `rejudge` (REJUDGEABLE: judge errors and invalid replies) are made pending again first.
    Verdicts are committed in groups, one transaction for those that arrive within GROUP_SECONDS (at most
    GROUP_ROWS); a worker goes on to its next row meanwhile, unless a whole group already waits behind the one being
    committed. A crash loses at most the rows in flight and the verdicts not yet committed (two groups, and one more
    a worker), which stay pending and are judged on resume; a row already saved is never judged again.
    The cache is read for GROUP_ROWS rows at a time, in one query, as the rows are handed to the workers (at most
    two groups ahead of the row being judged); a row whose texts another row settled since then looks again at its
    turn, so identical rows are billed once. Identical rows are judged one at a time: a row waits for its twin's
    verdict to be committed (or, when the twin reused one from the cache, not even that), then reuses it.
    Setting `cancel` stops at once: requests in flight are dropped and their rows stay pending.
    Only a run in one of `statuses` is taken (by default any that can be judged again).
    A panel of several judges or samples judges each row with every one, keeping each sample as it arrives; the
    row's verdict is the one closest to the others (see `bot.samples.combine`), unsure from `unsure_spread` points.
    With a `budget`, the run pauses once its verdicts have cost what is left of it (the requests in flight still land).
    Rows are claimed GROUP_ROWS at a time (bot.store.runs.row_claims), so other processes may judge the same run: with
    `joining`, this process helps the one that holds the run (it claims rows while the run is being judged, and leaves
    the run's state and its end to that process); the holder waits for the rows others claimed, or takes them over
    when their process dies. `keys`: the rows' keys the estimate of the same request worked out (bot.runs.job).
    """
    panel = client if isinstance(client, Panel) else Panel.solo(client)
    # Every database call runs off the event loop: a bot judging here must keep answering Slack meanwhile.
    current = await asyncio.to_thread(get_run, store, run.id)
    if current is None or current.status in (RunState.LOADING, RunState.FAILED):
        reason = "it does not exist" if current is None else current.stop_reason or "its rows were never all loaded"
        raise RunNotResumable(f"run {run.id} cannot be judged ({reason}); start a new run from the file")
    if run.rubric_hash != rubric.content_hash:
        raise RubricChanged(
            f"run {run.id} started with rubric {run.rubric_name} {run.rubric_version} ({run.rubric_hash}); the "
            f"loaded rubric is {rubric.version} ({rubric.content_hash}). Restore that file, or start a new run."
        )
    owner = process_name()
    if joining:
        if current.status != RunState.RUNNING:
            raise RunNotResumable(f"run {run.id} is not being judged: there is nothing to help with")
    elif not await asyncio.to_thread(claim_run, store, run.id, owner=owner,
                                     stale_after=STALE_AFTER, statuses=statuses):
        raise busy(run.id)
    await asyncio.to_thread(release_claims, store, run.id, owner)  # none in flight here: an earlier stop's leftovers
    rejudged = await asyncio.to_thread(reset_rows, store, run.id, rejudge) if rejudge and not joining else 0
    counts = await asyncio.to_thread(status_counts, store, run.id)
    unsure = 0 if panel.single else await asyncio.to_thread(unsure_count, store, run.id)
    execution = _Execution(RunJob(store, run, rubric, panel, unsure_spread, keys or RowKeys()), concurrency, on_progress,
                           cancel or asyncio.Event(), owner, counts, unsure, budget, joining)
    return await execution.run(rejudged)


class _Execution(PanelRows, Heartbeat):
    """The state of one `execute_run`: a producer feeding pending rows to `concurrency` workers."""

    def __init__(self, job: RunJob, concurrency: int, on_progress: Callable[[Progress], None] | None,
                 cancel: asyncio.Event, owner: str, counts: dict[str, int], unsure: int, budget: Budget | None,
                 joining: bool) -> None:
        self.job = job
        store, panel = job.store, job.panel
        self.store, self.rubric, self.panel = store, job.rubric, panel
        self.client = panel.clients[0]
        self.run_id: int = job.run.id
        # A row asks each judge `samples` times at once: fewer rows in flight keep each judge at `concurrency`.
        self.concurrency = max(1, -(-concurrency // panel.samples))
        self.on_progress = on_progress
        self.cancel = cancel
        self.owner, self.joining = owner, joining
        self.cancelled_by: str | None = None  # who cancelled through another process
        self.since = utcnow()
        self.elsewhere = (0, 0, 0.0)  # rows other processes judged since, those that got no score, what they cost
        self.stop = asyncio.Event()  # no new rows: a problem every request would hit, or a cancel
        self.stop_reason: str | None = None
        self.queue: asyncio.Queue[_Next | None] = asyncio.Queue(maxsize=concurrency * 2)
        self.duplicates = DuplicateRows()
        self.tasks: list[asyncio.Task[None]] = []
        self.total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
        self.done = self.total - counts.get(RowState.PENDING, 0)
        self.errors = counts.get(RowState.INVALID, 0) + counts.get(RowState.ERROR, 0)
        self.cached = self.judged_now = 0
        self.unsure = unsure
        self.budget = budget
        self.spent = 0.0  # USD of the judgments made in this session, each sample of a panel on its own
        self.started = time.monotonic()
        # What this run sends and waits for at each endpoint's limits, to say which one bound it.
        self.limiters = list({id(client.limiter): client.limiter for client in panel.clients}.values())
        self.usage = Usage()
        # Database calls of the hot path run on one thread of their own: the event loop never waits on
        # the database, and a single writer never contends with itself for SQLite's lock.
        self.db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgebot-db")
        # Verdicts go to the database in groups, one transaction each; the second looks of the cache asked while one
        # is made go together in the next query (without waiting: a row's request waits for its lookup).
        self.saves: Grouped[RowVerdict, bool] = Grouped(partial(self.in_db, save_verdicts, store), limit=GROUP_ROWS,
                                                        wait=GROUP_SECONDS)
        self.lookups: Grouped[str, Judgment | None] = Grouped(partial(self.in_db, self.find_cached), limit=GROUP_ROWS)

    async def in_db(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.db_thread, partial(function, *args, **kwargs))

    def paced(self) -> str | None:
        """Which limit of the judge endpoint bound the run so far, if one did."""
        return paced_text(self.usage, self.limiters[0]) if self.usage.binding is not None else None

    def report(self) -> None:
        if self.on_progress is not None:
            done, errors, judged = (self.done + self.elsewhere[0], self.errors + self.elsewhere[1],
                                    self.judged_now + self.elsewhere[0])
            self.on_progress(Progress(self.run_id, done, self.total, errors, self.cached, judged,
                                      time.monotonic() - self.started, self.unsure, self.paced()))

    async def run(self, rejudged: int) -> RunOutcome:
        for limiter in self.limiters:
            limiter.usage.append(self.usage)
        try:
            return await self._run(rejudged)
        finally:
            for limiter in self.limiters:
                limiter.usage.remove(self.usage)

    async def _run(self, rejudged: int) -> RunOutcome:
        self.report()
        watcher = asyncio.create_task(self.watch())
        try:
            # A TaskGroup: if one task fails, the others are cancelled and awaited before we go on.
            async with asyncio.TaskGroup() as group:
                self.tasks = [group.create_task(self.produce())]
                self.tasks += [group.create_task(self.work()) for _ in range(self.concurrency)]
        except BaseExceptionGroup as failed:
            first = failed.exceptions[0]
            if not isinstance(first, JudgebotError):  # a known problem is said in a sentence, without a traceback
                log.error("run %s stopped", self.run_id, exc_info=failed)
            raise first from None
        finally:
            watcher.cancel()
            try:
                await asyncio.shield(self.lookups.close())  # none left running once the database thread stops
                await asyncio.shield(self.saves.close())  # the verdicts that came back are kept, even on a cancel
                outcome = await asyncio.shield(self.in_db(self.finish, rejudged))
            finally:
                self.db_thread.shutdown(wait=False)
        if self.saves.failure is not None:  # the run stopped because its verdicts could not be saved
            raise self.saves.failure
        return outcome

    def find_cached(self, keys: list[str]) -> list[Judgment | None]:
        # A fresh run reuses nothing from the history, only what it judged itself (identical rows).
        found = find_cached_many(self.store, keys, run_id=self.job.scope)
        return [found.get(key) for key in keys]

    def finish(self, rejudged: int) -> RunOutcome:
        release_claims(self.store, self.run_id, self.owner)
        counts = status_counts(self.store, self.run_id)
        if self.joining:  # the run's state and its end belong to the process that holds it
            return RunOutcome(self.run_id, RunState.RUNNING, self.stop_reason, counts, 0, self.paced())
        if self.stop_reason and counts.get(RowState.PENDING):  # a stop after the last row leaves nothing to resume
            status, reason = RunState.PAUSED, self.stop_reason
        elif self.cancel.is_set():
            status, reason = RunState.CANCELLED, "cancelled"
        elif counts.get(RowState.PENDING):
            status, reason = RunState.PAUSED, "interrupted"
        else:
            status, reason = RunState.DONE, None
        # Only while this process still holds the run: one that took it over owns its status now.
        update_run(self.store, self.run_id, held_by=self.owner, status=status, stop_reason=reason,
                              finished_at=utcnow(), owner=None)
        return RunOutcome(self.run_id, status, reason, counts, rejudged, self.paced(), self.cancelled_by)

    async def produce(self) -> None:
        while not self.stop.is_set():
            batch = await self.in_db(claim_rows, self.store, self.run_id, self.owner, limit=GROUP_ROWS,
                                     running_only=self.joining)
            if not batch:
                if self.joining or not await self.in_db(pending_elsewhere, self.store, self.run_id, self.owner):
                    break
                await asyncio.sleep(CLAIM_POLL)  # rows other live processes hold: done by them, or taken if they die
                continue
            for item in await self.looked_up(batch):
                if self.stop.is_set():
                    break
                await self.queue.put(item)
        for _ in range(self.concurrency):
            await self.queue.put(None)

    async def looked_up(self, rows: list[tuple[int, Triple]]) -> list[_Next]:
        """Pending rows as workers take them, with what the cache holds for each, read in one query for the group."""
        look = self.duplicates.look(len(rows))
        keys = [self.job.key_of(judgment_id, triple) for judgment_id, triple in rows]
        found = await self.in_db(self.find_cached, keys) if self.panel.single else [None] * len(keys)
        return [_Next(judgment_id, triple, key, cached, look)
                for (judgment_id, triple), key, cached in zip(rows, keys, found, strict=True)]

    async def work(self) -> None:
        while (item := await self.queue.get()) is not None:
            await self.saves.room()  # no more verdicts waiting behind the group being saved than one group
            if not self.stop.is_set():
                await self.grade(item)

    async def grade(self, item: _Next) -> None:
        triple, key = item.triple, item.key
        # The same triple being judged for another row: wait for it, rather than pay twice.
        if (claimed := await self.duplicates.claim(key, item.look, self.stop)) is None:
            return
        done, settled_since = claimed
        again = item.cached is None and settled_since
        saved: asyncio.Future[bool] | None = None
        source: int | None = None
        try:
            cached = await self.lookups(key) if again and self.panel.single else item.cached
            if (decided := self.job.screened(triple)) is not None:  # before the cache: never a judge's verdict
                verdict, source = decided, None
            elif not self.panel.single:
                verdict, source = await self.judge_panel(item.judgment_id, triple)
            elif cached is not None:
                verdict, source = reused(cached, self.rubric, self.client.model, triple), cached.id
            else:
                verdict, source = await self.judge(triple), None
            saved = self.record(item.judgment_id, verdict, key, source)
        except RunStopped as err:
            self.stop_reason = self.stop_reason or str(err)
            self.stop.set()
        finally:
            # A row with the same texts waits until this verdict is committed, then finds it in the cache; a verdict
            # reused from the cache is there already.
            if saved is None or source is not None:
                self.duplicates.release(key, done)
            else:
                saved.add_done_callback(lambda _: self.duplicates.release(key, done))

    async def judge(self, triple: Triple, client: JudgeClient | None = None) -> Verdict:
        client = client or self.client
        try:
            return await judge(self.rubric, triple, client, prices=self.panel.prices)
        except RunStopped:
            raise
        except Exception as err:  # a bug must cost one row, not the run; the row says what happened
            log.exception("judging a row failed")
            return failed(self.rubric, client.model, triple, f"internal error: {type(err).__name__}: {err}")

    def record(self, judgment_id: int, verdict: Verdict, key: str, cached_from: int | None) -> asyncio.Future[bool]:
        """Hand a verdict to the group being saved, count it, and return what says when it is committed."""
        saved = self.saves.submit(RowVerdict(judgment_id, verdict, key, cached_from))
        saved.add_done_callback(self.check_saved)
        self.done += 1
        self.judged_now += 1
        self.errors += verdict.status != RowState.SCORED
        self.cached += cached_from is not None
        self.unsure += bool(verdict.unsure)
        if self.panel.single:  # a panel's samples were charged as each arrived
            self.charge(verdict)
        self.report()
        return saved

    def charge(self, verdict: Verdict) -> None:
        """Count what a judgment just made cost against the budget; at the budget, stop taking rows."""
        self.spent += verdict.cost_usd or 0.0
        self.over_budget()

    def over_budget(self) -> None:
        """At the budget (what this process and those helping it spent in this session), stop taking rows."""
        spent = self.spent + self.elsewhere[2]
        if self.budget is not None and not self.budget.allows(spent) and not self.stop.is_set():
            self.stop_reason = self.stop_reason or self.budget.reached(spent)
            self.stop.set()

    def check_saved(self, saved: asyncio.Future[bool]) -> None:
        """Stop taking rows when verdicts cannot be saved: the run then ends with the database's error."""
        if not saved.cancelled() and saved.exception() is not None:
            self.halt(None)
