"""The rows of an opened CSV, streamed: each gradable row with its texts, its model under test and (for a rubric that
reads context) its retrieved passages, or a malformed one with the reason a person reads."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.csvfiles.columns import ALIASES, BOTH_KINDS, PAIR_ROLES, meant
from bot.csvfiles.encoding import RESAVE
from bot.csvfiles.layout import END, allow_long_cells, clean, start
from bot.csvfiles.passages import read_passages
from bot.errors import CsvError

MODEL_NAME_LIMIT = 200  # characters: history, stats and cards show a model's name whole, as a short label


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One gradable row. `line` is the row number a spreadsheet shows (header = 1)."""

    line: int
    question: str
    reference: str
    answer: str  # a pair's answer A
    model: str | None  # a pair's model A
    cells: dict[str, str]
    answer_b: str | None = None  # only in a file of pairs
    model_b: str | None = None
    context: list[str] | None = None  # the retrieved passages, when the rubric reads them


@dataclass(frozen=True, slots=True)
class MalformedRow:
    """A row that cannot be graded, with the reason a person should read (without its row number, which whoever
    shows the reason says), and the model its cells name when they reach the model column."""

    line: int
    reason: str
    cells: list[str]
    model: str | None = None


class CsvSource:
    """An opened CSV: detected encoding/delimiter, unique header names, resolved columns, rows streamed on iteration.

    `columns` maps each role found to its header; `chosen` holds the roles a person named the column of.
    """

    def __init__(self, path: Path, encoding: str, delimiter: str, headers: list[str], index: dict[str, int],
                 chosen: Iterable[str] = (), *, named: int | None = None, reference: bool = True,
                 pairs: bool = False, context: bool = False) -> None:
        self.path = path
        self.pairs = pairs  # rows of two answers each (answer_a, answer_b), for a pairwise rubric
        self.reference = reference  # whether a row needs a reference (a rubric that grades against one)
        self.context = context  # whether a row's retrieved passages are read (a rubric whose template holds $context)
        self.named = len(headers) if named is None else named  # columns up to the last with a header name
        self.encoding = encoding
        self.delimiter = delimiter
        self.headers = headers
        roles = [role for role in ALIASES if ((role in PAIR_ROLES) == pairs or role in BOTH_KINDS)
                 and (context or role != "context")]
        self.columns = {role: headers[index[role]] for role in roles if role in index}
        self.chosen = frozenset(chosen)
        self.has_answer = "answer" in index  # a column of one answer, whatever the rubric reads
        self._index = index  # role -> column position

    @property
    def near_misses(self) -> dict[str, str]:
        """{role: header} for each model column not found whose name a header nearly spells ("modle"): most likely
        a typo, and its rows' models are not read."""
        roles = ("model_a", "model_b") if self.pairs else ("model",)
        taken = set(self._index.values())
        found = {role: meant(ALIASES[role], self.headers, taken) for role in roles if role not in self._index}
        return {role: header for role, header in found.items() if header is not None}

    def __iter__(self) -> Iterator[CsvRow | MalformedRow]:
        allow_long_cells()
        row = 0
        try:
            with self.path.open(encoding=self.encoding, newline="") as f:
                started = start(f)
                if started is None:  # emptied since open_csv
                    return
                _, row, reader = started
                next(reader)  # the header
                for cells in reader:
                    if cells == [END]:
                        return
                    row += 1
                    if cells and cells[-1].endswith(END):  # the reader reached the end of the file inside a quoted cell
                        opened = clean([*cells[:-1], cells[-1][: -len(END)]])
                        yield MalformedRow(row, 'it opens a quote (") that is never closed, so it runs to the end of '
                                                "the file; close the quote or remove it", opened, self._model_in(opened))
                        return
                    item = self._make(row, clean(cells))
                    if item is not None:
                        yield item
        except UnicodeDecodeError as err:
            raise CsvError(
                f"{self.path}: the text near row {row + 1} is not valid {self.encoding} "
                f"(the file may have changed since it was opened); {RESAVE}"
            ) from err
        except csv.Error as err:
            raise CsvError(f"{self.path}: row {row + 1} cannot be read: {err}") from err
        except OSError as err:
            raise CsvError(f"cannot read {self.path}: {err.strerror or err}") from err

    def _make(self, line: int, cells: list[str]) -> CsvRow | MalformedRow | None:
        # [] is an empty line; a row of empty cells (",,,") is what spreadsheets leave below the data
        if not any(cell.strip() for cell in cells):
            return None
        width = len(self.headers)
        if len(cells) > width and not any(cell.strip() for cell in cells[width:]):
            cells = cells[:width]  # a delimiter at the end of each row: the extra cells are empty
        elif self.named <= len(cells) < width:
            cells = cells + [""] * (width - len(cells))  # a delimiter at the end of the header only: unnamed columns
        if len(cells) != width:
            count = f"{len(cells)} cell" + ("" if len(cells) == 1 else "s")
            return MalformedRow(line, f"it has {count} but the header has {width}", cells, self._model_in(cells))
        value = {role: cells[i] for role, i in self._index.items()}
        # A question and, when there is a reference column, a reference to grade against (an empty answer is graded).
        needed = ("question", "reference") if self.reference else ("question",)
        empty = [role for role in needed if not value.get(role, "").strip()]
        if empty:
            what = " and ".join(empty) + (" cells are" if len(empty) > 1 else " cell is")
            return MalformedRow(line, f"the {what} empty", cells, self._model_in(cells))
        passages: list[str] | None = None
        if self.context:
            read = read_passages(value["context"])
            if isinstance(read, str):
                return MalformedRow(line, read, cells, self._model_in(cells))
            passages = read
        if self.pairs:
            return CsvRow(line, value["question"], value.get("reference", ""), value["answer_a"],
                          _model(value.get("model_a")), dict(zip(self.headers, cells)), value["answer_b"],
                          _model(value.get("model_b")), passages)
        return CsvRow(line, value["question"], value.get("reference", ""), value["answer"], _model(value.get("model")),
                      dict(zip(self.headers, cells)), context=passages)

    def _model_in(self, cells: list[str]) -> str | None:
        """The model the cells of a malformed row name in the model column (a pair's model A), if they reach it."""
        at = self._index.get("model_a" if self.pairs else "model")
        return _model(cells[at]) if at is not None and at < len(cells) else None


def _model(cell: str | None) -> str | None:
    """The model a cell names (cut to MODEL_NAME_LIMIT), or None for an empty one."""
    return capped_model_name(cell) if cell and cell.strip() else None


def capped_model_name(name: str | None) -> str | None:
    """A model's name cut to MODEL_NAME_LIMIT characters, with a visible "…" when it was longer."""
    if name is None or len(name) <= MODEL_NAME_LIMIT:
        return name
    return name[: MODEL_NAME_LIMIT - 1] + "…"
