"""What a run's batch files hold and what their replies become: one line per slot (a row, a judge of the panel, a
sample), named so that its reply finds its row again; each reply validated like a live one and saved as the row's
verdict (one judge asked once) or as one of the row's samples, the row's verdict once every slot has one."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.errors import JudgebotError
from bot.judge.judgment import judge
from bot.judge.prompt import build_messages, new_boundary, schema_name
from bot.judge.samples import Sampled
from bot.judge.verdicts import combine, failed, from_sample, reused
from bot.llm.answers import Completion, NotACompletion, completion_from
from bot.llm.responses_api import is_response, response_completion
from bot.records import Triple, Verdict
from bot.runs.job import RunJob
from bot.store import (
    ID_CHUNK,
    Judgment,
    RowVerdict,
    Slot,
    find_cached,
    known_samples,
    pending_rows,
    samples_by_judgment,
    save_sample,
    save_verdict,
    save_verdicts,
    triple_of,
)

CUSTOM_ID = re.compile(r"j(\d+)(?:-k(\d+)-s(\d+))?-(.+)")  # lines sent before juries were batched name no judge
ANSWERS_AT_ONCE = 256  # replies of an output file validated together (a repair, when needed, is asked live)



@dataclass
class Line:
    """One request of a batch file, and the slot it asks for."""

    slot: Slot
    text: str


def custom_id(slot: Slot, boundary: str) -> str:
    """The id a batch line carries: its row, judge and sample, and the boundary its texts were fenced with (asked
    again on repair)."""
    judgment_id, judge_index, number = slot
    return f"j{judgment_id}-k{judge_index}-s{number}-{boundary}"


def parse_custom_id(text: str) -> tuple[Slot, str] | None:
    """(slot, boundary) of a batch line's id; None for one not ours."""
    found = CUSTOM_ID.fullmatch(text)
    if found is None:
        return None
    judgment_id, judge_index, number, boundary = found.groups()
    return (int(judgment_id), int(judge_index or 0), int(number or 1)), boundary


def make_line(job: RunJob, row: Judgment, judge_index: int, number: int) -> Line:
    """The batch line asking the judge at `judge_index` for sample `number` of `row`, with that judge's model and
    temperature, through the API that judge is asked through (Chat Completions or Responses)."""
    boundary = new_boundary()
    client = job.client(judge_index)
    body = client.request_body(build_messages(job.rubric, triple_of(row), boundary),
                                                schema_name=schema_name(job.rubric), schema=job.rubric.reply_schema)
    slot = (row.id, judge_index, number)
    text = json.dumps({"custom_id": custom_id(slot, boundary), "method": "POST", "url": client.batch_url, "body": body},
                      ensure_ascii=False)
    return Line(slot, text)


async def save_screened(job: RunJob, row: Judgment) -> bool:
    """Save the verdict of a row never sent to a judge (RunJob.screened) as a live run saves it; False for a row to
    send."""
    triple = triple_of(row)
    if (verdict := job.screened(triple)) is None:
        return False
    await asyncio.to_thread(save_verdict, job.store, row.id, verdict, cache_key=job.row_key(triple))
    return True


def settle(job: RunJob, rows: list[Judgment], taken: set[Slot]) -> list[Slot]:
    """The slots of `rows` still to ask, after reusing what the history holds (verdicts, samples) and making a row
    whose every slot has a sample its verdict. Slots in `taken` are in a batch already."""
    if job.single:
        return [(row.id, 0, 1) for row in rows if (row.id, 0, 1) not in taken and not _reuse_verdict(job, row)]
    missing: list[Slot] = []
    for row in rows:
        missing += _reuse_samples(job, row, taken)
    return missing


def _reuse_verdict(job: RunJob, row: Judgment) -> bool:
    """Save a cached verdict on the same texts as the row's; False when there is none."""
    triple = triple_of(row)
    key = job.row_key(triple)
    cached = find_cached(job.store, key, run_id=job.scope)
    if cached is None:
        return False
    save_verdict(job.store, row.id, reused(cached, job.rubric, job.client(0).model, triple), cache_key=key,
                           cached_from=cached.id)
    return True


