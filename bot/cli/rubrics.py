"""`judgebot rubrics [list|check [NAME]]`: the rubrics in force, each file validated on load; `check` also judges
each rubric's goldens, and fails while a file is broken."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from bot.cli.panels import judge_client
from bot.cli.views.rubrics import show_goldens, show_rubrics
from bot.cli.views.terminal_text import shown
from bot.errors import RunStopped, UsageError
from bot.figures import plural

if TYPE_CHECKING:
    from bot.rubric import RubricSet


async def rubrics(ctx: Context) -> int:
    """List the rubrics (and the broken files); with `check`, judge their goldens too."""
    found, console = ctx.rubrics, ctx.console
    chosen = [found.get(ctx.args.name)] if ctx.args.name else list(found)
    if ctx.args.action == "list" and ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.rubrics import RubricsDocument

        print_json(RubricsDocument.of(chosen, found))
        return EXIT_OK
    if ctx.args.json:
        raise UsageError("--json lists the rubrics; `rubrics check` judges their goldens: leave out one of them")
    if ctx.args.action == "list":
        show_rubrics(console, chosen)
        show_replaced(console, found)
        show_broken(console, found)
        show_folders(console, found)
        return EXIT_OK
    from bot.runs.goldens import check_goldens

    for rubric in chosen:
        goldens = len(rubric.goldens)
        console.print(f"[green]valid[/] {shown(str(rubric.source or rubric.name))} ({goldens} {plural(goldens, 'golden')})")
    show_broken(console, found)
    failed = 0
    async with judge_client(ctx.settings) as client:
        for rubric in chosen:
            try:
                results = await check_goldens(rubric, client)
            except RunStopped as err:
                raise UsageError(str(err)) from None
            show_goldens(console, rubric, results)
            failed += sum(not result.ok for result in results)
    console.print(f"{failed} golden(s) missed." if failed else "Every golden came out as expected.")
    if found.broken:
        return EXIT_USAGE
    return EXIT_UNSCORED if failed else EXIT_OK


def show_replaced(console: Console, found: RubricSet) -> None:
    """The team's files (RUBRICS_DIR) named like a shipped rubric, which they replace."""
    broken = {file.path.stem: file for file in found.broken}
    for name in sorted(found.replaced):
        rubric = next((r for r in found if r.name == name), None)
        path = rubric.source if rubric is not None else broken[name].path if name in broken else None
        if path is None:
            continue
        state = "" if rubric is not None else (f"; it is broken, so {shown(name)} cannot be used until it is fixed (or "
                                               "removed, to use the shipped one)")
        console.print(f"[yellow]{shown(name)}[/]: {shown(str(path))} replaces the shipped rubric of this name{state}",
                      highlight=False)


def show_broken(console: Console, found: RubricSet) -> None:
    """The rubric files left out, each with what is wrong with it."""
    for broken in found.broken:
        console.print(f"[red]broken[/] {shown(str(broken.path))}: {shown(broken.problem)}")
    if found.broken:
        console.print(f"{len(found.broken)} rubric file(s) left out until fixed; the other rubrics can be used.")


def show_folders(console: Console, found: RubricSet) -> None:
    """Where the rubric files were read from: a new rubric goes into RUBRICS_DIR (or, in a checkout installed with
    `pip install -e .`, into its rubrics/)."""
    shipped, *team = found.folders
    read = [f"{shown(str(shipped))} (shipped)", *(f"{shown(str(folder))} (RUBRICS_DIR)" for folder in team)]
    console.print(f"Rubric files read from {' and '.join(read)}." + ("" if team else " Add your own to a folder and "
                  "name it in RUBRICS_DIR."), highlight=False)
