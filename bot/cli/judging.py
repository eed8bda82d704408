"""`judgebot judge` and `judgebot resume`: a CSV file or one triple judged, or a run finished, with a progress bar,
the results file and the summary."""

from __future__ import annotations

import asyncio
import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import calibration_views, views
from bot.cli.context import Context, settled
from bot.cli.cost import approve_cost
from bot.cli.exits import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from bot.cli.panels import judge_panel, run_panel
from bot.cli.screen import shown
from bot.cli.unfinished import interrupted, unfinished_first
from bot.errors import UsageError
from bot.records import REJUDGEABLE, RowState, RunState

if TYPE_CHECKING:
    from bot.judge.panel import Panel
    from bot.rubric import Rubric
    from bot.runs import Budget, Origin, RunOutcome
    from bot.store import Run


async def judge(ctx: Context) -> int:
    """`judgebot judge`: a file, or one triple given with -q -r -a."""
    args = ctx.args
    rubric = ctx.rubrics.get(args.rubric)
    if args.file is None and args.reference is None and not rubric.uses_reference:
        args.reference = ""  # the rubric grades without a reference
    single = [args.question, args.reference, args.answer]
    if args.no_swap and not rubric.pairwise:
        raise UsageError(f"--no-swap is for a pairwise rubric, which judges pairs of answers; {rubric.name} grades one "
                         "answer at a time")
    if args.file is None:
        if rubric.pairwise:
            raise UsageError(f"{rubric.name} compares two answers to each question: give a CSV file with the columns "
                             "question, reference, answer_a and answer_b (and model_a, model_b if you like)")
        if not all(value is not None for value in single):
            raise UsageError("give a CSV file, or all three of -q QUESTION -r REFERENCE -a ANSWER")
        return await judge_triple(ctx, rubric)
    if any(value is not None for value in single):
        raise UsageError("give either a CSV file or -q/-r/-a, not both")
    return await judge_file(ctx, rubric)


async def judge_triple(ctx: Context, rubric: Rubric) -> int:
    """One triple judged live, through a run of one row, and shown in full."""
    from bot.records import Triple
    from bot.runs import start_single_run

    args = ctx.args
    if args.columns:
        raise UsageError("--columns names the columns of a CSV file; -q, -r and -a need none")
    if args.batch:
        raise UsageError("--batch sends the rows of a CSV file; one triple is judged live at once")
    # The rule of a CSV row: a question and a reference to grade against (an empty answer is graded).
    needed = (("-q", args.question), *((("-r", args.reference),) if rubric.uses_reference else ()))
    if empty := [flag for flag, value in needed if not value.strip()]:
        raise UsageError(f"{' and '.join(empty)} cannot be empty: a judgment needs a question and a reference "
                         "answer to grade against")
    panel = judge_panel(ctx.settings, args, rubric)
    settled()
    triple = Triple(question=args.question, reference=args.reference, answer=args.answer)
    run = start_single_run(ctx.store, rubric=rubric, triple=triple, **panel.run_fields(), model_name=args.model_name,
                           fresh=args.fresh, origin=terminal_origin())
    try:
        return await finish_triple(ctx, run, rubric, panel, new=True)
    except (asyncio.CancelledError, KeyboardInterrupt):
        return interrupted(ctx, run)


async def finish_triple(ctx: Context, run: Run, rubric: Rubric, panel: Panel, *, new: bool,
                        rejudge: tuple[RowState, ...] = ()) -> int:
    """Judge a run of one triple and show its verdict, as CONFIRM_ABOVE_USD and JUDGE_MONTHLY_BUDGET allow (its
    estimate said only when they ask)."""
    from bot.judge.lifetime import judges_of_run
    from bot.llm.retries import observing_retries
    from bot.records import Verdict
    from bot.runs import execute_run
    from bot.store.samples import samples_of

    go, budget = await cost_agreed(ctx, run, rubric, panel, new=new, quiet=True)
    if not go:
        return EXIT_USAGE
    async with panel:
        with observing_retries(lambda notice: ctx.console.print(f"[yellow]{shown(str(notice))}[/]")):
            outcome = await execute_run(ctx.store, run, rubric, panel, concurrency=1, rejudge=rejudge,
                                        unsure_spread=ctx.settings.unsure_spread, budget=budget)
    if outcome.stop_reason and outcome.status == RunState.PAUSED:
        raise UsageError(f"{outcome.stop_reason.rstrip('.')}.\nRun {run.id} keeps this triple, not yet judged: "
                         f"`judgebot resume {run.id}` judges it.")
    judgment = next(ctx.store.iter_judgments(run.id))
    views.show_verdict(ctx.console, rubric, Verdict.model_validate(judgment, from_attributes=True))
    if not panel.single:
        views.show_samples(ctx.console, samples_of(ctx.store, judgment.id))
    show_shutdowns(ctx, judges_of_run(run.judge_model, run.judges))  # as a file's summary warns
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED


