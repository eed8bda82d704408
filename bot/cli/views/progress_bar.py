"""The live progress bar of a run in a terminal, fed by the run's progress events and its retry notices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.views.terminal_text import DASH, shown
from bot.figures import duration

if TYPE_CHECKING:
    from bot.llm.retries import Retrying
    from bot.runs import Progress as RunProgress


class ProgressBar:
    """A rich progress bar fed by a run's progress events."""

    def __init__(self, console: Console, description: str) -> None:
        # rich's live display loads with the first bar: the commands that show none (one triple, --help, the
        # tables) start without it.
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("[red]{task.fields[errors]}"),
            TextColumn("[yellow]{task.fields[notice]}"),
            console=console,
            transient=False,
        )
        self._task = self._bar.add_task(shown(description), total=None, rate="", eta=DASH, errors="", notice="")
        self._done = 0
        self._notice = ""

    def __enter__(self) -> ProgressBar:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def update(self, event: RunProgress) -> None:
        """Show one progress event."""
        eta = DASH if event.eta is None else duration(event.eta)
        errors = ", ".join(part for part in (f"{event.errors} errors or invalid" if event.errors else "",
                                             f"{event.unsure} unsure" if event.unsure else "") if part)
        # A row that got through means the judge answers again: the last retry notice no longer holds.
        if event.done > self._done:
            self._notice = ""
        self._done = event.done
        self._bar.update(self._task, completed=event.done, total=event.total, rate=f"{event.rate:.1f} rows/s",
                         eta=eta, errors=errors, notice=self._notice or shown(event.paced or ""))

    def retrying(self, notice: Retrying) -> None:
        """Show at once that a judge request is being sent again, and why ("cannot reach the judge, retrying (2/7)")."""
        self._notice = shown(str(notice))
        self._bar.update(self._task, notice=self._notice)
        self._bar.refresh()
