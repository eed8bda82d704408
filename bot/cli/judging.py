"""The terminal's commands that judge: a CSV file or one triple, and resuming a run, with a progress bar, the
results file and the summary."""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli import calibration_views, views
from bot.cli.cost import approve_cost
from bot.config import Settings
from bot.errors import UsageError
from bot.records import REJUDGEABLE, RowState, RunState

if TYPE_CHECKING:
    from bot.judge.panel import JudgeSpec, Panel
    from bot.llm.client import JudgeClient
    from bot.rubric import Rubric, RubricSet
    from bot.runs import Budget, Origin
    from bot.store import Run, Store

NO_ENDPOINT = (
    "judgebot needs a judge to talk to. Set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL to use any "
    "OpenAI-compatible server (for a local one: OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama, "
    "http://localhost:8000/v1 for vLLM or llama.cpp; add OPENAI_API_KEY if it asks for one). Pick the model "
    "with JUDGE_MODEL. Put them in the environment or in a .env file in this directory."
)
EXIT_OK, EXIT_UNSCORED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def settled() -> None:
    """Everything imported so far lives as long as the process: keep it out of the collector's full passes, and let
    the collector run again (`main` holds it off while a command starts).

    Those passes otherwise cost a run about a fifth of its CPU time; a command that works for long calls this once
    it has imported what it uses.
    """
    gc.freeze()
    gc.enable()



def check_concurrency(value: int | None) -> None:
    """--concurrency, when given, is at least 1."""
    if value is not None and value < 1:
        raise UsageError("--concurrency must be at least 1")


