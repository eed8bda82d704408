"""Text for a terminal: stored and untrusted text made safe to print (no control characters, markup escaped), and
tables that fit the terminal without cutting a cell short."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape as escape_markup
from rich.table import Table

# C0 and C1 control characters but newline and tab: ESC and CSI start terminal escape sequences (a title, a cleared
# screen, a hyperlink), and stored texts (model names, questions, file names, stop reasons) come from CSVs and Slack.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
DASH = "-"  # what a figure that cannot be computed shows in a terminal table
SHRUNK = 12  # the narrowest a column of free text (a question, tags) is made before less important columns go


def printable(text: str) -> str:
    """`text` without control characters (newline and tab kept): nothing in it can drive the terminal."""
    return CONTROL.sub("", text)


def shown(text: str) -> str:
    """Stored or untrusted `text` made safe to print with markup on: no control characters, rich markup escaped."""
    return escape_markup(printable(text))


@dataclass(frozen=True)
class Column:
    """A column of a terminal table: its header, how soon it goes when the terminal is narrow, and whether it wraps."""

    header: str
    drop: int = 0  # 0: always shown (the model under test); the highest number goes first
    free_text: bool = False  # a question or tags: wrapped to SHRUNK characters before any column goes


def fitted_table(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]], **options: Any) -> Table:
    """A table of plain-text `rows` that fits the console, never cutting a cell short with "…".

    Every kept column is as wide as its longest cell (free text: up to SHRUNK); while that is wider than the
    terminal, the least important column goes, and then those gone that fit after all come back, the most
    important first. What still does not fit wraps, character by character.
    """
    rows = [[printable(cell) for cell in row] for row in rows]  # measured as they are printed

    def widths(header_width: Callable[[str], int]) -> list[int]:
        widest = [max([header_width(column.header)] + [cell_len(row[i]) for row in rows]) for i, column in
                  enumerate(columns)]
        # A name longer than two thirds of the terminal wraps, so that a few figures still fit beside it.
        room = [SHRUNK if column.free_text else console.width * 2 // 3 if not column.drop else width
                for column, width in zip(columns, widest)]
        return [min(width, most) for width, most in zip(widest, room)]

    def fits(chosen: list[int]) -> bool:
        return sum(need[i] + 3 for i in chosen) + 1 <= console.width  # a cell's padding and border: 3

    need = widths(cell_len)  # headers on one line when there is room, else a word per line
    if not fits(list(range(len(columns)))):
        need = widths(lambda header: max(cell_len(word) for word in header.split()))
    kept, gone = list(range(len(columns))), []
    while not fits(kept) and (droppable := [i for i in kept if columns[i].drop]):
        gone.append(max(droppable, key=lambda i: (columns[i].drop, i)))
        kept.remove(gone[-1])
    for i in reversed(gone):
        kept += [i] if fits([*kept, i]) else []
    kept.sort()
    table = Table(**options)
    for i in kept:  # free text may grow into room left; other cells keep their width, so nothing is cut
        free = columns[i].free_text
        table.add_column(shown(columns[i].header), min_width=need[i] if free else None, width=None if free else need[i],
                         overflow="fold")
    for row in rows:
        table.add_row(*(shown(row[i]) for i in kept))
    return table


class ClosedPipeProof:
    """Standard output that a reader who went away cannot break (`judgebot judge ... | head -1`): once the pipe is
    closed, what is written goes nowhere, and the command goes on to write its results and ends as it would have.

    The closed pipe is replaced by /dev/null at the file descriptor too, so that the interpreter's own last flush
    at exit finds nothing to complain about.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        try:
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, self._stream.fileno())
            os.close(nowhere)
        except (OSError, ValueError):  # not a real file: nothing will flush it at exit either
            pass

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding and the rest, as the stream has them
        return getattr(self._stream, name)
