"""Read the CSVs people export from spreadsheets: encoding, delimiter, columns, rows (with their retrieved passages,
for a rubric that reads context)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TextIO

from bot.csvfiles.encoding import RESAVE, detect_encoding
from bot.csvfiles.spelling import closest
from bot.errors import CsvError
from bot.records import json_passages

REQUIRED = ("question", "reference", "answer")
PAIR_REQUIRED = ("question", "reference", "answer_a", "answer_b")  # a file of pairs, for a pairwise rubric
ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "prompt"),
    "reference": ("reference", "ground truth", "expected", "reference answer"),
    "answer": ("answer", "generated answer", "model response", "model answer", "response", "output"),
    "model": ("model", "model name"),
    "answer_a": ("answer a", "response a", "output a"),
    "answer_b": ("answer b", "response b", "output b"),
    "model_a": ("model a",),
    "model_b": ("model b",),
    "context": ("context", "contexts", "retrieved context", "passages"),
}
PAIR_ROLES = ("answer_a", "answer_b", "model_a", "model_b")
BOTH_KINDS = ("question", "reference", "context")  # roles of a file of answers and of a file of pairs alike
MODEL_NAME_LIMIT = 200  # characters: history, stats and cards show a model's name whole, as a short label
CHOOSE = "{role}={column}"  # how a person names the column of a role, unless the caller words it otherwise

_HEAD = 8192  # bytes inspected for magic numbers and NULs
_FIELD_LIMIT = 2**31 - 1  # fits a C long on every platform; csv's default is 131,072
_END = "\ud800"  # fed to the reader after the last line: strict decoding never yields a lone surrogate
_EMPTY_ROW = ',;\t" \r\n\f\v'  # what a row of empty cells above the header is made of
_PAIR = re.compile(r",(?=[^,=]*=)")  # the comma between two role=column pairs (a column name may hold one)


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


def _normalise(header: str) -> str:
    return " ".join(header.lower().replace("_", " ").replace("-", " ").split())


def names_role(header: str, role: str) -> bool:
    """Whether a header is one of the names a column of `role` is found by ("Retrieved context" for context)."""
    return _normalise(header) in ALIASES[role]


def _clean(cells: list[str]) -> list[str]:
    """The cells without NUL characters, which no database text column or Slack message takes."""
    return [cell.replace("\x00", "") for cell in cells]


def parse_columns(texts: Iterable[str]) -> dict[str, str]:
    """{role: column} from `answer=model_response` texts, each holding one pair or several separated by commas.

    Raises:
        CsvError: A text is not role=column, names no role, or gives a role twice.
    """
    pairs = []
    for text in texts:
        for pair in _PAIR.split(text):
            role, equals, column = pair.partition("=")
            if not equals or not column.strip():
                raise CsvError(f"cannot read the column choice {pair.strip()!r}: write role=column, such as "
                               "answer=model_response")
            pairs.append((role, column))
    return choose_columns(pairs)


def choose_columns(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{role: column} from (role, column) pairs, spaces around each stripped; CsvError for an unknown role or one
    given twice."""
    chosen: dict[str, str] = {}
    for role, column in pairs:
        role, column = role.strip().lower(), column.strip()
        if role not in ALIASES:
            raise CsvError(f"{role or '(nothing)'} is not a role of a column: the roles are {', '.join(ALIASES)}")
        if role in chosen:
            raise CsvError(f'the {role} column is given twice ("{chosen[role]}" and "{column}"); give one')
        chosen[role] = column
    return chosen


def _unique(headers: list[str]) -> list[str]:
    """The header names with each repeat renamed `name.2`, `name.3`, ... (a number no header uses)."""
    taken, seen, names = set(headers), set(), []
    for name in headers:
        if name in seen:
            number = 2
            while f"{name}.{number}" in taken:
                number += 1
            name = f"{name}.{number}"
            taken.add(name)
        seen.add(name)
        names.append(name)
    return names


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
        found = {role: _meant(ALIASES[role], self.headers, taken) for role in roles if role not in self._index}
        return {role: header for role, header in found.items() if header is not None}

    def __iter__(self) -> Iterator[CsvRow | MalformedRow]:
        csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
        row = 0
        try:
            with self.path.open(encoding=self.encoding, newline="") as f:
                started = _start(f)
                if started is None:  # emptied since open_csv
                    return
                _, row, reader = started
                next(reader)  # the header
                for cells in reader:
                    if cells == [_END]:
                        return
                    row += 1
                    if cells and cells[-1].endswith(_END):  # the reader reached the end of the file inside a quoted cell
                        opened = _clean([*cells[:-1], cells[-1][: -len(_END)]])
                        yield MalformedRow(row, 'it opens a quote (") that is never closed, so it runs to the end of '
                                                "the file; close the quote or remove it", opened, self._model_in(opened))
                        return
                    item = self._make(row, _clean(cells))
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


