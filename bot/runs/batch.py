"""A run judged through the Batch API at half price: its pending rows sent as batch files (one line per row, judge
and sample; each judge's lines in files of their own, through its own endpoint; each part saved before it is
uploaded, its ids as they come), polled until each batch ends, every reply validated like a live one (an invalid one
gets its repair through the live API), and the rows a batch did not answer left pending with the reason and the
samples it did answer. What the lines hold and what their replies become is in batch_lines."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import openai

from bot.errors import JudgebotError, RunBusy
from bot.judge.panel import Panel
from bot.judge.samples import UNSURE_SPREAD
from bot.llm.answers import message_of
from bot.llm.client import JudgeClient
from bot.llm.prices import PriceTable
from bot.records import STALE_AFTER, RowState, RunState
from bot.rubric import Rubric
from bot.runs.batch_lines import (
    Line,
    collect,
    make_line,
    save_screened,
    settle,
)
from bot.runs.job import RunJob
from bot.runs.ownership import HEARTBEAT_SECONDS
from bot.runs.progress import Progress, RunOutcome
from bot.store import (
    ENDED,
    SENT,
    UPLOADING,
    Run,
    RunBatch,
    Slot,
    Store,
    add_part,
    beat_run,
    claim_run,
    next_pending,
    open_parts,
    pending_rows,
    process_name,
    slots_of,
    status_counts,
    unsure_count,
    update_part,
    update_run,
    utcnow,
)

log = logging.getLogger(__name__)

MAX_REQUESTS = 50_000  # requests in one batch file
MAX_BYTES = 190_000_000  # bytes of one batch file (the limit is 200 MB)
FINAL = ("completed", "expired", "failed", "cancelled")
NO_BATCH_API = ("the judge endpoint{where} has no Batch API ({detail}); vLLM, Ollama and llama.cpp serve only live "
                "requests. Judge the run live instead: `judgebot resume {run}` without --batch")


class BatchUnavailable(JudgebotError):
    """The endpoint does not offer the Batch API."""


@dataclass
class _File:
    """The lines of one judge gathered for its next part."""

    most: int = MAX_REQUESTS  # requests a file may hold
    lines: list[Line] = field(default_factory=list)
    size: int = 0

    def fits(self, line: Line) -> bool:
        """Whether `line` goes in this file under the Batch API's limits."""
        return not self.lines or (len(self.lines) < self.most and self.size + len(line.text) + 1 <= MAX_BYTES)

    def add(self, line: Line) -> None:
        self.lines.append(line)
        self.size += len(line.text) + 1

    def take(self) -> list[Line]:
        """The lines gathered, leaving the file empty."""
        lines, self.lines, self.size = self.lines, [], 0
        return lines


async def judge_by_batch(store: Store, run: Run, rubric: Rubric, judges: JudgeClient | Panel, *, prices: PriceTable,
                         poll_seconds: float, on_progress: Callable[[Progress], None] | None = None,
                         new_parts: bool = True, cancel: asyncio.Event | None = None,
                         unsure_spread: float = UNSURE_SPREAD, file_requests: int = MAX_REQUESTS) -> RunOutcome:
    """Send the run's pending rows as batches (unless `new_parts` is False: only wait for those sent before), wait
    for every batch to end, and save the verdicts; the rows no batch answered stay pending with the reason.

    A panel of several judges or samples sends one line per row, judge and sample, each judge's lines in files of
    their own through its own endpoint; each reply is saved as a sample, and a row's verdict is combined as live
    (unsure from `unsure_spread` points) once every one of its samples is in. Setting `cancel` asks the provider to
    cancel the batches; what they answered before is still collected. A file holds at most `file_requests` lines
    (and 190 MB): a bigger run is sent as several batches.
    """
    panel = judges if isinstance(judges, Panel) else Panel.solo(judges)
    job = RunJob(store, run, rubric, dataclasses.replace(panel, prices=prices, owned=False), unsure_spread)
    cancel = cancel or asyncio.Event()
    cancelled = False
    owner = process_name()
    if not await asyncio.to_thread(claim_run, store, run.id, owner=owner, stale_after=STALE_AFTER):
        raise RunBusy(f"run {run.id} is being judged by another judgebot process right now")
    started = time.monotonic()
    reasons: list[str] = []
    taken = asyncio.Event()  # another process took the run over: it waits for the same batches, so none is cancelled
    alive = asyncio.create_task(keep_beating(store, run.id, owner, taken), name=f"heartbeat of batch run {run.id}")
    try:
        if new_parts:
            await _send_pending(job, file_requests)
        while parts := await asyncio.to_thread(open_parts, store, run.id):
            for part in parts:
                if part.state == UPLOADING:
                    await _upload(job, part)
                    continue
                reason = await _poll(job, part)
                if reason:
                    reasons.append(reason)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_progress, job, started))
            if await asyncio.to_thread(open_parts, store, run.id):
                await first_of(cancel, taken, timeout=poll_seconds)
            if taken.is_set():
                break
            if cancel.is_set() and not cancelled:
                cancelled = True
                await _cancel(job)
    except BatchUnavailable as err:
        reasons.append(str(err))
    finally:
        alive.cancel()
        outcome = await waited_end(store, run.id, owner=owner, cancelled=cancelled, reasons=reasons)
    return outcome


