"""The terminal as a face of the engine (bot.runs.engine): how it asks (the estimate, a question at the prompt or
--yes) and how it shows (a progress bar, the retries, a file's end or one triple's verdict)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.cost import approve
from bot.cli.exits import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from bot.cli.unfinished import interrupted
from bot.cli.views.calibration import show_file_labels
from bot.cli.views.judging import show_samples, show_summary, show_verdict
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError
from bot.records import RowState, RunState
from bot.runs import Answer, Face

if TYPE_CHECKING:
    from bot.llm.shutdowns import JudgeShutdown
    from bot.rubric import Rubric
    from bot.runs import Ended, Engine, Question, Request, RunOutcome, Tier
    from bot.runs.engine import OnProgress
    from bot.store import Run


def engine_of(ctx: Context) -> Engine:
    """The engine over the terminal's history and settings."""
    from bot.runs import Engine

    return Engine.from_settings(ctx.store, ctx.settings)


class Terminal(Face):
    """The person at this terminal: asked at the prompt (or answered by --yes; the estimate shown, with `quiet` only
    when the budget rule asks, after `lead`), shown a progress bar (`bar`; one triple shows none) and the retries.
    `new`: the run is started for this command (a refused one is cancelled)."""

    def __init__(self, ctx: Context, *, new: bool, bar: bool = True, quiet: bool = False, rejudge: bool = False,
                 lead: str = "Estimate", what: str = "run") -> None:
        self.ctx, self.new, self.bar, self.quiet, self.rejudge, self.lead = ctx, new, bar, quiet, rejudge, lead
        self.what = what  # what the progress bar calls the run
        self.run: Run | None = None

    async def saved(self, run: Run) -> None:
        self.run = run

    async def agree(self, question: Question) -> Answer:
        go = False
        try:  # refused without a terminal to ask (UsageError) or at the question: the same end
            go = approve(question, yes=self.ctx.args.yes, console=self.ctx.console, quiet=self.quiet, lead=self.lead)
        finally:
            if not go:
                self.ctx.console.print("Nothing judged." if self.new else
                                       f"Nothing judged: run {question.run.id} keeps its pending rows.")
        return Answer.YES if go else Answer.NO

    @asynccontextmanager
    async def judging(self, run: Run, tier: Tier, sending: bool) -> AsyncIterator[OnProgress]:
        from bot.llm.retries import observing_retries

        settled()
        console = self.ctx.console
        if not sending:
            console.print(f"Run {run.id} has batches sent before: waiting for them (rows no batch holds stay "
                          "pending).")
        elif tier.background:
            console.print(f"Run {run.id} is judged in the background within {tier.value}: each response id is saved "
                          f"as it is created; stop any time, `judgebot resume {run.id}` polls them and sends none "
                          "again.")
        if not self.bar:
            with observing_retries(lambda notice: console.print(f"[yellow]{shown(str(notice))}[/]")):
                yield None
            return
        from bot.cli.views.progress_bar import ProgressBar

        with ProgressBar(console, f"{run.rubric_name} · {self.what} {run.id}") as bar, observing_retries(bar.retrying):
            yield bar.update

    async def judged(self, run: Run, outcome: RunOutcome) -> None:
        if self.rejudge and self.bar:
            self.ctx.console.print(f"{outcome.rejudged} rows with a judge error or an invalid reply were judged again.")


async def judged_here(ctx: Context, request: Request, face: Terminal) -> Ended | int:
    """The request judged through the engine, or the exit code of a command that judged nothing: the run not agreed
    to, or interrupted by Ctrl-C (the run then paused as interrupted and said with the command that finishes it)."""
    from bot.runs.ending import ResultsUnwritable

    try:
        ended = await engine_of(ctx).judge(request, face)
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: asyncio.run cancels this task at its next await
        if face.run is None:
            raise
        return interrupted(ctx, face.run)
    except ResultsUnwritable as err:
        run_id = face.run.id if face.run is not None else "N"
        raise UsageError(f"{err}. Every verdict is saved: `judgebot resume {run_id} --out PATH` writes the results "
                         "elsewhere.") from None
    return ended if ended.answer == Answer.YES else EXIT_USAGE


async def file_ended(ctx: Context, request: Request, face: Terminal) -> int:
    """A file's run judged through the engine, then its end shown; the exit code."""
    ended = await judged_here(ctx, request, face)
    if isinstance(ended, int):
        return ended
    return show_end(ctx, ended, request.rubric, request.results or Path("."))


