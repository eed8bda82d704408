"""Runs left unfinished in the terminal: an interrupt (Ctrl-C) said with the command that finishes the run, and a
file judged again pointed at the unfinished run of its rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.context import Context
from bot.cli.exits import EXIT_INTERRUPTED
from bot.errors import UsageError
from bot.figures import plural
from bot.records import RESUMABLE, RowState, RunState

if TYPE_CHECKING:
    from bot.csvfiles.rows import CsvSource
    from bot.judge.panel import Panel
    from bot.rubric import Rubric
    from bot.runs import Origin
    from bot.store import Run


async def unfinished_first(ctx: Context, rubric: Rubric, source: CsvSource, panel: Panel, origin: Origin) -> None:
    """UsageError pointing at the unfinished run of these very rows (same file name and rows, rubric version, judges
    and options), if one is left: `judgebot resume N` finishes it, `--new-run` starts another anyway."""
    from bot.runs import held_elsewhere
    from bot.runs.start import unfinished_run_of
    from bot.store import status_counts

    args = ctx.args
    waiting = unfinished_run_of(ctx.store, rubric=rubric, source=source, **panel.run_fields(),
                                model_name=args.model_name, fresh=args.fresh, swap=not args.no_swap,
                                origin=origin)
    if waiting is None:
        return
    await panel.aclose()
    counts = status_counts(ctx.store, waiting.id)
    now = " and another judgebot process is judging it now" if held_elsewhere(waiting) else ""
    raise UsageError(f"run {waiting.id} judges these same rows of {source.path.name} with the same rubric and judge, "
                     f"and is unfinished ({counts.get(RowState.PENDING, 0)} of {sum(counts.values())} rows pending"
                     f"{now}): `judgebot resume {waiting.id}` finishes it, without judging again the rows it has; "
                     "`--new-run` starts another run anyway")


def interrupted(ctx: Context, run: Run) -> int:
    """After Ctrl-C: the run paused as interrupted (unless it ended), and what is left of it said with the command
    that finishes it; the exit code of an interrupt."""
    from bot.runs.ownership import let_go
    from bot.store import get_run

    counts = let_go(ctx.store, run.id)
    current = get_run(ctx.store, run.id) or run
    pending = counts.get(RowState.PENDING, 0)
    if current.status in RESUMABLE and pending:
        ctx.console.print(f"[red]Run {run.id} interrupted[/]: {pending} {plural(pending, 'row')} still pending; "
                          f"`judgebot resume {run.id}` finishes {'it' if pending == 1 else 'them'}.", highlight=False)
    elif current.status == RunState.DONE and current.results_path and current.results_written_at is None:
        ctx.console.print(f"[red]Run {run.id} interrupted[/] before its results were written: `judgebot resume "
                          f"{run.id}` writes them.", highlight=False)
    else:
        ctx.console.print(f"Run {run.id} interrupted.", highlight=False)
    return EXIT_INTERRUPTED