async def waited_end(store: Store, run_id: int, *, owner: str, cancelled: bool, reasons: list[str]) -> RunOutcome:
    """The end of a run whose rows waited on the provider (a batch, background responses), saved: cancelled, paused
    with rows pending (the reasons why, else "interrupted"), or done."""
    counts = await asyncio.to_thread(status_counts, store, run_id)
    pending = counts.get(RowState.PENDING, 0)
    status = RunState.CANCELLED if cancelled else RunState.PAUSED if pending else RunState.DONE
    reason = "cancelled" if cancelled else "; ".join(dict.fromkeys(reasons)) if pending and reasons else (
        "interrupted" if pending else None)
    await asyncio.to_thread(update_run, store, run_id, held_by=owner, status=status, stop_reason=reason,
                            finished_at=utcnow(), owner=None)
    return RunOutcome(run_id, status, reason, counts)


async def first_of(*events: asyncio.Event, timeout: float) -> None:
    """Wait until one of `events` is set, or `timeout` seconds."""
    waits = [asyncio.create_task(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def keep_beating(store: Store, run_id: int, owner: str, taken: asyncio.Event) -> None:
    """Show life every HEARTBEAT_SECONDS for the whole batch run (an upload or a poll may take longer than another
    host waits before it takes a quiet run over); set `taken` when another process took it over meanwhile."""
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        try:
            if not await asyncio.to_thread(beat_run, store, run_id, owner):
                log.warning("batch run %s was taken over by another process: stopping here", run_id)
                taken.set()
                return
        except Exception:  # a missed beat is not fatal; the next one may go through
            log.warning("could not record the heartbeat of batch run %s", run_id, exc_info=True)


def _client_of(job: RunJob, part: RunBatch) -> JudgeClient:
    """The judge a part asks, through whose endpoint its batch goes."""
    slots = slots_of(part)
    index = slots[0][1] if slots else 0
    return job.client(index if index < len(job.panel.clients) else 0)


async def _cancel(job: RunJob) -> None:
    """Ask the provider to cancel every batch of the run still running (a part never sent just ends)."""
    for part in await asyncio.to_thread(open_parts, job.store, job.run.id):
        if part.batch_id is None:
            await asyncio.to_thread(update_part, job.store, part.id, state=ENDED, error="cancelled before it was sent")
            continue
        try:
            await _client_of(job, part).client.batches.cancel(part.batch_id)
        except openai.APIError as err:  # ended meanwhile, or the endpoint refuses: the next look says which
            log.warning("cancelling batch %s failed: %s", part.batch_id, err)


def _progress(job: RunJob, started: float) -> Progress:
    """Rows saved, and the rows the requests answered by the batches still running stand for (from their request
    counts: a row is as many requests as the panel has slots)."""
    counts = status_counts(job.store, job.run.id)
    total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
    answered = sum(part.done + part.failed for part in open_parts(job.store, job.run.id)) // len(job.panel.slots)
    done = min(total, total - counts.get(RowState.PENDING, 0) + answered)
    errors = counts.get(RowState.INVALID, 0) + counts.get(RowState.ERROR, 0)
    unsure = 0 if job.single else unsure_count(job.store, job.run.id)
    return Progress(job.run.id, done, total, errors, 0, done, time.monotonic() - started, unsure)


async def _send_pending(job: RunJob, file_requests: int) -> None:
    """Every slot of a pending row not in a batch yet: what the history holds reused at once, the others sent in
    parts, each part one judge's. Every endpoint is asked first whether it has the Batch API."""
    taken = {slot for part in await asyncio.to_thread(open_parts, job.store, job.run.id)
             for slot in slots_of(part)}
    await _check_endpoints(job)
    files: dict[int, _File] = {}
    after = 0
    while page := await asyncio.to_thread(next_pending, job.store, job.run.id, after_id=after):
        after = page[-1].id
        rows = {row.id: row for row in page if not await save_screened(job, row)}
        for judgment_id, judge_index, number in await asyncio.to_thread(settle, job, list(rows.values()), taken):
            line = make_line(job, rows[judgment_id], judge_index, number)
            gathered = files.setdefault(judge_index, _File(file_requests))
            if not gathered.fits(line):
                await _send_part(job, gathered.take())
            gathered.add(line)
    for gathered in files.values():
        if gathered.lines:
            await _send_part(job, gathered.take())


async def _check_endpoints(job: RunJob) -> None:
    """BatchUnavailable, before anything is sent, when one of the judges' endpoints has no Batch API (a 404) or
    refuses to list batches (saying what it answered)."""
    endpoints = {(str(client.client.base_url), client.client.api_key): client for client in job.panel.clients}
    for client in endpoints.values():
        try:
            await client.client.batches.list(limit=1)
        except openai.NotFoundError as err:
            raise _unavailable(job, client, err) from None
        except openai.APIStatusError as err:
            raise BatchUnavailable(f"the judge endpoint {client.endpoint} answered {err.status_code} when asked for its "
                                   f"batches ({message_of(err)}); judge the run live instead: `judgebot resume "
                                   f"{job.run.id}` without --batch") from None


def _unavailable(job: RunJob, client: JudgeClient, err: openai.NotFoundError) -> BatchUnavailable:
    """What a 404 from an endpoint's Batch API says: which endpoint (when the jury has several), and what to do."""
    several = len({str(judge.client.base_url) for judge in job.panel.clients}) > 1
    where = f" {client.endpoint} (of judge {client.model})" if several else ""
    return BatchUnavailable(NO_BATCH_API.format(where=where, detail=f"404 on {err.request.url.path}", run=job.run.id))


async def _send_part(job: RunJob, lines: list[Line]) -> None:
    """Save a part of one judge's lines, then upload it."""
    part = await asyncio.to_thread(add_part, job.store, job.run.id, [line.slot for line in lines])
    await _upload(job, part, lines)


async def _upload(job: RunJob, part: RunBatch, lines: list[Line] | None = None) -> None:
    """Upload a saved part's file and create its batch, saving each id as it comes; a part whose batch was created
    before a stop is found again by its metadata rather than created twice."""
    client = _client_of(job, part)
    api = client.client
    try:
        if part.input_file_id is None:
            if lines is None:  # saved before a stop, never uploaded: its requests are made again
                lines = await asyncio.to_thread(_lines_again, job, slots_of(part))
            if not lines:
                await asyncio.to_thread(update_part, job.store, part.id, state=ENDED)
                return
            content = "".join(line.text + "\n" for line in lines).encode()
            uploaded = await api.files.create(file=(f"judgebot-run{job.run.id}-part{part.id}.jsonl", content),
                                              purpose="batch")
            part.input_file_id = uploaded.id
            await asyncio.to_thread(update_part, job.store, part.id, input_file_id=uploaded.id)
        batch_id = await _existing_batch(api, part) or (await api.batches.create(
            input_file_id=part.input_file_id, endpoint=client.batch_url, completion_window="24h",
            metadata={"judgebot_part": str(part.id), "judgebot_run": str(job.run.id)})).id
        await asyncio.to_thread(update_part, job.store, part.id, batch_id=batch_id, state=SENT, status="validating")
    except openai.NotFoundError as err:
        await asyncio.to_thread(update_part, job.store, part.id, state=ENDED, error="no Batch API")
        raise _unavailable(job, client, err) from None


def _lines_again(job: RunJob, slots: list[Slot]) -> list[Line]:
    """The lines of slots whose rows are still pending, made anew."""
    rows = {row.id: row for row in pending_rows(job.store, (slot[0] for slot in slots))}
    return [make_line(job, rows[judgment_id], judge_index, number)
            for judgment_id, judge_index, number in slots if judgment_id in rows]


async def _existing_batch(api: openai.AsyncOpenAI, part: RunBatch) -> str | None:
    """The batch of a part created before a stop, found by its metadata among the newest batches; None if none."""
    async for batch in api.batches.list(limit=100):
        if (batch.metadata or {}).get("judgebot_part") == str(part.id) and batch.input_file_id == part.input_file_id:
            return batch.id
        if batch.created_at < time.time() - 86_400 * 2:  # older than any part still open
            break
    return None


async def _poll(job: RunJob, part: RunBatch) -> str | None:
    """Check one sent part; when it has ended, save what it answered. The reason its unanswered rows stay pending."""
    assert part.batch_id is not None
    api = _client_of(job, part).client
    batch = await api.batches.retrieve(part.batch_id)
    counts = batch.request_counts
    await asyncio.to_thread(update_part, job.store, part.id, status=batch.status,
                            done=counts.completed if counts else 0, failed=counts.failed if counts else 0)
    if batch.status not in FINAL:
        return None
    answered = 0
    sent = set(slots_of(part))  # a line is taken only for a request this part sent, and once
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            answered += await collect(job, (await api.files.content(file_id)).text, sent)
    asked = len(part.slots)
    left = asked - answered
    reason = None
    if left > 0:
        why = "; ".join(error.message or error.code or "" for error in (batch.errors.data or [])[:3]) \
            if batch.errors else ""
        unit = "rows" if job.single else "requests"
        reason = (f"batch {batch.id} {batch.status} with {left:,} of its {asked:,} {unit} not judged"
                  + (f" ({why})" if why else "") + ": resume the run live, or with --batch as a new batch")
    await asyncio.to_thread(update_part, job.store, part.id, state=ENDED, error=reason)
    return reason
