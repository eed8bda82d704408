"""`judgebot judge` and `judgebot resume`: a CSV file or one triple judged, or a run finished, with a progress bar,
the results file and the summary."""

from __future__ import annotations

import getpass
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.face import Terminal, engine_of, file_ended, triple_ended
from bot.cli.panels import judge_panel, run_panel
from bot.cli.unfinished import unfinished_first
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError
from bot.records import REJUDGEABLE, RowState, RunState

if TYPE_CHECKING:
    from bot.judge.panel import Panel
    from bot.rubric import Rubric
    from bot.runs import Budget, Origin, Request, Rows
    from bot.store import Run


async def judge(ctx: Context) -> int:
    """`judgebot judge`: a file, or one triple given with -q -r -a."""
    args = ctx.args
    rubric = ctx.rubrics.get(args.rubric)
    if args.file is None and args.reference is None and not rubric.uses_reference:
        args.reference = ""  # the rubric grades without a reference
    if args.context is not None and not rubric.uses_context:
        raise UsageError(f"{rubric.name} does not read retrieved context (its template has no $context): drop "
                         "--context, or choose a rubric that grades against the retrieved passages")
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
    if args.context is not None:
        raise UsageError("--context is a passage of one triple (with -q/-r/-a); a file gives each row's passages in "
                         "its context column")
    return await judge_file(ctx, rubric)


async def judge_triple(ctx: Context, rubric: Rubric) -> int:
    """One triple judged live, through a run of one row, and shown in full."""
    from bot.records import Triple
    from bot.runs import Rows

    args = ctx.args
    if args.columns:
        raise UsageError("--columns names the columns of a CSV file; -q, -r and -a need none")
    if args.batch or args.background:
        raise UsageError(f"{'--batch' if args.batch else '--background'} sends the rows of a CSV file; one triple is "
                         "judged live at once")
    # The rule of a CSV row: a question and a reference to grade against (an empty answer is graded).
    needed = (("-q", args.question), *((("-r", args.reference),) if rubric.uses_reference else ()))
    if empty := [flag for flag, value in needed if not value.strip()]:
        raise UsageError(f"{' and '.join(empty)} cannot be empty: a judgment needs a question and a reference "
                         "answer to grade against")
    if rubric.uses_context and args.context is None:
        raise UsageError(f"{rubric.name} grades the answer against the passages retrieved for the question: give "
                         "each with --context TEXT (repeat it for several, in the order retrieved)")
    panel = judge_panel(ctx.settings, args, rubric)
    settled()
    triple = Triple(question=args.question, reference=args.reference, answer=args.answer,
                    context=args.context if rubric.uses_context else None)
    rows = Rows(triple, terminal_origin(), model_name=args.model_name, fresh=args.fresh)
    return await triple_ended(ctx, terminal_request(ctx, rubric, panel, rows),
                              Terminal(ctx, new=True, bar=False, quiet=True))


async def judge_file(ctx: Context, rubric: Rubric) -> int:
    """A CSV file's rows saved as a run, its estimate agreed to, then judged (live or through the Batch API)."""
    from bot.csvfiles.columns import parse_columns
    from bot.csvfiles.reading import open_csv
    from bot.runs import Rows

    args = ctx.args
    check_concurrency(args.concurrency)
    columns = parse_columns(args.columns or [])
    if "context" in columns and not rubric.uses_context:
        raise UsageError(f"--columns context={columns['context']}: {rubric.name} does not read retrieved context (its "
                         "template has no $context); drop it, or choose a rubric that grades against the passages")
    source = open_csv(args.file, columns, how="--columns {role}={column}", reference=rubric.uses_reference,
                      pairs=rubric.pairwise, context=rubric.uses_context)
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
    rows = Rows(source, terminal_origin(), model_name=args.model_name, fresh=args.fresh, swap=not args.no_swap,
                results_path=str(out.resolve()))
    return await file_ended(ctx, terminal_request(ctx, rubric, panel, rows, out=out), Terminal(ctx, new=True))


