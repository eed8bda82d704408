"""A run judged through the Batch API at half price: its pending rows sent as batch files (each part saved before it
is uploaded, its ids as they come), polled until each batch ends, every reply validated like a live one (an invalid
one gets its repair through the live API), and the rows a batch did not answer left pending with the reason."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai

from bot.errors import JudgebotError, RunBusy
from bot.judge import build_messages, cache_key, judge, new_boundary, schema_name
from bot.llm import JudgeClient, NotACompletion, completion_from
from bot.prices import PriceTable
from bot.records import RowState, RunState, Triple, Verdict
from bot.rubric import Rubric
from bot.runs.execute import STALE_AFTER, Progress, RunOutcome, reused_verdict
from bot.store import Judgment, Run, RunBatch, Store, process_name, utcnow
from bot.store.batches import ENDED, SENT, UPLOADING, add_part, open_parts, update_part

log = logging.getLogger(__name__)

MAX_REQUESTS = 50_000  # requests in one batch file
MAX_BYTES = 190_000_000  # bytes of one batch file (the limit is 200 MB)
ENDPOINT = "/v1/chat/completions"
FINAL = ("completed", "expired", "failed", "cancelled")
NO_BATCH_API = ("the judge endpoint has no Batch API ({detail}); vLLM, Ollama and llama.cpp serve only live "
                "requests. Judge the run live instead: `judgebot resume {run}` without --batch")


class BatchUnavailable(JudgebotError):
    """The endpoint does not offer the Batch API."""


@dataclass
class _Line:
    """One request of a batch file, and the row it judges."""

    judgment: Judgment
    custom_id: str
    text: str


def _custom_id(judgment_id: int, boundary: str) -> str:
    """The id a batch line carries: its row, and the boundary its texts were fenced with (asked again on repair)."""
    return f"j{judgment_id}-{boundary}"


def _parse_custom_id(custom_id: str) -> tuple[int, str] | None:
    """(row id, boundary) of a batch line's id; None for one not ours."""
    head, _, boundary = custom_id.partition("-")
    return (int(head[1:]), boundary) if head.startswith("j") and head[1:].isdigit() and boundary else None


async def judge_by_batch(store: Store, run: Run, rubric: Rubric, client: JudgeClient, *, prices: PriceTable,
                         poll_seconds: float, on_progress: Callable[[Progress], None] | None = None,
                         new_parts: bool = True, cancel: asyncio.Event | None = None) -> RunOutcome:
    """Send the run's pending rows as batches (unless `new_parts` is False: only wait for those sent before), wait
    for every batch to end, and save the verdicts; the rows no batch answered stay pending with the reason.

    Setting `cancel` asks the provider to cancel the batches; what they answered before is still collected.
    """
    cancel = cancel or asyncio.Event()
    cancelled = False
    owner = process_name()
    if not await asyncio.to_thread(store.claim_run, run.id, owner=owner, stale_after=STALE_AFTER):
        raise RunBusy(f"run {run.id} is being judged by another judgebot process right now")
    started = time.monotonic()
    reasons: list[str] = []
    try:
        if new_parts:
            await _send_pending(store, run, rubric, client, prices)
        while parts := await asyncio.to_thread(open_parts, store, run.id):
            for part in parts:
                if part.state == UPLOADING:
                    await _upload(store, part, rubric, client, run)
                    continue
                reason = await _poll(store, part, rubric, client, prices)
                if reason:
                    reasons.append(reason)
            await asyncio.to_thread(store.beat, run.id, owner)
            if on_progress is not None:
                on_progress(await asyncio.to_thread(_progress, store, run.id, started))
            if await asyncio.to_thread(open_parts, store, run.id):
                try:
                    await asyncio.wait_for(cancel.wait(), poll_seconds)
                except TimeoutError:
                    pass
            if cancel.is_set() and not cancelled:
                cancelled = True
                await _cancel(store, run.id, client)
    except BatchUnavailable as err:
        reasons.append(str(err))
    finally:
        counts = await asyncio.to_thread(store.status_counts, run.id)
        pending = counts.get(RowState.PENDING, 0)
        status = RunState.CANCELLED if cancelled else RunState.PAUSED if pending else RunState.DONE
        reason = "cancelled" if cancelled else "; ".join(reasons) if pending and reasons else (
            "interrupted" if pending else None)
        await asyncio.to_thread(store.update_run, run.id, held_by=owner, status=status, stop_reason=reason,
                                finished_at=utcnow(), owner=None)
    return RunOutcome(run.id, status, reason, counts)