def _reuse_samples(job: RunJob, row: Judgment, taken: set[Slot]) -> list[Slot]:
    """A row's slots with no sample saved, none to reuse and none in a batch; its verdict saved when none is left."""
    triple = triple_of(row)
    keys = {(index, number): job.sample_key(triple, job.client(index), number)
            for index in range(len(job.panel.clients)) for number in range(1, job.panel.samples + 1)}
    saved, cached = known_samples(job.store, row.id, keys.values(), run_id=job.scope)
    have = {(sample.judge_model, sample.sample) for sample in saved}
    reused: dict[tuple[str, int], int] = {}
    missing: list[Slot] = []
    in_batch = False
    for (index, number), key in keys.items():
        model = job.client(index).model
        if (model, number) in have:
            continue
        if (found := cached.get(key)) is not None:
            save_sample(job.store, judgment_id=row.id, run_id=job.run.id, judge_model=model, sample=number,
                        verdict=from_sample(found, job.rubric, triple, reused=True), cache_key=key,
                        cached_from=found.id)
            reused[(model, number)] = found.judgment_id
        elif (row.id, index, number) in taken:
            in_batch = True
        else:
            missing.append((row.id, index, number))
    if not missing and not in_batch:
        finish_rows(job, [row], reused)
    return missing


def finish_rows(job: RunJob, rows: Iterable[Judgment], reused: dict[tuple[str, int], int] | None = None) -> int:
    """Save the verdict of each row whose every slot has a sample, combined as live; how many were saved.

    `reused` names the judgment each slot reused just now was taken from: a row reused whole from one judgment
    records it, as live.
    """
    rows = list(rows)
    found = samples_by_judgment(job.store, [row.id for row in rows])
    saved = 0
    for row in rows:
        by_slot = {(sample.judge_model, sample.sample): sample for sample in found.get(row.id, [])}
        slots = [(client.model, number) for client, number in job.panel.slots]
        if not all(slot in by_slot for slot in slots):
            continue
        triple = triple_of(row)
        sampled = [Sampled(model, number, from_sample(by_slot[(model, number)], job.rubric, triple),
                           (reused or {}).get((model, number))) for model, number in slots]
        verdict = combine(sampled, judge_model=job.judge_model, unsure_spread=job.unsure_spread)
        sources = {item.reused_from for item in sampled}
        source = sources.pop() if len(sources) == 1 and None not in sources else None
        saved += save_verdict(job.store, row.id, verdict, cache_key=job.row_key(triple), cached_from=source)
    return saved


async def collect(job: RunJob, content: str, asked: set[Slot]) -> int:
    """Save what the lines of a batch's output or error file give, for the slots of `asked` (those its part sent, as
    recorded before upload); how many lines were answered.

    A line is taken only for a slot still in `asked`, which it leaves: a line naming another run's row, another judge,
    a sample never asked for, or a slot answered already is ignored. A line that cannot be read ends only its own
    request, as an error saying why; one that names no slot at all cannot end any, and leaves nothing.
    """
    answers: list[tuple[Slot, str, dict[str, Any] | str | Completion]] = []
    for raw in content.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # no slot can be told from it: its request stays to ask
        found = parse_custom_id(str(line.get("custom_id") or "")) if isinstance(line, dict) else None
        if found is None or found[0] not in asked:
            continue
        slot, boundary = found
        response = line.get("response")
        if response is None:
            continue  # expired or refused with no response: its slot stays to ask
        asked.discard(slot)
        if not isinstance(response, dict):
            answers.append((slot, boundary, "the batch's line for this request holds no response object"))
        elif response.get("status_code") != 200:
            asked.add(slot)  # refused: its slot stays to ask
        else:
            body = response.get("body")
            answers.append((slot, boundary, body if isinstance(body, dict) else
                            "the batch's line for this request holds no reply body object"))
    for start in range(0, len(answers), ANSWERS_AT_ONCE):
        await save_answers(job, answers[start:start + ANSWERS_AT_ONCE])
    return len(answers)


