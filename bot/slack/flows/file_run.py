"""The run of a CSV shared in Slack: its rows saved and judged with a live progress message, paused, cancelled or
resumed. How a file gets here is in file_intake; its end (summary, results) in file_summary."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from bot.config import Settings
from bot.csvfiles.rows import CsvSource
from bot.errors import RubricChanged, RunBusy, RunNotResumable, SetupError
from bot.figures import money
from bot.judge.panel import Panel
from bot.records import RESUMABLE, RowState, ShareState
from bot.rubric import Rubric
from bot.runs import Answer, Engine, Face, Limits, Origin, Question, Request, Rows, Tier
from bot.runs.budget import Ask, Weighed
from bot.runs.engine import OnProgress
from bot.runs.replica_help import Assist
from bot.runs.resume import judge_on_resume
from bot.runs.start import FILE_SOURCE
from bot.slack.admins import admin_refusal
from bot.slack.context import SAY_LATER, Context
from bot.slack.files import file_origin
from bot.slack.flows import file_summary, share_thread
from bot.slack.flows.progress import EDIT_EVERY, ProgressMessage
from bot.slack.flows.progress_stream import APPEND_EVERY, StreamedProgress, end_stream
from bot.slack.messenger import OUR_FAULT
from bot.slack.text import escape
from bot.slack.views import budget as budget_view
from bot.slack.views import file_run as view
from bot.slack.views import run_stream
from bot.slack.views.blocks import notice
from bot.slack.views.budget import RAISE_BUDGET
from bot.slack.views.run_stream import RunStream
from bot.store import (
    Run,
    SharedFile,
    channel_judge,
    cost_limits,
    get_run,
    move_share,
    status_counts,
    update_run,
    update_share,
)

log = logging.getLogger(__name__)

OVER_BUDGET = ("This run would take the channel over its monthly budget ({over}): only the workspace's admins, and "
               "the people JUDGEBOT_ADMINS names, can start it now. An admin can also raise the budget with "
               "`/judge budget USD`.")
EDITS_PER_MINUTE = 40  # progress edits of all runs together: under Slack's ~50 chat.update calls a minute
APPENDS_PER_MINUTE = 80  # appends to the progress streams of all runs together: under Tier 4's 100 a minute


@dataclass(frozen=True)
class FileLimits:
    """How big a shared file may be, how many rows are judged at once, and where files may come from."""

    max_bytes: int
    max_rows: int
    concurrency: int
    origin: tuple[str, str] | None = None
    edit_every: float = EDIT_EVERY  # seconds between edits of one progress message, at the least
    confirm_above: float = 5.0  # USD of estimate above which a file asks before it is judged (CONFIRM_ABOVE_USD)
    confirm_above_requests: int = 5_000  # requests to judges of unknown price above which it asks too
    admins: frozenset[str] = frozenset()  # besides the workspace's admins, who may start a run over the budget
    batch_poll: float = 30.0  # seconds between two looks at a run's batches (BATCH_POLL_SECONDS)
    stream: bool = True  # the progress streamed into the thread, where Slack allows it (STREAM_PROGRESS)

    @classmethod
    def from_settings(cls, settings: Settings) -> FileLimits:
        """The limits the settings give."""
        return cls(max_bytes=int(settings.csv_max_mb * 1_000_000), max_rows=settings.csv_max_rows,
                   concurrency=settings.concurrency, origin=file_origin(settings.slack_api_url),
                   edit_every=settings.progress_edit_seconds, confirm_above=settings.confirm_above_usd,
                   confirm_above_requests=settings.confirm_above_requests,
                   admins=settings.admin_ids, batch_poll=settings.batch_poll_seconds,
                   stream=settings.stream_progress)


@dataclass
class _Active:
    """A run being judged by this process: how to cancel it, and who asked."""

    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled_by: str | None = None


class FileRuns:
    """Every run over a shared file judged by this process: started by the intake, buttons and restarts; stopped by
    Cancel or shutdown."""

    def __init__(self, ctx: Context, limits: FileLimits) -> None:
        self.ctx, self.limits = ctx, limits
        self.active: dict[int, _Active] = {}
        self.past_budget: set[int] = set()  # runs an admin started over the channel's monthly budget
        self.assist: Assist | None = None  # how this process helps other processes with their runs

    def spawn(self, work: Any, what: str) -> None:
        """Run file work in the background: interrupted at a stop, and taken up again after the restart."""
        self.ctx.tasks.spawn(work, what, interruptible=True)

    @property
    def engine(self) -> Engine:
        """The bot's engine, looking at a run's batches every BATCH_POLL_SECONDS."""
        return dataclasses.replace(self.ctx.engine, poll_seconds=self.limits.batch_poll)

    async def start(self, share: SharedFile, rubric: Rubric, source: CsvSource, model: str | None,
                    samples: int = 1) -> None:
        """Post the progress message, save every row as pending, then judge (each row `samples` times) unless its
        estimate asks first (a question with Start and Cancel, answered by a click)."""
        rubric = await self.ctx.rubric_in(rubric, share.team_id, share.channel_id)  # the channel's revision, if any
        shown = view.loading(share.file_name, rubric.title)
        if share.progress_ts:
            await self.ctx.say.edit(share.channel_id, share.progress_ts, shown, what="a progress message")
        else:
            share.progress_ts = (await share_thread.post(self.ctx, share, shown, what="a progress message")).ts
            if share.progress_ts is None:  # Slack refused the thread: nothing can be shown, so nothing is judged
                await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None,
                                  note="the progress message could not be posted")
                return
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.LOADING, progress_ts=share.progress_ts,
                          rubric_name=rubric.name, model_name=model)
        origin = Origin(source=FILE_SOURCE, team_id=share.team_id, channel_id=share.channel_id,
                        thread_ts=share.thread_ts, user_id=share.user_id)
        own = await self.ctx.db(channel_judge, team_id=share.team_id, channel_id=share.channel_id)
        # the channel's own judge at its effort, when it chose one
        panel = self.ctx.bench.panel(samples, *(own.judge_model, own.reasoning_effort) if own else ())
        face = _FileFace(self, share, rubric)
        await self._judged(face, self._request(face, panel, Rows(source, origin, model_name=model),
                                               limits=await self.limits_of(share)))

    async def judge(self, share: SharedFile, run: Run, rubric: Rubric, *, tier: Tier = Tier.LIVE) -> None:
        """Judge the run's pending rows (agreed to: a click on Start, Resume, a background window or Half price via
        Batch, or a run a restart takes up) with a moving progress message; then pause, or summarise.

        At Tier.BATCH the rows go through the Batch API, at a background tier in the Responses API's background mode;
        a run with batches or background requests sent before waits for them (after a restart too) rather than judge
        their rows again.
        """
        if run.id in self.active:
            return  # this process judges it already
        face = _FileFace(self, share, rubric)
        self.active[run.id] = face.active
        try:
            run = await self._judge_now(share, run)
            panel = self.ctx.panel_of(run)
        except SetupError as err:
            self.active.pop(run.id, None)
            await self._refused(face, err)
            return
        await self._judged(face, self._request(face, panel, run, limits=await self.limits_of(share), agreed=True,
                                               past_budget=run.id in self.past_budget,
                                               tier=tier))

    def _request(self, face: _FileFace, panel: Panel, rows: Rows | Run, **fields: Any) -> Request:
        """What a shared file asks the engine: RESUMABLE runs judged CONCURRENCY rows at a time, Cancel stopping
        them, held to the channel's limits; the end is the file's own (`file_summary`: posted once, after a crash
        too)."""
        return Request(face.rubric, panel, rows, concurrency=self.limits.concurrency, cancel=face.active.cancel,
                       statuses=RESUMABLE, end=False, **fields)

    async def _judged(self, face: _FileFace, request: Request) -> None:
        """The request judged through the engine, and shown: the question it asks first, a failure, a pause, or the
        summary."""
        share, rubric = face.share, face.rubric
        started = time.monotonic()
        try:
            ended = await self.engine.judge(request, face)
        except RunBusy:
            if face.shown is not None:
                await face.shown.close()
            raise
        except (RubricChanged, RunNotResumable, SetupError) as err:
            await self._refused(face, err)
            return
        except asyncio.CancelledError:
            if face.run is not None and face.shown is not None:
                await self._interrupted(share, face.run, rubric, face.shown)
            raise
        except Exception:  # the run is saved: it can go on, so it is paused with Resume rather than lost
            if face.run is None or face.shown is None:
                raise
            log.exception("judging run %s failed", face.run.id)
            await self._pause(share, face.run, rubric, face.shown, OUR_FAULT)
            return
        finally:
            if face.run is not None and self.active.get(face.run.id) is face.active:
                self.active.pop(face.run.id)
        if ended.outcome is None or face.shown is None:
            return  # it asks first: a click judges it
        try:
            if ended.taken:
                await face.shown.close(ending=run_stream.elsewhere())  # another process took the run over
                return
            if ended.paused:
                await self._pause(share, ended.run, rubric, face.shown, ended.outcome.stop_reason or "stopped")
                return
            await face.shown.stop_following()  # the end is shown once the summary is posted
            await file_summary.finish(self.ctx, share, rubric, seconds=time.monotonic() - started,
                                      cancelled_by=face.active.cancelled_by or ended.outcome.cancelled_by,
                                      shown=face.shown)
        except asyncio.CancelledError:
            await share_thread.let_go(self.ctx, share)
            raise

    async def _refused(self, face: _FileFace, err: Exception) -> None:
        """A run that cannot be judged (its rubric changed, its rows never all loaded, a judge not configured): said
        in the progress message, and the file refused."""
        share = face.share
        if face.shown is not None:
            await face.shown.close(view.failed(share.file_name, str(err)), ending=run_stream.refused(str(err)))
        elif share.progress_ts:
            await self.ctx.say.edit(share.channel_id, share.progress_ts, view.failed(share.file_name, str(err)),
                                    what="a progress message")
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None, note=str(err))

    # -- cost -----------------------------------------------------------------------------------------------

    async def limits_of(self, share: SharedFile) -> Limits:
        """What a file shared in a channel is held to: the channel's threshold (else CONFIRM_ABOVE_USD), requests to
        judges of unknown price above CONFIRM_ABOVE_REQUESTS, and the channel's monthly budget."""
        costs = await self.ctx.db(cost_limits, team_id=share.team_id, channel_id=share.channel_id)
        ask_above = costs.confirm_above if costs.confirm_above is not None else self.limits.confirm_above
        return Limits(confirm_above=ask_above, confirm_above_requests=self.limits.confirm_above_requests,
                      monthly=costs.monthly_budget, channel_id=share.channel_id, how_to_raise=RAISE_BUDGET)

    async def ask(self, share: SharedFile, rubric: Rubric, question: Question) -> None:
        """Show the estimate the budget rule asks about, with Start, Half price via Batch and Cancel; a click
        answers."""
        assert share.progress_ts is not None
        estimate = question.estimate
        over = over_text(question.weighed) if Ask.OVER in question.asks else None
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.PAUSED, owner=None,
                          note="waiting for Start: " + (over or f"estimate {estimate.cost_text()}"))
        batch = estimate.through_batch(self.ctx.bench.prices.batch_share)
        windows = self.ctx.bench.judge.api == "responses"  # background windows: the Responses API's alone
        offered = [*(("2h", "8h") if windows else ()), *(("batch",) if batch is not None else ())]
        # Over the budget at the live price, a cheaper tier may fit what is left: anyone may start that one.
        fits = [tier for tier in offered
                if over and tier in estimate.tier_costs and question.weighed.fits(estimate.tier_costs[tier])]
        await self.ctx.say.edit(share.channel_id, share.progress_ts,
                                budget_view.cost_question(question.run, rubric.title, estimate, over_budget=over,
                                                          batch=batch, windows=windows, fits=fits),
                                what="a cost question")

    async def may_start(self, share: SharedFile, run: Run, rubric: Rubric, user: str,
                        tier: Tier = Tier.LIVE) -> str | None:
        """Why `user` may not start or resume the run at the `tier` clicked now: its rows left, at the price of the
        tier they would be judged in (a background window's, a run asked in one resumed in it), would take the
        channel over its monthly budget, and only an admin may do that. None when they may (an admin's run then
        judges past the budget)."""
        limits = await self.limits_of(share)
        if limits.monthly is None:
            return None
        try:
            panel = self.ctx.panel_of(run)
        except SetupError:
            return None  # judging says what is wrong with the judges
        tier, _ = await self.engine.tier_of(run, tier)
        question = await self.engine.question(run, rubric, panel, limits, tier, keep=False)
        if Ask.OVER not in question.asks:
            return None
        refusal = await admin_refusal(self.ctx.client, self.limits.admins, user=user, team=share.team_id,
                                      not_admin=OVER_BUDGET.format(over=over_text(question.weighed)))
        if refusal is None:
            self.past_budget.add(run.id)
        return refusal

    # -- judging --------------------------------------------------------------------------------------------

    async def _judge_now(self, share: SharedFile, run: Run) -> Run:
        """The run, with the bot's judge when it paused because its endpoint does not know its own model (said in
        the thread)."""
        if (model := judge_on_resume(run, self.ctx.bench.judge.model)) is None:
            return run
        await self.ctx.db(update_run, run.id, judge_model=model)
        await self.ctx.say.post(share.channel_id, notice(
            f"The judge's endpoint did not know `{escape(run.judge_model)}`, so this run goes on with "
            f"`{escape(model)}`, the bot's judge now."), thread_ts=share.thread_ts, what="a note of the judge changed")
        return replace(run, judge_model=model)

    async def progress_of(self, share: SharedFile, run: Run, rubric: Rubric, by_batch: bool) -> ProgressMessage:
        """How the run's progress is shown: streamed into the thread (a run through the Batch API waits for hours, and
        a stream is for work that moves), or the progress message edited."""
        assert share.progress_ts is not None
        render = partial(view.progress, run, rubric.title, who=share.user_id, batch=by_batch)
        if by_batch or not share.user_id or not self.limits.stream:
            return ProgressMessage(self.ctx.say, share.channel_id, share.progress_ts, render, every=self.edit_every)
        if share.stream_ts:  # an earlier process's stream: ended, so that one stream moves at a time
            await end_stream(self.ctx.say, share.channel_id, share.stream_ts)
        stored = await self.ctx.db(get_run, run.id)  # with its estimate

        async def streaming(ts: str | None) -> None:
            await self.ctx.db(update_share, share_id=share.id, stream_ts=ts)

        return StreamedProgress(self.ctx.say, share.channel_id, share.progress_ts, render,
                                stream=RunStream(stored or run, rubric.title, share.user_id),
                                thread_ts=share.thread_ts, team=share.team_id, user=share.user_id,
                                every=self.edit_every, append_every=self.append_every, on_stream=streaming)

    def append_every(self) -> float:
        """Seconds between appends to one progress stream: Slack allows 100 or more a minute per workspace."""
        return max(APPEND_EVERY, len(self.active) * 60 / APPENDS_PER_MINUTE)

    def edit_every(self) -> float:
        """Seconds between edits of one progress message: Slack allows about 50 edits a minute per workspace."""
        return max(self.limits.edit_every, len(self.active) * 60 / EDITS_PER_MINUTE)

    async def _pause(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage, reason: str) -> None:
        counts = await self.ctx.db(status_counts, run.id)
        total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.PAUSED, owner=None, note=reason)
        done = total - counts.get(RowState.PENDING, 0)
        await shown.close(view.paused(run, rubric.title, done, total, reason),
                          ending=run_stream.paused(done, total, reason))

    async def _interrupted(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage) -> None:
        await share_thread.let_go(self.ctx, share)
        done = shown.latest.done if shown.latest else 0
        total = shown.latest.total if shown.latest else run.total_rows
        try:
            await asyncio.wait_for(shown.close(view.interrupted(run, rubric.title, done, total),
                                               ending=run_stream.interrupted(done, total)), SAY_LATER)
        except Exception:
            log.warning("could not mark run %s as interrupted", run.id)

    def cancel(self, run_id: int, user_id: str | None) -> bool:
        """Cancel a run this process is judging; False when it judges no such run."""
        active = self.active.get(run_id)
        if active is None:
            return False
        active.cancelled_by = user_id
        active.cancel.set()
        return True


