"""What the terminal shows of rubrics: the rubrics in force, and a rubric's goldens as checked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from bot.cli.views.terminal_text import shown
from bot.records import RowState

if TYPE_CHECKING:  # only types: the terminal must not load the judge or the database to draw a table
    from bot.rubric import Rubric
    from bot.runs.goldens import GoldenResult


def show_rubrics(console: Console, rubrics: Iterable[Rubric]) -> None:
    """The rubric list."""
    table = Table("name", "aliases", "version", "description")
    for rubric in rubrics:
        table.add_row(*(shown(text) for text in (rubric.name, ", ".join(rubric.aliases), rubric.version,
                                                   rubric.description)))
    console.print(table)


def show_goldens(console: Console, rubric: Rubric, results: list[GoldenResult]) -> None:
    """How a rubric's goldens came out."""
    for result in results:
        verdict = result.verdict
        state = "[green]ok[/]" if result.ok else "[red]MISS[/]"
        detail = verdict.label if verdict.status == RowState.SCORED else f"{verdict.status}: {verdict.error}"
        console.print(f"{state} {shown(f'{rubric.name}/{result.golden.name}: {detail}')}", highlight=False)
        for miss in result.misses:
            console.print(f"     {shown(miss)}", highlight=False)
