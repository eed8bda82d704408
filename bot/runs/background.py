"""A run judged through the Responses API's background mode, in a completion window that costs less than live (2 h
at 30% below Standard, 8 h at 40% below): each slot saved before its request is created and its response id saved as
soon as it exists, every response polled until it ends and its reply validated like a live one (a repair asked
live); a restart polls the ids saved and never creates them again, a cancel cancels them, an outage pauses the run
and a response that cannot be looked at while the others can ends its row as an error (bot.runs.poll_failures), and
a monthly budget is weighed before each request is created (bot.runs.in_flight)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import openai

from bot.errors import JudgeCallError, RunBusy, RunStopped
from bot.judge.panel import Panel
from bot.judge.prompt import build_messages, new_boundary, schema_name
from bot.judge.samples import UNSURE_SPREAD
from bot.llm.answers import RESUME, Completion, NotACompletion, message_of
from bot.llm.client import JudgeClient
from bot.llm.responses_api import Queued
from bot.records import STALE_AFTER, RowState
from bot.rubric import Rubric
from bot.runs.batch import first_of, keep_beating, waited_end
from bot.runs.batch_lines import save_answers, save_screened, settle
from bot.runs.budget import Budget
from bot.runs.estimate import RequestCosts
from bot.runs.in_flight import InFlight
from bot.runs.job import RunJob
from bot.runs.poll_failures import PollFailures
from bot.runs.progress import Progress, RunOutcome
from bot.store import (
    Judgment,
    Run,
    RunBackground,
    Slot,
    Store,
    add_background,
    claim_run,
    next_pending,
    open_backgrounds,
    pending_rows,
    process_name,
    status_counts,
    triple_of,
    unsure_count,
    update_background,
)

log = logging.getLogger(__name__)

WINDOWS = ("2h", "8h")
POLLS_AT_ONCE = 32  # background responses looked at together


async def judge_in_background(store: Store, run: Run, rubric: Rubric, panel: Panel, *, window: str,
                              poll_seconds: float, on_progress: Callable[[Progress], None] | None = None,
                              cancel: asyncio.Event | None = None, unsure_spread: float = UNSURE_SPREAD,
                              concurrency: int = 16, budget: Budget | None = None) -> RunOutcome:
    """Ask the run's pending slots in the background with the completion `window`, wait for every response to end,
    and save the verdicts; slots saved before a stop are polled (those with an id) or created now (those saved without
    one: a stop came between saving and creating, or while creating). Setting `cancel` cancels every response still
    running; what they answered before is kept. An outage or a quota pauses the run with its response ids kept.

    With a `budget` (what is left of a monthly budget), a request is created only while what this run spent, what
    its open responses are expected to cost and what it is expected to cost fit in it, each at the window's price;
    once one does not, no more are created, the open ones are waited for (they are billed already), and the run
    pauses with the budget's sentence."""
    if any(client.api != "responses" for client in panel.clients):
        raise RunStopped("background windows are a feature of OpenAI's Responses API: set JUDGE_API=responses (or "
                         "auto, with OpenAI's own endpoint), or judge the run live or with --batch")
    job = RunJob(store, run, rubric, panel, unsure_spread)
    prices = None if budget is None else await asyncio.to_thread(RequestCosts, store, rubric, panel, window)
    spending = InFlight(budget, None if prices is None else prices.of)
    cancel = cancel or asyncio.Event()
    owner = process_name()
    if not await asyncio.to_thread(claim_run, store, run.id, owner=owner, stale_after=STALE_AFTER):
        raise RunBusy(f"run {run.id} is being judged by another judgebot process right now")
    started = time.monotonic()
    reasons: list[str] = []
    taken = asyncio.Event()
    alive = asyncio.create_task(keep_beating(store, run.id, owner, taken), name=f"heartbeat of background run {run.id}")
    asking = _Asking(job, window, asyncio.Semaphore(concurrency), spending)
    cancelled = False
    try:
        await asking.hold_open()
        await asking.send_unsent()
        await asking.send_pending()
        while opened := await asyncio.to_thread(open_backgrounds, store, run.id):
            if cancel.is_set():
                cancelled = True
                await asking.cancel(opened)
                break
            reasons += await asking.poll(opened)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_progress, job, started))
            if await asyncio.to_thread(open_backgrounds, store, run.id):
                await first_of(cancel, taken, timeout=poll_seconds)
            if taken.is_set():
                break
    except RunStopped as err:
        reasons.append(str(err))
    finally:
        if spending.reason is not None:
            reasons.append(spending.reason)
        alive.cancel()
        outcome = await waited_end(store, run.id, owner=owner, cancelled=cancelled, reasons=reasons)
    return outcome