def over_text(weighed: Weighed) -> str:
    """How far the channel's month went: "$180.00 of $200.00 spent this month"."""
    return f"{money(weighed.spent)} of {money(weighed.limits.monthly or 0.0)} spent this month"


class _FileFace(Face):
    """A shared file as a face of the engine: asked in its thread (Start, Half price via Batch, Cancel: a click
    answers later), shown by its progress message (`shown`, once judging starts)."""

    def __init__(self, files: FileRuns, share: SharedFile, rubric: Rubric) -> None:
        self.files, self.share, self.rubric = files, share, rubric
        self.active = _Active()
        self.run: Run | None = None
        self.shown: ProgressMessage | None = None

    async def saved(self, run: Run) -> None:
        self.run = run
        if self.share.run_id != run.id:  # its rows just saved: the file is judged from now on
            await self.files.ctx.db(move_share, share_id=self.share.id, to=ShareState.RUNNING, run_id=run.id)
            self.share.run_id, self.share.state = run.id, ShareState.RUNNING

    async def agree(self, question: Question) -> Answer:
        if not question.asks:
            return Answer.YES
        await self.files.ask(self.share, self.rubric, question)
        return Answer.LATER

    @asynccontextmanager
    async def judging(self, run: Run, tier: Tier, sending: bool) -> AsyncIterator[OnProgress]:
        files = self.files
        files.active.setdefault(run.id, self.active)
        if files.assist is not None:  # this process may have been helping the process that held it
            await files.assist.stop_helping(run.id)
        self.shown = await files.progress_of(self.share, run, self.rubric, tier == Tier.BATCH)
        self.shown.start()
        yield self.shown.update
