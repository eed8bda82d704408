"""A run judged through the Responses API's background mode, in a completion window that costs less than live (2 h
at 30% below Standard, 8 h at 40% below): each slot saved before its request is created and its response id saved as
soon as it exists, every response polled until it ends and its reply validated like a live one (a repair asked
live); a restart polls the ids saved and never creates them again, a cancel cancels them, an outage pauses the run."""

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
from bot.llm.answers import RESUME, Completion, message_of
from bot.llm.responses_api import Queued
from bot.records import STALE_AFTER, RowState
from bot.rubric import Rubric
from bot.runs.batch import first_of, keep_beating, waited_end
from bot.runs.batch_lines import save_answers, save_screened, settle
from bot.runs.job import RunJob
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
                              concurrency: int = 16) -> RunOutcome:
    """Ask the run's pending slots in the background with the completion `window`, wait for every response to end,
    and save the verdicts; slots saved before a stop are polled (those with an id) or created now (those saved without
    one: a stop came between saving and creating, or while creating). Setting `cancel` cancels every response still
    running; what they answered before is kept. An outage or a quota pauses the run with its response ids kept."""
    if any(client.api != "responses" for client in panel.clients):
        raise RunStopped("background windows are a feature of OpenAI's Responses API: set JUDGE_API=responses (or "
                         "auto, with OpenAI's own endpoint), or judge the run live or with --batch")
    job = RunJob(store, run, rubric, panel, unsure_spread)
    cancel = cancel or asyncio.Event()
    owner = process_name()
    if not await asyncio.to_thread(claim_run, store, run.id, owner=owner, stale_after=STALE_AFTER):
        raise RunBusy(f"run {run.id} is being judged by another judgebot process right now")
    started = time.monotonic()
    reasons: list[str] = []
    taken = asyncio.Event()
    alive = asyncio.create_task(keep_beating(store, run.id, owner, taken), name=f"heartbeat of background run {run.id}")
    asking = _Asking(job, window, asyncio.Semaphore(concurrency))
    cancelled = False
    try:
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
        alive.cancel()
        outcome = await waited_end(store, run.id, owner=owner, cancelled=cancelled, reasons=reasons)
    return outcome


class _Asking:
    """The background requests of one run, in one process: created, polled, cancelled."""

    def __init__(self, job: RunJob, window: str, room: asyncio.Semaphore) -> None:
        self.job, self.window, self.room = job, window, room
        self.failing_since: float | None = None  # no poll has gone through since then

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
        await self._gather(self._create(asked, rows[asked.judgment_id]) for asked in unsent
                           if asked.judgment_id in rows)
        for asked in unsent:
            if asked.judgment_id not in rows:  # its row was judged meanwhile
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="unneeded")

    async def send_pending(self) -> None:
        """Every slot of a pending row not asked yet: what the history holds reused at once, the others saved and
        created, a page of rows at a time."""
        store, run_id = self.job.store, self.job.run.id
        asked_before = {(asked.judgment_id, asked.judge_index, asked.sample)
                        for asked in await asyncio.to_thread(open_backgrounds, store, run_id)}
        after = 0
        while page := await asyncio.to_thread(next_pending, store, run_id, after_id=after):
            after = page[-1].id
            rows = {row.id: row for row in page if not await save_screened(self.job, row)}
            slots = await asyncio.to_thread(settle, self.job, list(rows.values()), asked_before)
            await self._gather(self._save_and_create(slot, rows[slot[0]]) for slot in slots)

    async def _save_and_create(self, slot: Slot, row: Judgment) -> None:
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
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", error=str(err))
                await save_answers(self.job, [(slot, asked.boundary, str(err))], tier=self.window)
                return
            except RunStopped as err:
                await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended",
                                        error=f"not created: {err}")
                raise
        if isinstance(created, Queued):
            await asyncio.to_thread(update_background, self.job.store, asked.id, response_id=created.id,
                                    status=created.status)
            return
        await self._ended(asked, created)  # answered at once

    async def poll(self, opened: list[RunBackground]) -> list[str]:
        """Look at each response created and not ended, saving what ended; why rows stay pending."""
        reasons: list[str] = []
        looked = [asked for asked in opened if asked.response_id is not None]
        for start in range(0, len(looked), POLLS_AT_ONCE):
            found = await asyncio.gather(*(self._look(asked) for asked in looked[start:start + POLLS_AT_ONCE]))
            reasons += [reason for reason in found if reason]
        return reasons

    async def _look(self, asked: RunBackground) -> str | None:
        assert asked.response_id is not None
        client = self.job.client(asked.judge_index)
        try:
            now = await client.poll(asked.response_id)
        except JudgeCallError as err:  # failed, or cancelled elsewhere: its row stays pending for a resume
            reason = f"{err}; {RESUME} to ask again"
            await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", status="failed",
                                    error=reason)
            return reason
        except openai.NotFoundError as err:
            reason = f"the judge endpoint no longer knows response {asked.response_id} ({message_of(err)}); {RESUME}"
            await asyncio.to_thread(update_background, self.job.store, asked.id, state="ended", error=reason)
            return reason
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise RunStopped(f"the judge endpoint rejected the key: {message_of(err)}") from None
        except (openai.APIError, ValueError) as err:  # down, overloaded, a broken body: looked at again later
            self._failing(err, client.outage_budget)
            return None
        self.failing_since = None
        if isinstance(now, Queued):
            if now.status != asked.status:
                await asyncio.to_thread(update_background, self.job.store, asked.id, status=now.status)
            return None
        await self._ended(asked, now)
        return None

    def _failing(self, err: Exception, budget: float) -> None:
        """A poll that failed: RunStopped once no poll has gone through for `budget` seconds (the ids are kept)."""
        now = time.monotonic()
        self.failing_since = self.failing_since or now
        log.info("polling a background response failed: %s", err)
        if now - self.failing_since >= budget:
            raise RunStopped(f"the judge endpoint has been failing for {now - self.failing_since:.0f} s while its "
                             f"background responses were polled ({err}); {RESUME} once it answers: the responses "
                             "are polled again, never sent again")

    async def _ended(self, asked: RunBackground, completion: Completion) -> None:
        slot = (asked.judgment_id, asked.judge_index, asked.sample)
        await save_answers(self.job, [(slot, asked.boundary, completion)], tier=self.window)
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


def _progress(job: RunJob, started: float) -> Progress:
    """Rows saved so far out of the run's rows; the background requests still running are the rows not done."""
    counts = status_counts(job.store, job.run.id)
    total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
    done = total - counts.get(RowState.PENDING, 0)
    errors = counts.get(RowState.INVALID, 0) + counts.get(RowState.ERROR, 0)
    unsure = 0 if job.single else unsure_count(job.store, job.run.id)
    return Progress(job.run.id, done, total, errors, 0, done, time.monotonic() - started, unsure)