async def judge_file(ctx: Context, rubric: Rubric) -> int:
    """A CSV file's rows saved as a run, its estimate agreed to, then judged (live or through the Batch API)."""
    from bot.csvfiles.reading import open_csv, parse_columns
    from bot.runs import start_csv_run

    args = ctx.args
    check_concurrency(args.concurrency)
    source = open_csv(args.file, parse_columns(args.columns or []), how="--columns {role}={column}",
                      reference=rubric.uses_reference, pairs=rubric.pairwise)
    out = writable(args.out or args.file.with_name(f"{args.file.stem}.results.csv"), not_over=args.file)
    for role, header in source.near_misses.items():
        ctx.console.print(f"[yellow]warning[/]: no {role.replace('_', ' ')} column: did you mean " + shown(f'"{header}"? ')
                          + "Its cells are not read as the model under test; name it with "
                          + shown(f"--columns {role}={header}"), highlight=False)
    if args.model_name and "model" in source.columns:
        ctx.console.print(f"[yellow]warning[/]: the file names each row's model in its column "
                          f"{shown(source.columns['model'])}: --model-name {shown(args.model_name)} names only the rows "
                          "whose cell there is empty", highlight=False)
    panel = judge_panel(ctx.settings, args, rubric, args.concurrency)
    if not args.new_run:
        await unfinished_first(ctx, rubric, source, panel, terminal_origin())
    run = start_csv_run(ctx.store, rubric=rubric, source=source, **panel.run_fields(), model_name=args.model_name,
                        fresh=args.fresh, origin=terminal_origin(), results_path=str(out.resolve()),
                        swap=not args.no_swap)
    try:
        go, budget = await cost_agreed(ctx, run, rubric, panel, new=True, batch=args.batch)
        if not go:
            return EXIT_USAGE
        return await finish_run(ctx, run, rubric, panel, out, budget=budget, batch=args.batch)
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: asyncio.run cancels this task at its next await
        return interrupted(ctx, run)


async def resume(ctx: Context) -> int:
    """`judgebot resume`: judge what a run left pending, then write its results and summary (or, for one triple,
    show its verdict)."""
    from bot.runs import ONE_TRIPLE, busy, held_elsewhere

    args, store = ctx.args, ctx.store
    run = store.get_run(args.run_id) if args.run_id else store.latest_unfinished_run()
    if run is None:
        raise UsageError(f"no run {args.run_id}" if args.run_id else "no unfinished run to resume")
    check_concurrency(args.concurrency)
    if held_elsewhere(run):  # said before any estimate or progress bar
        raise busy(run.id)
    rubric = ctx.rubrics.get(run.rubric_name)
    rejudge = REJUDGEABLE if args.retry_errors else ()
    if run.source_name == ONE_TRIPLE:
        if run.status == RunState.DONE and not rejudge:
            raise UsageError(f"run {run.id} is finished; nothing to resume (`judgebot history` shows its verdict, "
                             "`--retry-errors` judges it again if it ended in an error)")
        run = judge_now(ctx, run)
        try:
            return await finish_triple(ctx, run, rubric, run_panel(ctx.settings, run), new=False, rejudge=rejudge)
        except (asyncio.CancelledError, KeyboardInterrupt):
            return interrupted(ctx, run)
    if run.status == RunState.DONE and run.results_written_at is not None and not rejudge and args.out is None:
        raise UsageError(f"run {run.id} is finished; nothing to resume. Its results are in {run.results_path}: "
                         f"`judgebot resume {run.id} --out PATH` writes them again elsewhere, `--retry-errors` judges "
                         "its errors again")
    run = judge_now(ctx, run)
    try:
        return await resume_file(ctx, run, rubric, rejudge)
    except (asyncio.CancelledError, KeyboardInterrupt):
        return interrupted(ctx, run)