def writable(path: Path, not_over: Path | None = None) -> Path:
    """`path` if a results file can be written there; checked before any row is judged (and billed)."""
    if not_over is not None and path.resolve() == not_over.resolve():
        raise UsageError(f"--out {path} is the input file; give the results another name")
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give --out a file name")
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir() or not os.access(directory, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write the results to {path}: choose another --out")
    return path


def terminal_origin() -> Origin:
    """Who runs judgebot in this terminal, for the history."""
    from bot.runs import Origin

    try:
        user = getpass.getuser()[:32]
    except (KeyError, OSError):  # no name for this uid, as in some containers
        user = None
    return Origin(source="cli", user_id=user)


def judge_client(settings: Settings, concurrency: int | None = None, model: str | None = None) -> JudgeClient:
    """The judge client the settings describe; UsageError when they name no endpoint."""
    from bot.llm.client import judge_client_from

    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return judge_client_from(settings, model=model, concurrency=concurrency)


def judge_panel(settings: Settings, args: argparse.Namespace, rubric: Rubric, concurrency: int | None = None) -> Panel:
    """The judges a `judge` command asks: --judges-file, --judges, JUDGES_FILE or JUDGES (else the configured judge),
    each --samples times (else the rubric's own number)."""
    from bot.judge.panel import open_panel

    specs = judge_specs(settings, args)
    if (specs is None or any(spec.base_url is None for spec in specs)) and not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    samples = args.samples if args.samples is not None else rubric.samples
    return open_panel(settings, specs=specs, samples=samples, concurrency=concurrency)


def judge_specs(settings: Settings, args: argparse.Namespace) -> list[JudgeSpec] | None:
    """The jury --judges-file, --judges, JUDGES_FILE or JUDGES names; None for the configured judge alone."""
    from bot.judge.panel import configured_jury, judges_from_names, read_judges

    if args.judges and args.judges_file:
        raise UsageError("give --judges (models on the configured endpoint) or --judges-file, not both")
    specs: list[JudgeSpec] | None
    if args.judges_file:
        specs = read_judges(args.judges_file)
    elif args.judges:
        specs = judges_from_names(args.judges)
    else:
        specs = configured_jury(settings)
    return specs


def run_panel(settings: Settings, run: Run, concurrency: int | None = None) -> Panel:
    """The judges a run was started with, asked the same way again."""
    from bot.judge.panel import reopen_panel

    if not run.judges and not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return reopen_panel(settings, judge_model=run.judge_model, samples=run.samples, judges=run.judges,
                        temperature=run.temperature, concurrency=concurrency)


async def judge_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot judge`: a file, or one triple given with -q -r -a."""
    from bot.csvfiles.reading import open_csv, parse_columns
    from bot.llm.retries import observing_retries
    from bot.records import Triple, Verdict
    from bot.runs import execute_run, start_csv_run, start_single_run
    from bot.store import Store
    from bot.store.samples import samples_of

    rubric = rubrics.get(args.rubric)
    single = [args.question, args.reference, args.answer]
    if args.file is None:
        if not all(value is not None for value in single):
            raise UsageError("give a CSV file, or all three of -q QUESTION -r REFERENCE -a ANSWER")
        if args.columns:
            raise UsageError("--columns names the columns of a CSV file; -q, -r and -a need none")
        if args.batch:
            raise UsageError("--batch sends the rows of a CSV file; one triple is judged live at once")
        # The rule of a CSV row: a question and a reference to grade against (an empty answer is graded).
        if empty := [flag for flag, value in (("-q", args.question), ("-r", args.reference)) if not value.strip()]:
            raise UsageError(f"{' and '.join(empty)} cannot be empty: a judgment needs a question and a reference "
                             "answer to grade against")
        panel = judge_panel(settings, args, rubric)
        settled()
        store = Store.open(settings.db_url)
        triple = Triple(question=args.question, reference=args.reference, answer=args.answer)
        async with panel:
            run = start_single_run(store, rubric=rubric, triple=triple, **panel.run_fields(), model_name=args.model_name,
                                   fresh=args.fresh, origin=terminal_origin())
            with observing_retries(lambda notice: console.print(f"[yellow]{views.shown(str(notice))}[/]")):
                outcome = await execute_run(store, run, rubric, panel, concurrency=1,
                                            unsure_spread=settings.unsure_spread)
        if outcome.stop_reason and outcome.status == RunState.PAUSED:
            raise UsageError(f"{outcome.stop_reason.rstrip('.')}.\nRun {run.id} keeps this triple, not yet judged: "
                             f"`judgebot resume {run.id}` judges it.")
        judgment = next(store.iter_judgments(run.id))
        views.show_verdict(console, rubric, Verdict.model_validate(judgment, from_attributes=True))
        if not panel.single:
            views.show_samples(console, samples_of(store, judgment.id))
        return EXIT_OK if outcome.all_scored else EXIT_UNSCORED
    if any(value is not None for value in single):
        raise UsageError("give either a CSV file or -q/-r/-a, not both")
    check_concurrency(args.concurrency)
    source = open_csv(args.file, parse_columns(args.columns or []), how="--columns {role}={column}")
    out = writable(args.out or args.file.with_name(f"{args.file.stem}.results.csv"), not_over=args.file)
    panel = judge_panel(settings, args, rubric, args.concurrency)
    store = Store.open(settings.db_url)
    run = start_csv_run(store, rubric=rubric, source=source, **panel.run_fields(), model_name=args.model_name,
                        fresh=args.fresh, origin=terminal_origin(), results_path=str(out.resolve()))
    go, budget = await cost_agreed(store, run, rubric, panel, settings, args.yes, console, new=True, batch=args.batch)
    if not go:
        return EXIT_USAGE
    return await finish_run(store, run, rubric, panel, console, out, args.concurrency or settings.concurrency,
                            settings.unsure_spread, budget=budget, batch=settings.batch_poll_seconds if args.batch else None)


async def resume_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot resume`: judge what a run left pending, then write its results and summary."""
    from bot.store import Store

    store = Store.open(settings.db_url)
    from bot.store.batches import open_parts

    run = store.get_run(args.run_id) if args.run_id else store.latest_unfinished_run()
    if run is None:
        raise UsageError(f"no run {args.run_id}" if args.run_id else "no unfinished run to resume")
    check_concurrency(args.concurrency)
    rubric = rubrics.get(run.rubric_name)
    out = writable(args.out or Path(run.results_path or f"run-{run.id}.results.csv"))
    panel = run_panel(settings, run, args.concurrency)
    waiting = bool(open_parts(store, run.id))  # batches sent before a stop: wait for them, never send them again
    batch = args.batch or waiting
    rejudge = REJUDGEABLE if args.retry_errors else ()
    console.print(f"Resuming run {run.id} ({views.shown(run.source_name or run.source)}, "
                  f"rubric {views.shown(run.rubric_name)}).")
    if waiting and not args.batch:
        console.print(f"Run {run.id} has batches sent before: waiting for them (rows no batch holds stay pending).")
        go, budget = True, None
    else:
        go, budget = await cost_agreed(store, run, rubric, panel, settings, args.yes, console, new=False, batch=batch)
    if not go:
        return EXIT_USAGE
    return await finish_run(store, run, rubric, panel, console, out, args.concurrency or settings.concurrency,
                            settings.unsure_spread, rejudge=rejudge, budget=budget,
                            batch=settings.batch_poll_seconds if batch else None, new_parts=args.batch)


async def cost_agreed(store: Store, run: Run, rubric: Rubric, panel: Panel, settings: Settings, yes: bool,
                      console: Console, *, new: bool, batch: bool = False) -> tuple[bool, Budget | None]:
    """The run's estimate shown and agreed to (see `approve_cost`); when it is not, nothing is judged: a `new` run is
    cancelled, a resumed one keeps its pending rows."""
    go, budget = False, None
    try:  # refused without a terminal to ask (UsageError) or at the question: the same end
        from bot.runs.estimate import estimate_run

        go, budget = approve_cost(store, estimate_run(store, run, rubric, panel, batch=batch, keep=True), settings,
                                  yes=yes, console=console)
    finally:
        if not go:
            await panel.aclose()
            if new:
                store.update_run(run.id, status=RunState.CANCELLED, stop_reason="not started: its cost was not agreed to")
    if not go:
        console.print("Nothing judged." if new else f"Nothing judged: run {run.id} keeps its pending rows.")
    return go, budget


async def finish_run(store: Store, run: Run, rubric: Rubric, panel: Panel, console: Console, out: Path,
                     concurrency: int, unsure_spread: float, rejudge: tuple[RowState, ...] = (),
                     budget: Budget | None = None, batch: float | None = None, new_parts: bool = True) -> int:
    """Judge the pending rows of a run with a progress bar, then write the results and show the summary."""
    from bot.llm.retries import observing_retries
    from bot.runs import execute_run, export_run
    from bot.runs.batch import judge_by_batch
    from bot.trust.file_labels import save_file_labels

    settled()
    async with panel:
        with views.ProgressBar(console, f"{rubric.name} · run {run.id}") as bar, observing_retries(bar.retrying):
            if batch is not None:  # the seconds between two looks at the batches
                if rejudge:
                    await asyncio.to_thread(store.reset_rows, run.id, rejudge)
                outcome = await judge_by_batch(store, run, rubric, panel, prices=panel.prices, poll_seconds=batch,
                                               on_progress=bar.update, new_parts=new_parts, unsure_spread=unsure_spread)
            else:
                outcome = await execute_run(store, run, rubric, panel, concurrency=concurrency, on_progress=bar.update,
                                            rejudge=rejudge, unsure_spread=unsure_spread, budget=budget)
    if rejudge:
        console.print(f"{outcome.rejudged} rows with a judge error or an invalid reply were judged again.")
    run = store.get_run(run.id) or run  # with the status the run ended in
    labels = save_file_labels(store, run, rubric)
    # Results of a run that stopped half-way never replace a file that is there: it may hold good results.
    kept = out.exists() and bool(outcome.counts.get(RowState.PENDING))
    try:
        summary = export_run(store, run=run, rubric=rubric, out=None if kept else out)
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}. Every verdict is saved: "
                         f"`judgebot resume {run.id} --out PATH` writes the results elsewhere.") from None
    if not kept and run.results_path != str(out.resolve()):
        store.update_run(run.id, results_path=str(out.resolve()))  # where `judgebot resume` writes them next
    views.show_summary(console, run, rubric, summary, None if kept else out)
    if labels.any:
        calibration_views.show_file_labels(console, labels)
    if kept:
        console.print(f"{views.shown(str(out))} is left as it was: run {run.id}'s results replace it once its pending "
                      "rows are judged.", highlight=False)
    if outcome.status == RunState.PAUSED:
        console.print(f"[red]Run {run.id} stopped[/]: {views.shown(outcome.stop_reason or '')}. "
                      f"{outcome.counts.get(RowState.PENDING, 0)} rows are still pending; "
                      f"`judgebot resume {run.id}` finishes them.", highlight=False)
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED
