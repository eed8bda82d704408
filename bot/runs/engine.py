"""One engine behind every face: a request (a file's rows, one triple, or a run to go on with) saved, estimated and
weighed by the budget rule, judged live or through the Batch API, and ended, the same way whichever face asked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.judge.lifetime import JudgeWatch
from bot.judge.panel import Panel
from bot.judge.samples import UNSURE_SPREAD
from bot.records import CLAIMABLE, RowState, RunState, Triple
from bot.rubric import Rubric
from bot.runs.budget import Ask, Budget, Limits, Weighed, weigh
from bot.runs.ending import End, Ending
from bot.runs.estimate import Estimate, context_windows, estimate_run
from bot.runs.execute import execute_run
from bot.runs.job import RowKeys
from bot.runs.one_triple import settle_triple
from bot.runs.progress import Progress, RunOutcome
from bot.runs.shutdown_reads import read_shutdowns
from bot.runs.start import Origin, start_csv_run, start_single_run
from bot.store import (
    COST_NOT_AGREED,
    Run,
    Store,
    background_window,
    get_run,
    month_spent,
    open_parts,
    process_name,
    reset_rows,
    update_run,
)

if TYPE_CHECKING:
    from bot.csvfiles.rows import CsvSource

OnProgress = Callable[[Progress], None] | None


class Tier(StrEnum):
    """How a run's rows are judged: live, in the background within a completion window (the Responses API: 2 h or
    8 h, each cheaper than live), or through the Batch API (within 24 h, at half the price)."""

    LIVE = "live"
    BACKGROUND_2H = "2h"
    BACKGROUND_8H = "8h"
    BATCH = "batch"

    @property
    def background(self) -> bool:
        """Whether the tier is a background completion window."""
        return self in (Tier.BACKGROUND_2H, Tier.BACKGROUND_8H)


class Answer(StrEnum):
    """A face's answer to a run the budget rule asks about."""

    YES = "yes"  # judge it now
    NO = "no"  # not judged: a new run is cancelled, one gone on with keeps its pending rows
    LATER = "later"  # asked, and the answer comes later (a button): the run waits, and is judged by another request


@dataclass(frozen=True)
class Question:
    """What a face is asked before a run is judged: the run, its estimate, and the estimate weighed by the budget
    rule (`asks`: why a person must agree; none: it may start at once)."""

    run: Run
    estimate: Estimate
    weighed: Weighed

    @property
    def asks(self) -> tuple[Ask, ...]:
        """Why a person must agree first, in the order to ask."""
        return self.weighed.asks


@dataclass(frozen=True)
class Rows:
    """What a new run holds (a file's rows or one triple), who asked for it, and how its rows are saved."""

    source: CsvSource | Triple
    origin: Origin
    model_name: str | None = None
    fresh: bool = False
    swap: bool = True  # a pair is shown in both orders
    results_path: str | None = None  # where the terminal writes the results, kept for a resume
    message_ts: str | None = None  # the message that will show one triple's verdict


@dataclass(frozen=True)
class Request:
    """What a face asks the engine to judge, and how.

    `rows` are saved as a new run, or name a run to go on with (`new` when the face started it just now). A person
    who agreed already (a click on Start) is not asked again (`agreed`); one who agreed to go past the monthly budget
    (`past_budget`) is not paused there. A run that is not `resumable` (one triple nobody comes back to) ends a
    paused row as an error. The end: results written to `results` (and with `record_results` kept by the run), a
    run that paused ended as far as it got when `partial`; with `end` off the face ends the run in a step of its own
    (`Engine.ending.end`).
    """

    rubric: Rubric
    panel: Panel
    rows: Rows | Run
    limits: Limits = field(default_factory=Limits)
    tier: Tier = Tier.LIVE
    new: bool = False
    agreed: bool = False
    past_budget: bool = False
    concurrency: int = 1
    rejudge: tuple[RowState, ...] = ()
    statuses: tuple[str, ...] = CLAIMABLE
    cancel: asyncio.Event | None = None
    resumable: bool = True
    results: Path | None = None
    record_results: bool = False
    partial: bool = False
    end: bool = True


class NotJudged(Exception):
    """Raised by a face before anything is sent (a card that cannot be posted): a new run is cancelled with the
    reason, and the engine returns."""


class Face:
    """How a face asks and how it shows, as the engine calls it. The defaults suit a face with nobody to ask (an
    agent): what the budget rule asks about is refused."""

    async def saved(self, run: Run) -> None:
        """The run is saved, its rows pending, before its estimate."""

    async def agree(self, question: Question) -> Answer:
        """Whether to judge the run now (see `Answer`)."""
        return Answer.NO if question.asks else Answer.YES

    def judging(self, run: Run, tier: Tier, sending: bool) -> AbstractAsyncContextManager[OnProgress]:
        """Around the judging (`sending`: new requests go out; off, batches sent before are waited for): what shows
        the progress."""
        return _unseen()

    async def judged(self, run: Run, outcome: RunOutcome) -> None:
        """The judging is over, before the end."""