async def resume_file(ctx: Context, run: Run, rubric: Rubric, rejudge: tuple[RowState, ...]) -> int:
    """Resume a run of a file: its estimate agreed to (or its batches waited for), its rows judged, its results
    written."""
    from bot.store.batches import open_parts

    args, store = ctx.args, ctx.store
    out = writable(args.out or Path(run.results_path or f"run-{run.id}.results.csv"))
    if (newer := store.newer_results(str(out.resolve()), run.id)) is not None:
        raise UsageError(f"{out} holds the results of run {newer.id}, newer than run {run.id}, and is never replaced "
                         f"by an older run's: give `judgebot resume {run.id} --out` another file")
    panel = run_panel(ctx.settings, run, args.concurrency)
    waiting = bool(open_parts(store, run.id))  # batches sent before a stop: wait for them, never send them again
    batch = args.batch or waiting
    ctx.console.print(f"Resuming run {run.id} ({shown(run.source_name or run.source)}, "
                      f"rubric {shown(run.rubric_name)}).")
    if waiting and not args.batch:
        ctx.console.print(f"Run {run.id} has batches sent before: waiting for them (rows no batch holds stay pending).")
        go, budget = True, None
    else:
        go, budget = await cost_agreed(ctx, run, rubric, panel, new=False, batch=batch)
    if not go:
        return EXIT_USAGE
    return await finish_run(ctx, run, rubric, panel, out, rejudge=rejudge, budget=budget, batch=batch,
                            new_parts=args.batch)


def judge_now(ctx: Context, run: Run) -> Run:
    """The run to resume, with the judge configured now when it paused because its endpoint does not know its judge
    model (said in the terminal); UsageError naming the way out when that cannot help (a jury, the same model)."""
    from bot.runs.resume import judge_on_resume, paused_for_unknown_model

    if (model := judge_on_resume(run, ctx.settings.judge_model)) is not None:
        ctx.store.update_run(run.id, judge_model=model)
        ctx.console.print(f"Run {run.id} paused because its endpoint does not know {shown(run.judge_model)}: its "
                          f"pending rows are judged by {shown(model)} (JUDGE_MODEL) now.", highlight=False)
        return run.model_copy(update={"judge_model": model})
    if not paused_for_unknown_model(run):
        return run
    why = (run.stop_reason or "").rstrip(".")  # the provider's sentence may close with its own period
    if run.judges:
        raise UsageError(f"run {run.id} paused because {why}; a jury's run keeps its judges: start the file again "
                         "with the jury corrected (--judges, --judges-file, JUDGES or JUDGES_FILE)")
    raise UsageError(f"run {run.id} paused because {why}. Set JUDGE_MODEL to a model the endpoint serves, then "
                     f"`judgebot resume {run.id}` goes on with it")


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


async def cost_agreed(ctx: Context, run: Run, rubric: Rubric, panel: Panel, *, new: bool, batch: bool = False,
                      quiet: bool = False, lead: str = "Estimate") -> tuple[bool, Budget | None]:
    """The run's estimate shown (with `quiet`, only when it asks) and agreed to (see `approve_cost`); when it is not,
    nothing is judged: a `new` run is cancelled, a resumed one keeps its pending rows."""
    go, budget = False, None
    try:  # refused without a terminal to ask (UsageError) or at the question: the same end
        from bot.runs.estimate import context_windows, estimate_run

        windows = await context_windows(panel)
        go, budget = approve_cost(ctx.store, estimate_run(ctx.store, run, rubric, panel, batch=batch, keep=True,
                                                          windows=windows),
                                  ctx.settings, yes=ctx.args.yes, console=ctx.console, quiet=quiet, lead=lead)
    finally:
        if not go:
            await cancelled(ctx, run, panel, new=new)
    return go, budget


async def cancelled(ctx: Context, run: Run, panel: Panel, *, new: bool = True) -> None:
    """Nothing judged: the panel's connections closed, a `new` run cancelled (a resumed one keeps its pending rows),
    and the person told."""
    await panel.aclose()
    if new:
        from bot.store.run_records import COST_NOT_AGREED

        ctx.store.update_run(run.id, status=RunState.CANCELLED, stop_reason=COST_NOT_AGREED)
    ctx.console.print("Nothing judged." if new else f"Nothing judged: run {run.id} keeps its pending rows.")


async def finish_run(ctx: Context, run: Run, rubric: Rubric, panel: Panel, out: Path, *,
                     rejudge: tuple[RowState, ...] = (), budget: Budget | None = None, batch: bool = False,
                     new_parts: bool = True) -> int:
    """Judge the pending rows of a run with a progress bar (live, or through the Batch API), then write the results
    and show the summary."""
    from bot.cli.progress import ProgressBar
    from bot.llm.retries import observing_retries
    from bot.runs import execute_run
    from bot.runs.batch import judge_by_batch

    settled()
    store, settings, console = ctx.store, ctx.settings, ctx.console
    async with panel:
        with ProgressBar(console, f"{rubric.name} · run {run.id}") as bar, observing_retries(bar.retrying):
            if batch:
                if rejudge:
                    await asyncio.to_thread(store.reset_rows, run.id, rejudge)
                outcome = await judge_by_batch(store, run, rubric, panel, prices=panel.prices,
                                               poll_seconds=settings.batch_poll_seconds, on_progress=bar.update,
                                               new_parts=new_parts, unsure_spread=settings.unsure_spread)
            else:
                outcome = await execute_run(store, run, rubric, panel,
                                            concurrency=ctx.args.concurrency or settings.concurrency,
                                            on_progress=bar.update, rejudge=rejudge,
                                            unsure_spread=settings.unsure_spread, budget=budget)
    if rejudge:
        console.print(f"{outcome.rejudged} rows with a judge error or an invalid reply were judged again.")
    return write_results(ctx, store.get_run(run.id) or run, rubric, out, outcome)