async def _cancel(store: Store, run_id: int, client: JudgeClient) -> None:
    """Ask the provider to cancel every batch of the run still running (a part never sent just ends)."""
    for part in await asyncio.to_thread(open_parts, store, run_id):
        if part.batch_id is None:
            await asyncio.to_thread(update_part, store, part.id, state=ENDED, error="cancelled before it was sent")
            continue
        try:
            await client.client.batches.cancel(part.batch_id)
        except openai.APIError as err:  # ended meanwhile, or the endpoint refuses: the next look says which
            log.warning("cancelling batch %s failed: %s", part.batch_id, err)


def _progress(store: Store, run_id: int, started: float) -> Progress:
    """Rows saved, and the requests the batches still running report answered (from their request counts)."""
    counts = store.status_counts(run_id)
    total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
    answered = sum(part.done + part.failed for part in open_parts(store, run_id))
    done = min(total, total - counts.get(RowState.PENDING, 0) + answered)
    errors = counts.get(RowState.INVALID, 0) + counts.get(RowState.ERROR, 0)
    return Progress(run_id, done, total, errors, 0, done, time.monotonic() - started)


async def _send_pending(store: Store, run: Run, rubric: Rubric, client: JudgeClient, prices: PriceTable) -> None:
    """Every pending row not in a batch yet: a cached verdict reused at once, the others sent in parts."""
    taken = {judgment_id for part in await asyncio.to_thread(open_parts, store, run.id)
             for judgment_id in part.judgment_ids}
    lines: list[_Line] = []
    size = 0
    after = 0
    while batch := await asyncio.to_thread(store.pending, run.id, after_id=after):
        after = batch[-1].id
        for row in batch:
            if row.id in taken:
                continue
            triple = Triple(question=row.question, reference=row.reference, answer=row.answer)
            key = cache_key(rubric, client.model, triple)
            cached = None if run.fresh else await asyncio.to_thread(store.find_cached, key)
            if cached is not None:
                verdict = reused_verdict(cached, rubric, client.model, triple)
                await asyncio.to_thread(store.save_verdict, row.id, verdict, cache_key=key, cached_from=cached.id)
                continue
            line = _line(row, triple, rubric, client)
            if lines and (len(lines) >= MAX_REQUESTS or size + len(line.text) > MAX_BYTES):
                await _upload(store, await asyncio.to_thread(add_part, store, run.id,
                                                             [item.judgment.id for item in lines]),
                              rubric, client, run, lines)
                lines, size = [], 0
            lines.append(line)
            size += len(line.text) + 1
    if lines:
        part = await asyncio.to_thread(add_part, store, run.id, [item.judgment.id for item in lines])
        await _upload(store, part, rubric, client, run, lines)


