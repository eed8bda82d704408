"""Write the results CSV: every input column beside the verdict's, formula-safe, written atomically."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_QUOTED = re.compile('[",\r\n]')  # what the csv module's default dialect writes between quotes


def neutralise(value: str) -> str:
    """Prefix a cell that a spreadsheet would run as a formula with a single quote.

    Formulas start with = + - @ tab or CR; text such as "-5" is prefixed too, the accepted price.
    """
    return "'" + value if value.startswith(_FORMULA_START) else value


def restore(cell: str) -> str:
    """A cell as it was before `neutralise` kept a spreadsheet from running it."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_START) else cell


def flatten(obj: dict, prefix: str = "") -> dict[str, object]:
    """Flatten nested dicts to dotted keys; lists and empty dicts stay as values.

    {"evaluation": {"coverage": {"score": 5}}} -> {"evaluation.coverage.score": 5};
    a `prefix` is put, with a dot, before every key.
    """
    flat: dict[str, object] = {}
    for key, value in obj.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name))
        else:
            flat[name] = value
    return flat


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)  # str() of a number cannot hold a formula; "-1" must stay numeric
    if isinstance(value, (list, tuple, dict)):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return neutralise(str(value))


def csv_line(cells: Iterable[str]) -> str:
    """One row as the csv module's default dialect writes it (comma, double quote, QUOTE_MINIMAL, CRLF), exactly.

    Written here rather than by csv.writer for speed: its C writer copies a cell character by character (about 20 ns
    each on Python 3.11), so a cell of retrieved passages (9,000 characters) took 0.18 ms a row against 3 us here.
    """
    fields = [f'"{cell.replace(chr(34), chr(34) * 2)}"' if _QUOTED.search(cell) else cell for cell in cells]
    if fields == [""]:
        return '""\r\n'  # a lone empty cell is quoted, so that the line is not read as no row at all
    return ",".join(fields) + "\r\n"


class ResultsWriter:
    """Context manager writing a results CSV, every text cell neutralised, in place of `path` all at once.

    The file is UTF-8 with a BOM (so Excel shows non-Latin text) and comma-separated. It is
    written from the history after judging, so it can always be written again. Rows go to a hidden
    file beside `path`, which replaces `path` only when closed: a crash or an error while writing
    leaves whatever was at `path` as it was, never an empty or cut file.
    """

    def __init__(self, path: str | Path, fieldnames: list[str]) -> None:
        """Start writing the results for `path`, with the header row of `fieldnames`."""
        self.path = Path(path)
        self.fieldnames = list(fieldnames)
        self._partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        self._file = self._partial.open("x", encoding="utf-8-sig", newline="")
        self._file.write(csv_line(neutralise(str(name)) for name in self.fieldnames))

    def write(self, row: dict[str, object]) -> None:
        """Write one row; missing keys and None give empty cells, keys outside fieldnames are ignored."""
        self._file.write(csv_line([_cell(row.get(name)) for name in self.fieldnames]))

    def close(self) -> None:
        """Finish the file and put it in place of `path`."""
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._partial, self.path)
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Drop what was written; whatever was at `path` stays."""
        self._file.close()
        self._partial.unlink(missing_ok=True)

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()