class _Asking:
    """The background requests of one run, in one process: created, polled, cancelled."""

    def __init__(self, job: RunJob, window: str, room: asyncio.Semaphore, spending: InFlight) -> None:
        self.job, self.window, self.room, self.spending = job, window, room, spending
        self.failures = PollFailures()

    async def hold_open(self) -> None:
        """Count the responses created before this process (a stop came while they ran) in flight."""
        if self.spending.budget is None:
            return
        opened = [asked for asked in await asyncio.to_thread(open_backgrounds, self.job.store, self.job.run.id)
                  if asked.response_id is not None]
        rows = {row.id: row for row in await asyncio.to_thread(pending_rows, self.job.store,
                                                               [asked.judgment_id for asked in opened])}
        for asked in opened:
            if asked.judgment_id in rows:
                self.spending.hold(_slot(asked), triple_of(rows[asked.judgment_id]))

    async def send_unsent(self) -> None:
        """Create the requests saved before a stop without a response id. The stop may have come after the endpoint
        created one (its id never saved): the Responses API lists none to look it up by, so it is asked again rather
        than its row lost, and said in the log."""
        unsent = [asked for asked in await asyncio.to_thread(open_backgrounds, self.job.store, self.job.run.id)
                  if asked.response_id is None]
        if not unsent:
            return
        log.warning("run %s: %d background requests were saved but not known to be created before a stop: asking "
                    "them now", self.job.run.id, len(unsent))
        rows = {row.id: row for row in await asyncio.to_thread(pending_rows, self.job.store,
                                                               [asked.judgment_id for asked in unsent])}
        allowed = {asked.id for asked in unsent if asked.judgment_id in rows
                   and self.spending.take(_slot(asked), triple_of(rows[asked.judgment_id]))}
        await self._gather(self._create(asked, rows[asked.judgment_id]) for asked in unsent if asked.id in allowed)
        for asked in unsent:
            if asked.judgment_id not in rows:  # its row was judged meanwhile
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="unneeded")
            elif asked.id not in allowed:  # past the budget: its row stays pending, asked anew on a resume
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="unsent",
                                        error="not created: the monthly budget is reached")

    async def send_pending(self) -> None:
        """Every slot of a pending row not asked yet: what the history holds reused at once, the others saved and
        created, a page of rows at a time."""
        store, run_id = self.job.store, self.job.run.id
        asked_before = {(asked.judgment_id, asked.judge_index, asked.sample)
                        for asked in await asyncio.to_thread(open_backgrounds, store, run_id)}
        after = 0
        while not self.spending.out and (page := await asyncio.to_thread(next_pending, store, run_id, after_id=after)):
            after = page[-1].id
            rows = {row.id: row for row in page if not await save_screened(self.job, row)}
            slots = await asyncio.to_thread(settle, self.job, list(rows.values()), asked_before)
            await self._gather(self._save_and_create(slot, rows[slot[0]]) for slot in slots)

    async def _save_and_create(self, slot: Slot, row: Judgment) -> None:
        if not self.spending.take(slot, triple_of(row)):  # past the budget: not saved, its row stays pending
            return
        async with self.room:
            asked = await asyncio.to_thread(add_background, self.job.store, run_id=self.job.run.id, slot=slot,
                                            window=self.window, boundary=new_boundary())
        await self._create(asked, row)

    async def _create(self, asked: RunBackground, row: Judgment) -> None:
        """Create one saved request in the background and save its response id at once; a request the endpoint
        refuses ends its row as an error, as live; an outage or a quota (RunStopped) pauses the run."""
        client = self.job.client(asked.judge_index)
        slot = (asked.judgment_id, asked.judge_index, asked.sample)
        messages = build_messages(self.job.rubric, triple_of(row), asked.boundary)
        async with self.room:
            try:
                created = await client.start_background(messages, schema_name=schema_name(self.job.rubric),
                                                        schema=self.job.rubric.reply_schema, window=self.window,
                                                        tag=f"j{slot[0]}-k{slot[1]}-s{slot[2]}")
            except JudgeCallError as err:
                self.spending.ended(slot)
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", error=str(err))
                await save_answers(self.job, [(slot, asked.boundary, str(err))], tier=self.window)
                return
            except RunStopped as err:
                self.spending.ended(slot)
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended",
                                        error=f"not created: {err}")
                raise
        if isinstance(created, Queued):
            await asyncio.to_thread(update_background, self.job.store, asked.id, response_id=created.id,
                                    status=created.status)
            return
        await self._ended(asked, created)  # answered at once

    async def poll(self, opened: list[RunBackground]) -> list[str]:
        """Look at each response created and not ended, saving what ended; why rows stay pending. Once every look has
        ended, a round in which none went through counts toward pausing the run, and a response whose looks kept
        failing while the others went through is given up on (bot.runs.poll_failures)."""
        reasons: list[str] = []
        failed: list[tuple[str, Exception, JudgeClient]] = []
        through: list[str] = []
        looked = {asked.response_id: asked for asked in opened if asked.response_id is not None}
        ids = list(looked)
        for start in range(0, len(ids), POLLS_AT_ONCE):
            found = await asyncio.gather(*(self._look(looked[key]) for key in ids[start:start + POLLS_AT_ONCE]),
                                         return_exceptions=True)
            for key, result in zip(ids[start:start + POLLS_AT_ONCE], found, strict=True):
                if isinstance(result, BaseException) and not isinstance(result, Exception):
                    raise result
                if isinstance(result, _Unanswered):
                    failed.append((key, result.error, self.job.client(looked[key].judge_index)))
                elif isinstance(result, Exception):  # the key refused, a reply that could not be saved: after the round
                    raise result
                else:
                    through.append(key)
                    reasons += [result] if result else []
        for key, reason in self.failures.looked(through, failed):
            await self._given_up(looked[key], reason)
        return reasons

    async def _look(self, asked: RunBackground) -> str | _Unanswered | None:
        """Look at one response: why its row stays pending (it failed, or the endpoint lost it), the failure of a
        look that did not go through, or None (still running, or ended and saved)."""
        assert asked.response_id is not None
        client = self.job.client(asked.judge_index)
        try:
            now = await client.poll(asked.response_id)
        except JudgeCallError as err:  # failed, or cancelled elsewhere: its row stays pending for a resume
            reason = f"{err}; {RESUME} to ask again"
            self.spending.ended(_slot(asked))
            await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="failed",
                                    error=reason)
            return reason
        except openai.NotFoundError as err:
            reason = f"the judge endpoint no longer knows response {asked.response_id} ({message_of(err)}); {RESUME}"
            self.spending.ended(_slot(asked))
            await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", error=reason)
            return reason
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise RunStopped(f"the judge endpoint rejected the key: {message_of(err)}") from None
        except (openai.APIError, NotACompletion, ValueError) as err:  # down, overloaded, a broken body: looked at again later
            log.info("polling background response %s failed: %s", asked.response_id, err)
            return _Unanswered(err)
        if isinstance(now, Queued):
            if now.status != asked.status:
                await asyncio.to_thread(update_background, self.job.store, asked.id, status=now.status)
            return None
        await self._ended(asked, now)
        return None

    async def _given_up(self, asked: RunBackground, reason: str) -> None:
        """A response whose looks kept failing while the endpoint answered the others: cancelled at the endpoint, so
        that a reply nobody will read is not billed (if it can be), and its slot ended as an error, as a live request
        that keeps failing ends its row; what it costs is only what the endpoint reported, nothing."""
        assert asked.response_id is not None
        log.info("background response %s: %s", asked.response_id, reason)
        try:
            await self.job.client(asked.judge_index).cancel_background(asked.response_id)
        except openai.APIError as err:  # it fails there too: nothing more to do
            log.warning("cancelling background response %s failed: %s", asked.response_id, err)
        slot = _slot(asked)
        self.spending.ended(slot)
        await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="unread",
                                error=reason)
        await save_answers(self.job, [(slot, asked.boundary, reason)], tier=self.window)

    async def _ended(self, asked: RunBackground, completion: Completion) -> None:
        slot = _slot(asked)
        cost = await save_answers(self.job, [(slot, asked.boundary, completion)], tier=self.window)
        self.spending.ended(slot, cost)
        await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="completed")

    async def cancel(self, opened: list[RunBackground]) -> None:
        """Cancel every response still running (a request saved but not created just ends)."""
        for asked in opened:
            if asked.response_id is not None:
                try:
                    await self.job.client(asked.judge_index).cancel_background(asked.response_id)
                except openai.APIError as err:  # ended meanwhile, or the endpoint refuses: nothing more to do
                    log.warning("cancelling background response %s failed: %s", asked.response_id, err)
            await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="cancelled")

    @staticmethod
    async def _gather(tasks: Any) -> None:
        """Run `tasks` together; the first exception raised once all have ended (their ids saved meanwhile)."""
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result


class _Unanswered:
    """A look at a response that did not go through: the endpoint down, unreachable or answering something else."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _slot(asked: RunBackground) -> Slot:
    return asked.judgment_id, asked.judge_index, asked.sample


def _progress(job: RunJob, started: float) -> Progress:
    """Rows saved so far out of the run's rows; the background requests still running are the rows not done."""
    counts = status_counts(job.store, job.run.id)
    total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
    done = total - counts.get(RowState.PENDING, 0)
    errors = counts.get(RowState.INVALID, 0) + counts.get(RowState.ERROR, 0)
    unsure = 0 if job.single else unsure_count(job.store, job.run.id)
    return Progress(job.run.id, done, total, errors, 0, done, time.monotonic() - started, unsure)