def write_results(ctx: Context, run: Run, rubric: Rubric, out: Path, outcome: RunOutcome) -> int:
    """A judged run's labels saved, its results file written (unless a run with rows left would replace a file that
    is there), and its summary shown; the exit code of how it ended."""
    from bot.judge.lifetime import judges_of_run
    from bot.runs import export_run
    from bot.store import utcnow
    from bot.store.graded import graded_answers
    from bot.trust.file_labels import save_file_labels
    from bot.trust.paired import graded, models_compared
    from bot.trust.review import send_to_review

    store, console = ctx.store, ctx.console
    if rubric.pairwise:
        return write_pairs(ctx, run, rubric, out, outcome)
    labels = save_file_labels(store, run, rubric)
    review = send_to_review(store, run, rate=ctx.settings.review_sample_rate)
    # Results of a run that stopped half-way never replace a file that is there: it may hold good results.
    kept = out.exists() and bool(outcome.counts.get(RowState.PENDING))
    try:
        summary = export_run(store, run=run, rubric=rubric, out=None if kept else out)
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}. Every verdict is saved: "
                         f"`judgebot resume {run.id} --out PATH` writes the results elsewhere.") from None
    if not kept:  # where `judgebot resume` writes them next, and that this run's results are there, whole
        store.update_run(run.id, results_path=str(out.resolve()), results_written_at=utcnow())
    views.show_summary(console, run, rubric, summary, None if kept else out)
    show_shutdowns(ctx, judges_of_run(run.judge_model, run.judges))
    if labels.any:
        calibration_views.show_file_labels(console, labels)
    if review.total:
        console.print(f"{review.text()}: `judgebot review` lists them.", highlight=False)
    elif review.text():
        console.print(f"{review.text()}.", highlight=False)
    if (models := models_compared(graded(graded_answers(store, run_id=run.id)))) is not None:
        from bot.cli.paired_views import show as show_comparison

        show_comparison(console, *models)
    _said_how_it_ended(ctx, run, out, outcome, kept)
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED


def write_pairs(ctx: Context, run: Run, rubric: Rubric, out: Path, outcome: RunOutcome) -> int:
    """A judged pairwise run's results file written (one row per pair) and its figures shown; the exit code."""
    from bot.cli import pairs_views
    from bot.judge.lifetime import judges_of_run
    from bot.runs.pairs import export_pairs
    from bot.store import utcnow
    from bot.trust.review import send_pairs_to_review

    kept = out.exists() and bool(outcome.counts.get(RowState.PENDING))
    try:
        found = export_pairs(ctx.store, run=run, rubric=rubric, out=None if kept else out)
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}. Every verdict is saved: "
                         f"`judgebot resume {run.id} --out PATH` writes the results elsewhere.") from None
    if not kept:
        ctx.store.update_run(run.id, results_path=str(out.resolve()), results_written_at=utcnow())
    pairs_views.show_pairs(ctx.console, run, found, None if kept else out)
    review = send_pairs_to_review(ctx.store, run, found.unsettled)
    if review.total:
        ctx.console.print(f"{review.text()}: a person says which answer is better (`/judge review` in Slack; "
                          "`judgebot review` lists them).", highlight=False)
    elif review.text():
        ctx.console.print(f"{review.text()}.", highlight=False)
    show_shutdowns(ctx, judges_of_run(run.judge_model, run.judges))
    _said_how_it_ended(ctx, run, out, outcome, kept)
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


def show_shutdowns(ctx: Context, judges: list[str] | None = None) -> None:
    """Warn of the judges (by default the configured ones) whose announced shutdown is near or past."""
    from bot.judge.lifetime import JudgeWatch

    for warning in JudgeWatch.from_settings(ctx.settings).warnings_of(judges):
        ctx.console.print(f"[yellow]warning[/]: {shown(warning)}", highlight=False)
