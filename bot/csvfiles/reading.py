"""Open a CSV people export from spreadsheets: its encoding and delimiter found, its header read and each role's column
resolved (bot.csvfiles.columns); iterating what it returns streams the rows (bot.csvfiles.rows)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

from bot.csvfiles.columns import CHOOSE, check_required, position, resolve
from bot.csvfiles.encoding import RESAVE, detect_encoding
from bot.csvfiles.layout import END, allow_long_cells, clean, start, unique
from bot.csvfiles.rows import CsvSource
from bot.errors import CsvError

_HEAD = 8192  # bytes inspected for magic numbers and NULs


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
    passages (bot.csvfiles.passages); without it, a context column is a column like any other.
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
        allow_long_cells()
        with path.open(encoding=encoding, newline="") as f:
            started = start(f)
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
    if raw[-1].endswith(END):
        raise CsvError(f'{path}: the header row opens a quote (") that is never closed; close the quote or remove it')

    raw = [h.strip().lstrip("\ufeff").strip() for h in clean(raw)]
    headers = unique(raw)
    chosen = dict(columns or {})
    if model_or_name and "model" in chosen and position(headers, chosen["model"]) is None:
        del chosen["model"]
    index = resolve(path, raw, headers, chosen, how, context=context)
    check_required(path, headers, index, how, reference=reference, pairs=pairs, context=context)
    named = next((i + 1 for i in range(len(raw) - 1, -1, -1) if raw[i]), 0)
    return CsvSource(path, encoding, delimiter, headers, index, chosen, named=named, reference=reference, pairs=pairs,
                     context=context)


def holds_pairs(path: str | Path, columns: Mapping[str, str] | None = None) -> bool:
    """Whether a file's header gives two answers per row (answer_a and answer_b) and no answer column: a file of
    pairs, for a pairwise rubric. False for a file that cannot be read (opening it again says why)."""
    try:
        source = open_csv(path, columns, pairs=True, reference=False)
    except CsvError:
        return False
    return not source.has_answer