async def triple_ended(ctx: Context, request: Request, face: Terminal) -> int:
    """One triple judged through the engine, then its verdict shown in full; the exit code."""
    from bot.store import first_judgment
    ended = await judged_here(ctx, request, face)
    if isinstance(ended, int):
        return ended
    outcome, run = ended.outcome, ended.run
    assert outcome is not None
    if outcome.stop_reason and outcome.status == RunState.PAUSED:
        raise UsageError(f"{outcome.stop_reason.rstrip('.')}.\nRun {run.id} keeps this triple, not yet judged: "
                         f"`judgebot resume {run.id}` judges it.")
    from bot.records import Verdict, context_of
    from bot.store import samples_of

    judgment = ended.end.judgment if ended.end is not None else first_judgment(ctx.store, run.id)
    assert judgment is not None and judgment.id is not None, "a run of one triple has one row"
    passages = None if judgment.context is None else len(context_of(judgment.context) or ())
    show_verdict(ctx.console, request.rubric, Verdict.model_validate(judgment, from_attributes=True), passages)
    if not request.panel.single:
        show_samples(ctx.console, samples_of(ctx.store, judgment.id))
    show_shutdowns(ctx, ended.end.shutdowns if ended.end is not None else [])  # as a file's summary warns
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED


def show_end(ctx: Context, ended: Ended, rubric: Rubric, out: Path) -> int:
    """A judged file's end: its summary (a pairwise run's pairs), the judges' coming shutdowns, its labels, what went
    to review, two models compared, and how it ended; the exit code."""
    console, end, outcome, run = ctx.console, ended.end, ended.outcome, ended.run
    assert outcome is not None
    if end is None:  # another process took the run over: it ends it
        console.print(f"Run {run.id} was taken over by another judgebot process, which finishes it.")
        return EXIT_UNSCORED
    if end.pairs is not None:
        from bot.cli.views.pairwise import show_pairs

        show_pairs(console, run, end.pairs, end.results)
        if end.review.total:
            console.print(f"{end.review.text()}: a person says which answer is better (`/judge review` in Slack; "
                          "`judgebot review` lists them).", highlight=False)
        elif end.review.text():
            console.print(f"{end.review.text()}.", highlight=False)
        show_shutdowns(ctx, end.shutdowns)
    else:
        assert end.summary is not None
        show_summary(console, run, rubric, end.summary, end.results)
        if ctx.settings.view_url:
            console.print(f"Open in judgebot: {ctx.settings.view_url}/runs/{run.id}", highlight=False, markup=False)
        show_shutdowns(ctx, end.shutdowns)
        if end.labels is not None and end.labels.any:
            show_file_labels(console, end.labels)
        if end.review.total:
            console.print(f"{end.review.text()}: `judgebot review` lists them.", highlight=False)
        elif end.review.text():
            console.print(f"{end.review.text()}.", highlight=False)
        if end.models is not None:
            from bot.cli.views.model_comparison import show as show_comparison

            show_comparison(console, *end.models)
    _said_how_it_ended(ctx, run, out, outcome, end.kept)
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED


def _said_how_it_ended(ctx: Context, run: Run, out: Path, outcome: RunOutcome, kept: bool) -> None:
    """Which limit of the judge endpoint bound the run, a results file left as it was, and a run that stopped with
    rows pending, said with what to do."""
    if outcome.paced:
        ctx.console.print(f"The judge endpoint's limits set the pace: {shown(outcome.paced)}.", highlight=False)
    if kept:
        ctx.console.print(f"{shown(str(out))} is left as it was: run {run.id}'s results replace it once its pending "
                          "rows are judged.", highlight=False)
    if outcome.status == RunState.PAUSED:
        ctx.console.print(f"[red]Run {run.id} stopped[/]: {shown(outcome.stop_reason or '')}. "
                          f"{outcome.counts.get(RowState.PENDING, 0)} rows are still pending; "
                          f"`judgebot resume {run.id}` finishes them.", highlight=False)


def show_shutdowns(ctx: Context, shutdowns: list[JudgeShutdown]) -> None:
    """Warn of the judges whose announced shutdown is near or past."""
    from bot.judge.lifetime import shutdown_advice

    for shutdown in shutdowns:
        ctx.console.print(f"[yellow]warning[/]: {shown(shutdown_advice(shutdown))}", highlight=False)