def read_passages(cell: str) -> list[str] | str:
    """The passages a context cell holds: a JSON list of strings (several passages, in order), or plain text (one
    passage; none for an empty cell). A cell that opens with "[" and is not a JSON list of strings is not guessed at:
    the reason a person reads is returned instead."""
    text = cell.strip()
    if not text:
        return []
    if not text.startswith("["):
        return [cell]
    found = json_passages(text)
    if isinstance(found, list):
        return found
    why = "it " + found if found.startswith("is not valid") else "it is JSON, but not a list of strings"
    return (f'the context cell starts with "[" but {why}: write several passages as a JSON list of strings, such as '
            '["first passage", "second passage"], and one passage that starts with "[" as a list of one')


def _model(cell: str | None) -> str | None:
    """The model a cell names (cut to MODEL_NAME_LIMIT), or None for an empty one."""
    return capped_model_name(cell) if cell and cell.strip() else None


def holds_pairs(path: str | Path, columns: Mapping[str, str] | None = None) -> bool:
    """Whether a file's header gives two answers per row (answer_a and answer_b) and no answer column: a file of
    pairs, for a pairwise rubric. False for a file that cannot be read (opening it again says why)."""
    try:
        source = open_csv(path, columns, pairs=True, reference=False)
    except CsvError:
        return False
    return not source.has_answer


def capped_model_name(name: str | None) -> str | None:
    """A model's name cut to MODEL_NAME_LIMIT characters, with a visible "…" when it was longer."""
    if name is None or len(name) <= MODEL_NAME_LIMIT:
        return name
    return name[: MODEL_NAME_LIMIT - 1] + "…"