async def save_answers(job: RunJob, answers: list[tuple[Slot, str, dict[str, Any] | str | Completion]], *,
                       tier: str = "batch") -> float:
    """Validate replies that came later (of a batch, or of background responses: `tier`) together (repairs asked
    live meanwhile), save each, then the verdicts of the rows they complete; what the replies saved cost (their
    repairs included). A problem every request would hit (RunStopped) is raised once the others are saved."""
    rows, done = await asyncio.to_thread(_open_slots, job, [slot for slot, _, _ in answers])
    asked = [(slot, boundary, body) for slot, boundary, body in answers if slot[0] in rows and slot not in done]
    results = await asyncio.gather(*(reply_verdict(job, triple_of(rows[slot[0]]), slot[1], boundary, body, tier)
                                     for slot, boundary, body in asked), return_exceptions=True)
    verdicts = [(slot, result) for (slot, _, _), result in zip(asked, results, strict=True)
                if isinstance(result, Verdict)]
    await asyncio.to_thread(_save_verdicts, job, rows, verdicts)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return sum(verdict.cost_usd or 0.0 for _, verdict in verdicts)


def _open_slots(job: RunJob, slots: list[Slot]) -> tuple[dict[int, Judgment], set[Slot]]:
    """The pending rows of `slots`, and those of the slots with a sample saved already (collected before a stop):
    their replies are not validated again, so no repair is paid twice."""
    rows = {row.id: row for row in pending_rows(job.store, (slot[0] for slot in slots))}
    if job.single:
        return rows, set()
    index = {client.model: number for number, client in enumerate(job.panel.clients)}
    saved = samples_by_judgment(job.store, list(rows))
    return rows, {(judgment_id, index[sample.judge_model], sample.sample) for judgment_id, found in saved.items()
                  for sample in found if sample.judge_model in index}


def _save_verdicts(job: RunJob, rows: dict[int, Judgment], verdicts: list[tuple[Slot, Verdict]]) -> None:
    """Each reply as its row's verdict (one judge asked once) or as a sample; then the verdicts of the rows whose
    every slot has a sample."""
    if job.single:
        single = [RowVerdict(judgment_id, verdict, job.row_key(triple_of(rows[judgment_id])))
                  for (judgment_id, _, _), verdict in verdicts]
        for start in range(0, len(single), ID_CHUNK):  # a transaction for each chunk of rows
            save_verdicts(job.store, single[start:start + ID_CHUNK])
        return
    for (judgment_id, judge_index, number), verdict in verdicts:
        save_sample(job.store, judgment_id=judgment_id, run_id=job.run.id, judge_model=job.client(judge_index).model,
                    sample=number, verdict=verdict,
                    cache_key=job.sample_key(triple_of(rows[judgment_id]), job.client(judge_index), number))
    finish_rows(job, rows.values())  # every row this file answers: also those whose samples were all saved before


async def reply_verdict(job: RunJob, triple: Triple, judge_index: int, boundary: str,
                        body: dict[str, Any] | str | Completion, tier: str = "batch") -> Verdict:
    """A reply that came later (a batch line's, a background response's) validated like a live one (its repair, when
    needed, asked live), costed at `tier`'s price for that reply and the live price for the repair; a line that could
    not be read (`body` says why) is an error."""
    client = job.client(judge_index)
    if isinstance(body, str):
        return failed(job.rubric, client.model, triple, body)
    try:
        first = body if isinstance(body, Completion) else (
            response_completion(body) if is_response(body) else completion_from(body))
    except (NotACompletion, JudgebotError) as err:
        return failed(job.rubric, client.model, triple, str(err))
    return await judge(job.rubric, triple, client, prices=job.panel.prices, boundary=boundary, batch_reply=first,
                       reply_tier=tier)