def terminal_request(ctx: Context, rubric: Rubric, panel: Panel, rows: Rows | Run, *, out: Path | None = None,
                     new: bool = False, rejudge: tuple[RowState, ...] = ()) -> Request:
    """What the terminal asks the engine: held to CONFIRM_ABOVE_USD, CONFIRM_ABOVE_REQUESTS and JUDGE_MONTHLY_BUDGET;
    a file (`out`: its results) judged --concurrency at a time, live or (--batch) through the Batch API, its results
    written and kept where they are, and summarised as far as it got when it pauses; one triple judged live."""
    from bot.runs import Limits, Request, Tier

    args = ctx.args
    limits = Limits.of_terminal(ctx.settings)
    if out is None:
        return Request(rubric, panel, rows, limits=limits, new=new, rejudge=rejudge, concurrency=1)
    if args.batch and getattr(args, "background", None):
        raise UsageError("--batch and --background are two tiers: choose one")
    tier = Tier.BATCH if args.batch else Tier(args.background) if getattr(args, "background", None) else Tier.LIVE
    return Request(rubric, panel, rows, limits=limits, new=new, rejudge=rejudge,
                   tier=tier, results=out, record_results=True, partial=True,
                   concurrency=args.concurrency or ctx.settings.concurrency)


async def resume(ctx: Context) -> int:
    """`judgebot resume`: judge what a run left pending, then write its results and summary (or, for one triple,
    show its verdict)."""
    from bot.runs import ONE_TRIPLE, busy, held_elsewhere
    from bot.store import get_run, latest_unfinished_run, newer_results

    args, store = ctx.args, ctx.store
    run = get_run(store, args.run_id) if args.run_id else latest_unfinished_run(store)
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
        return await triple_ended(ctx, terminal_request(ctx, rubric, run_panel(ctx.settings, run), run,
                                                        rejudge=rejudge),
                                  Terminal(ctx, new=False, bar=False, quiet=True))
    if run.status == RunState.DONE and run.results_written_at is not None and not rejudge and args.out is None:
        raise UsageError(f"run {run.id} is finished; nothing to resume. Its results are in {run.results_path}: "
                         f"`judgebot resume {run.id} --out PATH` writes them again elsewhere, `--retry-errors` judges "
                         "its errors again")
    run = judge_now(ctx, run)
    out = writable(args.out or Path(run.results_path or f"run-{run.id}.results.csv"))
    if (newer := newer_results(store, str(out.resolve()), run.id)) is not None:
        raise UsageError(f"{out} holds the results of run {newer.id}, newer than run {run.id}, and is never replaced "
                         f"by an older run's: give `judgebot resume {run.id} --out` another file")
    panel = run_panel(ctx.settings, run, args.concurrency)
    ctx.console.print(f"Resuming run {run.id} ({shown(run.source_name or run.source)}, "
                      f"rubric {shown(run.rubric_name)}).")
    return await file_ended(ctx, terminal_request(ctx, rubric, panel, run, out=out, rejudge=rejudge),
                            Terminal(ctx, new=False, rejudge=bool(rejudge)))


def judge_now(ctx: Context, run: Run) -> Run:
    """The run to resume, with the judge configured now when it paused because its endpoint does not know its judge
    model (said in the terminal); UsageError naming the way out when that cannot help (a jury, the same model)."""
    from bot.runs.resume import judge_on_resume, paused_for_unknown_model
    from bot.store import update_run

    if (model := judge_on_resume(run, ctx.settings.judge_model)) is not None:
        update_run(ctx.store, run.id, judge_model=model)
        ctx.console.print(f"Run {run.id} paused because its endpoint does not know {shown(run.judge_model)}: its "
                          f"pending rows are judged by {shown(model)} (JUDGE_MODEL) now.", highlight=False)
        return replace(run, judge_model=model)
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
    """(whether to judge, what the run may spend before it pauses), for a command that judges a run of its own: its
    estimate weighed by the budget rule and agreed to at the terminal (see `approve`); when it is not, nothing is
    judged: a `new` run is cancelled, a resumed one keeps its pending rows."""
    from bot.cli.cost import approve
    from bot.runs import Limits, Tier
    from bot.runs.budget import Ask

    go, budget = False, None
    try:  # refused without a terminal to ask (UsageError) or at the question: the same end
        question = await engine_of(ctx).question(run, rubric, panel, Limits.of_terminal(ctx.settings),
                                                 Tier.BATCH if batch else Tier.LIVE)
        go = approve(question, yes=ctx.args.yes, console=ctx.console, quiet=quiet, lead=lead)
        budget = question.weighed.budget(past=Ask.OVER in question.asks) if go else None
    finally:
        if not go:
            await cancelled(ctx, run, panel, new=new)
    return go, budget


async def cancelled(ctx: Context, run: Run, panel: Panel, *, new: bool = True) -> None:
    """Nothing judged: the panel's connections closed, a `new` run cancelled (a resumed one keeps its pending rows),
    and the person told."""
    from bot.runs import Engine

    await panel.aclose()
    await Engine(ctx.store).refused(run, new=new)
    ctx.console.print("Nothing judged." if new else f"Nothing judged: run {run.id} keeps its pending rows.")