@asynccontextmanager
async def _unseen() -> AsyncIterator[OnProgress]:
    yield None


@dataclass(frozen=True)
class Ended:
    """What came of a request: the run as it is now, what was asked (None: nothing), the answer, how the judging
    ended (None: not judged), whether another process took the run over, and its end (None: not ended here)."""

    run: Run
    question: Question | None = None
    answer: Answer = Answer.YES
    outcome: RunOutcome | None = None
    taken: bool = False
    end: End | None = None

    @property
    def paused(self) -> bool:
        """Whether the judging paused with rows left (a quota, a key, the budget)."""
        return self.outcome is not None and self.outcome.status == RunState.PAUSED


@dataclass(frozen=True)
class Engine:
    """The one path every face's requests take, over one history."""

    store: Store
    unsure_spread: float = UNSURE_SPREAD
    poll_seconds: float = 30.0  # between two looks at a run's batches
    ending: Ending = field(default_factory=Ending)

    @classmethod
    def from_settings(cls, store: Store, settings: Settings) -> Engine:
        """The engine the settings describe; SetupError when JUDGE_SHUTDOWNS cannot be read."""
        return cls(store, unsure_spread=settings.unsure_spread, poll_seconds=settings.batch_poll_seconds,
                   ending=Ending(settings.review_sample_rate, JudgeWatch.from_settings(settings)))

    async def judge(self, request: Request, face: Face) -> Ended:
        """Save the request's rows (unless it names a run), choose the tier, weigh the estimate and ask the face when
        the budget rule says to, judge, and end the run (see `Request`)."""
        new = request.new or isinstance(request.rows, Rows)
        async with request.panel:
            # The judges' shutdown dates as their endpoints list them, read (at most once a day) while the run goes on.
            reading = asyncio.create_task(read_shutdowns(self.ending.watch, self.store, request.panel.clients))
            try:
                run = request.rows if isinstance(request.rows, Run) else await self.start(request.rubric,
                                                                                          request.panel, request.rows)
                await face.saved(run)
                tier, sending = await self.tier_of(run, request.tier)
                keys = RowKeys()  # the rows' keys the estimate works out, taken by the judging rather than made again
                question, answer, budget = await self._agreed(run, request, face, tier, sending, new=new, keys=keys)
                if answer != Answer.YES:
                    return Ended(run, question, answer)
                try:
                    async with face.judging(run, tier, sending) as on_progress:
                        outcome = await self._judge(run, request, tier, sending, budget, on_progress, keys)
                except NotJudged as err:
                    await self.refused(run, new=new, reason=str(err))
                    return Ended(run, question, Answer.NO)
                await reading  # bounded by READ_SECONDS, and mostly done long before
            finally:
                reading.cancel()
        return await self._ended(run, request, face, question, outcome)

    async def _agreed(self, run: Run, request: Request, face: Face, tier: Tier, sending: bool, *,
                      new: bool, keys: RowKeys | None = None) -> tuple[Question | None, Answer, Budget | None]:
        """(what was asked, the answer, what the run may spend before it pauses). A run agreed to already, or with
        nothing new to send, goes on, held to what is left of the month's budget; else its estimate is weighed by
        the budget rule and the face asked. A run not agreed to (or whose estimate or question fails) is refused."""
        if request.agreed or not sending:
            weighed = await self.weigh_spend(request.limits)
            return None, Answer.YES, weighed.budget(past=request.past_budget or not sending)
        try:
            question = await self.question(run, request.rubric, request.panel, request.limits, tier, keys=keys)
            answer = await face.agree(question)
        except BaseException:
            await self.refused(run, new=new)
            raise
        if answer == Answer.NO:
            await self.refused(run, new=new)
        return question, answer, question.weighed.budget(past=request.past_budget or Ask.OVER in question.asks)

    async def _ended(self, run: Run, request: Request, face: Face, question: Question | None,
                     outcome: RunOutcome) -> Ended:
        """After the judging: a triple nobody comes back to settled, the face told, and the run ended unless another
        process took it over, or it paused with rows to resume (and is not to be ended as far as it got)."""
        if not request.resumable:
            await asyncio.to_thread(settle_triple, self.store, run, request.rubric, outcome.stop_reason, process_name())
        await face.judged(run, outcome)
        current = await asyncio.to_thread(get_run, self.store, run.id) or run
        taken = current.owner not in (None, process_name())
        end = None
        if request.end and not taken and (outcome.status != RunState.PAUSED or request.partial or
                                          not request.resumable):
            end = await self.ending.end(self.store, current, request.rubric, outcome=outcome,
                                        results=request.results, record=request.record_results)
        return Ended(current, question, Answer.YES, outcome, taken, end)

    async def start(self, rubric: Rubric, panel: Panel, rows: Rows) -> Run:
        """Save a new run of `rows`, every row pending (off the event loop)."""
        fields = {**panel.run_fields(), "model_name": rows.model_name, "fresh": rows.fresh, "origin": rows.origin}
        if isinstance(rows.source, Triple):
            return await asyncio.to_thread(start_single_run, self.store, rubric=rubric, triple=rows.source,
                                           message_ts=rows.message_ts, **fields)
        return await asyncio.to_thread(start_csv_run, self.store, rubric=rubric, source=rows.source,
                                       results_path=rows.results_path, swap=rows.swap, **fields)

    async def tier_of(self, run: Run, asked: Tier) -> tuple[Tier, bool]:
        """The tier a run is judged in, and whether new requests go out: a run with batches sent before waits for
        them (never sending them again), and sends new ones only when the Batch API is asked for; a run asked in a
        background window goes on in it (its latest), polling the requests still open (a stop came while it waited
        for them) and asking the rows not asked yet: a run paused by an outage or its budget is not resumed live at
        the full price."""
        if asked == Tier.BATCH or asked.background:
            return asked, True
        if await asyncio.to_thread(open_parts, self.store, run.id):
            return Tier.BATCH, False
        if (window := await asyncio.to_thread(background_window, self.store, run.id)) is not None:
            return Tier(window), True
        return Tier.LIVE, True

    async def question(self, run: Run, rubric: Rubric, panel: Panel, limits: Limits, tier: Tier = Tier.LIVE, *,
                       keep: bool = True, keys: RowKeys | None = None) -> Question:
        """The run's estimate (of its pending rows, in `tier`; with `keep`, saved with the run the first time) weighed
        by the budget rule against `limits`; the rows' keys it works out handed on in `keys`."""
        windows = await context_windows(panel)
        estimate = await asyncio.to_thread(estimate_run, self.store, run, rubric, panel, batch=tier == Tier.BATCH,
                                           keep=keep, windows=windows,
                                           background=tier.value if tier.background else None, keys=keys)
        spent = (await self.weigh_spend(limits)).spent
        return Question(run, estimate, weigh(estimate.cost_usd, estimate.unpriced_requests, limits, spent))

    async def weigh_spend(self, limits: Limits) -> Weighed:
        """The month's spend against `limits`, with no estimate to weigh (a run agreed to already)."""
        if limits.monthly is None:
            return Weighed((), limits)
        return Weighed((), limits, await asyncio.to_thread(month_spent, self.store, limits.channel_id))

    async def refused(self, run: Run, *, new: bool, reason: str = COST_NOT_AGREED) -> None:
        """Nothing judged: a `new` run is cancelled with `reason`; one gone on with keeps its pending rows."""
        if new:
            await asyncio.to_thread(update_run, self.store, run.id, status=RunState.CANCELLED, stop_reason=reason)

    async def _judge(self, run: Run, request: Request, tier: Tier, sending: bool, budget: Budget | None,
                     on_progress: OnProgress, keys: RowKeys | None = None) -> RunOutcome:
        panel = request.panel
        if tier.background:
            from bot.runs.background import judge_in_background  # the Responses API's background mode, when asked for

            if request.rejudge:
                await asyncio.to_thread(reset_rows, self.store, run.id, request.rejudge)
            return await judge_in_background(self.store, run, request.rubric, panel, window=tier.value,
                                             poll_seconds=self.poll_seconds, on_progress=on_progress,
                                             cancel=request.cancel, unsure_spread=self.unsure_spread,
                                             concurrency=request.concurrency, budget=budget)
        if tier == Tier.BATCH:
            from bot.runs.batch import judge_by_batch  # the Batch API's files and polls: loaded when asked for

            if request.rejudge:
                await asyncio.to_thread(reset_rows, self.store, run.id, request.rejudge)
            return await judge_by_batch(self.store, run, request.rubric, panel, prices=panel.prices,
                                        poll_seconds=self.poll_seconds, on_progress=on_progress, new_parts=sending,
                                        cancel=request.cancel, unsure_spread=self.unsure_spread)
        return await execute_run(self.store, run, request.rubric, panel, concurrency=request.concurrency,
                                 on_progress=on_progress, cancel=request.cancel, rejudge=request.rejudge,
                                 statuses=request.statuses, unsure_spread=self.unsure_spread, budget=budget, keys=keys)