def open_csv(path: str | Path, columns: Mapping[str, str] | None = None, *, how: str = CHOOSE,
             model_or_name: bool = False, reference: bool = True, pairs: bool = False,
             context: bool = False) -> CsvSource:
    """Detect encoding and delimiter, read the header, resolve columns.

    `columns` names the column of some roles ({"answer": "model_response"}); the others are found by their header
    names. `how` tells a person how to name one (formatted with role and column) when two columns fit one role. With
    `model_or_name`, a model that names no column is left out (the caller takes it for the model's name). Without
    `reference` (a rubric that grades no reference), a file may have no reference column: its rows' is empty. With
    `pairs` (a pairwise rubric), each row holds two answers (answer_a, answer_b, and optionally model_a, model_b).
    With `context` (a rubric whose template holds $context), a file needs a context column: each row's retrieved
    passages (`read_passages`); without it, a context column is a column like any other.
    Iterate the returned CsvSource to stream the rows.

    Raises:
        CsvError: The file is missing, empty, binary, undecodable or lacks a required column; two columns fit one
            role; a column named in `columns` is not in the file.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD)
        encoding = detect_encoding(path, head)
        csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
        with path.open(encoding=encoding, newline="") as f:
            started = _start(f)
            if started is None:
                raise CsvError(f"{path}: the file is empty; export the sheet with a header row and data rows")
            delimiter, _, reader = started
            raw = next(reader)
    except OSError as err:
        raise CsvError(f"cannot read {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:  # only if the file changed during the pre-scan
        raise CsvError(f"{path}: the header is not valid {encoding}; {RESAVE}") from err
    except csv.Error as err:
        raise CsvError(f"{path}: the header row cannot be read: {err}") from err
    if raw[-1].endswith(_END):
        raise CsvError(f'{path}: the header row opens a quote (") that is never closed; close the quote or remove it')

    raw = [h.strip().lstrip("\ufeff").strip() for h in _clean(raw)]
    headers = _unique(raw)
    chosen = dict(columns or {})
    if model_or_name and "model" in chosen and _position(headers, chosen["model"]) is None:
        del chosen["model"]
    index = _resolve(path, raw, headers, chosen, how, context=context)
    missing = [role for role in (*(PAIR_REQUIRED if pairs else REQUIRED), *(("context",) if context else ()))
               if role not in index and (reference or role != "reference")]
    if missing == ["answer"] and {"answer_a", "answer_b"} <= index.keys():
        raise CsvError(f"{path}: each row holds two answers ({headers[index['answer_a']]}, "
                       f"{headers[index['answer_b']]}) and the rubric grades one; compare them with a pairwise "
                       "rubric (such as the built-in pairwise), or name the column to grade: "
                       f"{how.format(role='answer', column=headers[index['answer_a']])}")
    if missing:  # said whole: every column missing is named, and the headers that nearly spell one
        found = ", ".join(f'"{h}"' for h in headers) or "none"
        accepted = "; ".join(f"{role}: {', '.join(ALIASES[role])}" for role in missing)
        meant = {role: header for role in missing
                 if (header := _meant(ALIASES[role], headers, set(index.values()))) is not None}
        guess = " and ".join(f'"{header}" for the {role}' if len(missing) > 1 else f'"{header}"'
                             for role, header in meant.items())
        why = (" The rubric grades each answer against the passages retrieved for it ($context in its template): a "
               "context cell holds one passage as text, or several as a JSON list of strings." if "context" in missing
               else "")
        raise CsvError(
            f"{path}: no {' or '.join(missing)} column.{why}" + (f" Did you mean {guess}?" if guess else "")
            + f" Headers found: {found}. Accepted header names (any case; spaces, _ and - count alike) - {accepted}. "
            f"Rename the header cells and try again, or name the column: "
            f"{how.format(role=missing[0], column=meant.get(missing[0], 'COLUMN'))}."
        )
    named = next((i + 1 for i in range(len(raw) - 1, -1, -1) if raw[i]), 0)
    return CsvSource(path, encoding, delimiter, headers, index, chosen, named=named, reference=reference, pairs=pairs,
                     context=context)


def _position(headers: list[str], column: str) -> int | None:
    """Where the column a person named is: its exact name, else the one name equal to it in any case and spacing."""
    if column in headers:
        return headers.index(column)
    alike = [i for i, header in enumerate(headers) if _normalise(header) == _normalise(column)]
    return alike[0] if len(alike) == 1 else None


def _meant(names: Iterable[str], headers: list[str], taken: set[int]) -> str | None:
    """The header (at none of the `taken` positions) that nearly spells one of `names`, as the file writes it."""
    spelled: dict[str, str] = {}
    for position, header in enumerate(headers):
        if position not in taken and header.strip():
            spelled.setdefault(_normalise(header), header)
    found = closest([_normalise(name) for name in names], spelled)
    return spelled[found] if found is not None else None


def _resolve(path: Path, raw: list[str], headers: list[str], chosen: Mapping[str, str], how: str, *,
             context: bool = False) -> dict[str, int]:
    """The column position of each role: the one a person named, else the one column whose header fits the role (the
    context only for a rubric that reads it: elsewhere a context column is a column like any other)."""
    index: dict[str, int] = {}
    for role, column in chosen.items():
        position = _position(headers, column)
        if position is None:
            found = ", ".join(f'"{h}"' for h in headers)
            meant = _meant([column], headers, set())
            guess = f'; did you mean "{meant}"? The' if meant is not None else "; the"
            raise CsvError(f'{path}: there is no column "{column}" for the {role}{guess} columns are {found}')
        index[role] = position
    taken = set(index.values())
    for role, names in ALIASES.items():
        fits = [i for i, header in enumerate(raw) if i not in taken and _normalise(header) in names]
        if role in index or not fits or (role == "context" and not context):
            continue
        if len(fits) > 1:
            first, second = headers[fits[0]], headers[fits[1]]
            raise CsvError(f'{path}: both "{first}" and "{second}" could be the {role} column. Say which one to '
                           f"grade, such as {how.format(role=role, column=second)}, or rename the other")
        index[role] = fits[0]
    return index


def _start(f: TextIO) -> tuple[str, int, Iterator[list[str]]] | None:
    """Skip a `sep=` line, blank lines and rows of empty cells; return (delimiter, header row number, reader at the
    header). The reader ends with a row [_END], or with _END at the end of a quoted cell never closed.

    Returns None when the file holds nothing but blank lines.
    """
    line = f.readline()
    text = line.rstrip("\r\n")
    sep = None
    if len(text) == 5 and text[:4].lower() == "sep=":  # Excel's delimiter hint, not a row
        sep, line = text[4], f.readline()
    skipped = 0
    while line and not line.strip(_EMPTY_ROW + (sep or "")):
        skipped += 1  # a blank line is still a row in a spreadsheet
        line = f.readline()
    if not line:
        return None
    delimiter = sep or _guess_delimiter(line)
    return delimiter, skipped + 1, csv.reader(chain([line], f, [_END]), delimiter=delimiter)


def _guess_delimiter(line: str) -> str:
    """The most frequent of , ; and tab outside quotes; comma on a tie or when none occurs."""
    counts = dict.fromkeys(",;\t", 0)
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    best = max(counts.values())
    winners = [d for d, n in counts.items() if n == best]
    return winners[0] if best and len(winners) == 1 else ","