def _line(row: Judgment, triple: Triple, rubric: Rubric, client: JudgeClient) -> _Line:
    boundary = new_boundary()
    body = client.request_body(build_messages(rubric, triple, boundary), schema_name=schema_name(rubric),
                               schema=rubric.reply_schema)
    custom_id = _custom_id(row.id, boundary)
    text = json.dumps({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)
    return _Line(row, custom_id, text)


async def _upload(store: Store, part: RunBatch, rubric: Rubric, client: JudgeClient, run: Run,
                  lines: list[_Line] | None = None) -> None:
    """Upload a saved part's file and create its batch, saving each id as it comes; a part whose batch was created
    before a stop is found again by its metadata rather than created twice."""
    api = client.client
    try:
        if part.input_file_id is None:
            if lines is None:  # saved before a stop, never uploaded: its requests are made again
                rows = {row.id: row for row in await asyncio.to_thread(_rows, store, part.judgment_ids)}
                lines = [_line(rows[judgment_id], Triple(question=rows[judgment_id].question,
                                                         reference=rows[judgment_id].reference,
                                                         answer=rows[judgment_id].answer), rubric, client)
                         for judgment_id in part.judgment_ids if judgment_id in rows]
            content = "".join(line.text + "\n" for line in lines).encode()
            uploaded = await api.files.create(file=(f"judgebot-run{run.id}-part{part.id}.jsonl", content),
                                              purpose="batch")
            part.input_file_id = uploaded.id
            await asyncio.to_thread(update_part, store, part.id, input_file_id=uploaded.id)
        batch_id = await _existing_batch(api, part) or (await api.batches.create(
            input_file_id=part.input_file_id, endpoint="/v1/chat/completions", completion_window="24h",
            metadata={"judgebot_part": str(part.id), "judgebot_run": str(run.id)})).id
        await asyncio.to_thread(update_part, store, part.id, batch_id=batch_id, state=SENT, status="validating")
    except openai.NotFoundError as err:
        await asyncio.to_thread(update_part, store, part.id, state=ENDED, error="no Batch API")
        raise BatchUnavailable(NO_BATCH_API.format(detail=f"404 on {err.request.url.path}", run=run.id)) from None


def _rows(store: Store, judgment_ids: list[int]) -> list[Judgment]:
    from sqlmodel import col, select

    with store.session() as session:
        return list(session.exec(select(Judgment).where(col(Judgment.id).in_(judgment_ids),
                                                        Judgment.status == RowState.PENDING)))


async def _existing_batch(api: openai.AsyncOpenAI, part: RunBatch) -> str | None:
    """The batch of a part created before a stop, found by its metadata among the newest batches; None if none."""
    async for batch in api.batches.list(limit=100):
        if (batch.metadata or {}).get("judgebot_part") == str(part.id) and batch.input_file_id == part.input_file_id:
            return batch.id
        if batch.created_at < time.time() - 86_400 * 2:  # older than any part still open
            break
    return None


async def _poll(store: Store, part: RunBatch, rubric: Rubric, client: JudgeClient, prices: PriceTable) -> str | None:
    """Check one sent part; when it has ended, save its verdicts. The reason its unanswered rows stay pending."""
    assert part.batch_id is not None
    batch = await client.client.batches.retrieve(part.batch_id)
    counts = batch.request_counts
    await asyncio.to_thread(update_part, store, part.id, status=batch.status, done=counts.completed if counts else 0,
                            failed=counts.failed if counts else 0)
    if batch.status not in FINAL:
        return None
    answered = 0
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            answered += await _collect(store, (await client.client.files.content(file_id)).text, rubric, client,
                                       prices)
    left = len(part.judgment_ids) - answered
    reason = None
    if left > 0:
        why = "; ".join(error.message or error.code or "" for error in (batch.errors.data or [])[:3]) \
            if batch.errors else ""
        reason = (f"batch {batch.id} {batch.status} with {left:,} of its {len(part.judgment_ids):,} rows not judged"
                  + (f" ({why})" if why else "") + ": resume the run live, or with --batch as a new batch")
    await asyncio.to_thread(update_part, store, part.id, state=ENDED, error=reason)
    return reason


async def _collect(store: Store, content: str, rubric: Rubric, client: JudgeClient, prices: PriceTable) -> int:
    """Save the verdict of every answered line of a batch's output or error file; how many lines were answered."""
    answered = 0
    for raw in content.splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        found = _parse_custom_id(str(line.get("custom_id") or ""))
        response = line.get("response") or {}
        if found is None or response.get("status_code") != 200:
            continue  # expired or refused: the row stays pending
        judgment_id, boundary = found
        rows = await asyncio.to_thread(_rows, store, [judgment_id])
        if not rows:
            answered += 1  # saved already
            continue
        row = rows[0]
        triple = Triple(question=row.question, reference=row.reference, answer=row.answer)
        verdict = await _verdict(rubric, triple, client, boundary, response["body"], prices)
        await asyncio.to_thread(store.save_verdict, row.id, verdict, cache_key=cache_key(rubric, client.model, triple))
        answered += 1
    return answered


async def _verdict(rubric: Rubric, triple: Triple, client: JudgeClient, boundary: str, body: dict[str, Any],
                   prices: PriceTable) -> Verdict:
    """A batch reply validated like a live one (its repair, when needed, asked live), costed at the batch price for
    the batch reply and the live price for the repair."""
    try:
        first = completion_from(body)
    except (NotACompletion, JudgebotError) as err:
        return Verdict(status=RowState.ERROR, error=str(err), **_provenance(rubric, client, triple))
    verdict = await judge(rubric, triple, client, boundary=boundary, first=first)
    batch_cost = prices.cost(client.model, first.tokens_in, first.tokens_out, first.cached_tokens, batch=True)
    live_cost = prices.cost(client.model, verdict.tokens_in - first.tokens_in, verdict.tokens_out - first.tokens_out,
                            verdict.tokens_cached - first.cached_tokens)
    verdict.cost_usd = None if batch_cost is None or live_cost is None else batch_cost + live_cost
    return verdict


def _provenance(rubric: Rubric, client: JudgeClient, triple: Triple) -> dict[str, Any]:
    from bot.judge import provenance

    return provenance(rubric, client.model, triple)
