"""Read the CSVs people export from spreadsheets; write formula-safe results."""

from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TextIO

from bot.errors import CsvError

REQUIRED = ("question", "reference", "answer")
ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "prompt"),
    "reference": ("reference", "ground truth", "expected", "reference answer"),
    "answer": ("answer", "generated answer", "model response", "model answer", "response", "output"),
    "model": ("model", "model name"),
}

_HEAD = 8192  # bytes inspected for magic numbers and NULs
_CHUNK = 1 << 20  # bytes per step of the UTF-8 pre-scan
_FIELD_LIMIT = 2**31 - 1  # fits a C long on every platform; csv's default is 131,072
_EXCEL_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")  # xlsx (zip), xls (OLE2)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_RESAVE = "open it in your spreadsheet and save it again as 'CSV UTF-8'"


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One gradable row. `line` is the row number a spreadsheet shows (header = 1)."""

    line: int
    question: str
    reference: str
    answer: str
    model: str | None
    cells: dict[str, str]


@dataclass(frozen=True, slots=True)
class MalformedRow:
    """A row that cannot be graded, with the reason a person should read."""

    line: int
    reason: str
    cells: list[str]


def _normalise(header: str) -> str:
    return " ".join(header.lower().replace("_", " ").replace("-", " ").split())


class CsvSource:
    """An opened CSV: detected encoding/delimiter, resolved columns, rows streamed on iteration."""

    def __init__(self, path: Path, encoding: str, delimiter: str, headers: list[str]) -> None:
        self.path = path
        self.encoding = encoding
        self.delimiter = delimiter
        self.headers = headers
        self.columns: dict[str, str] = {}
        self._index: dict[str, int] = {}  # role -> column position
        for i, header in enumerate(headers):
            name = _normalise(header)
            for role, names in ALIASES.items():
                if name in names and role not in self._index:
                    self._index[role] = i
                    self.columns[role] = header
        # a header text that appears twice keeps its first column in CsvRow.cells
        self._first = [i for i, h in enumerate(headers) if headers.index(h) == i]

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
                    row += 1
                    item = self._make(row, cells)
                    if item is not None:
                        yield item
        except UnicodeDecodeError as err:
            raise CsvError(
                f"{self.path}: the text near row {row + 1} is not valid {self.encoding} "
                f"(the file may have changed since it was opened); {_RESAVE}"
            ) from err
        except csv.Error as err:
            raise CsvError(f"{self.path}: row {row + 1} cannot be read: {err}") from err
        except OSError as err:
            raise CsvError(f"cannot read {self.path}: {err.strerror or err}") from err

    def _make(self, line: int, cells: list[str]) -> CsvRow | MalformedRow | None:
        # [] is an empty line; a row of empty cells (",,,") is what spreadsheets leave below the data
        if not any(cell.strip() for cell in cells):
            return None
        if len(cells) != len(self.headers):
            count = f"{len(cells)} cell" + ("" if len(cells) == 1 else "s")
            return MalformedRow(line, f"row {line} has {count} but the header has {len(self.headers)}", cells)
        value = {role: cells[i] for role, i in self._index.items()}
        empty = [role for role in ("question", "reference") if not value[role].strip()]
        if empty:
            what = " and ".join(empty) + (" cells are" if len(empty) > 1 else " cell is")
            return MalformedRow(line, f"row {line}: the {what} empty", cells)
        model = value.get("model")
        model = model if model and model.strip() else None
        cells_by_header = {self.headers[i]: cells[i] for i in self._first}
        return CsvRow(line, value["question"], value["reference"], value["answer"], model, cells_by_header)


def open_csv(path: str | Path) -> CsvSource:
    """Detect encoding and delimiter, read the header, resolve columns.

    Iterate the returned CsvSource to stream the rows.

    Raises:
        CsvError: The file is missing, empty, binary, undecodable or lacks a required column.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD)
        encoding = _detect_encoding(path, head)
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
        raise CsvError(f"{path}: the header is not valid {encoding}; {_RESAVE}") from err
    except csv.Error as err:
        raise CsvError(f"{path}: the header row cannot be read: {err}") from err

    headers = [h.strip().lstrip("\ufeff").strip() for h in raw]
    source = CsvSource(path, encoding, delimiter, headers)
    missing = [role for role in REQUIRED if role not in source.columns]
    if missing:
        found = ", ".join(f'"{h}"' for h in headers) or "none"
        accepted = "; ".join(f"{role}: {', '.join(ALIASES[role])}" for role in missing)
        raise CsvError(
            f"{path}: no {' or '.join(missing)} column. Headers found: {found}. "
            f"Accepted header names (any case; spaces, _ and - count alike) - {accepted}. "
            "Rename the header cells and try again."
        )
    return source


def _detect_encoding(path: Path, head: bytes) -> str:
    """Pick the codec from the byte-order mark, else UTF-8 if the whole file decodes, else cp1252."""
    if head.startswith(_EXCEL_MAGIC):
        raise CsvError(f"{path} looks like an Excel workbook, not a CSV; {_RESAVE}")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, name = "utf-16", "UTF-16"
    elif b"\x00" in head:
        raise CsvError(f"{path} is not a text CSV (it contains binary data); {_RESAVE}")
    elif head.startswith(codecs.BOM_UTF8):
        encoding, name = "utf-8-sig", "UTF-8"
    else:
        encoding, name = "utf-8", "UTF-8"
    problem = _decode_problem(path, encoding)
    if problem is None:
        return encoding
    if encoding != "utf-8":
        raise CsvError(f"{path} starts with a {name} marker but is not valid {name} ({problem}); {_RESAVE}")
    problem = _decode_problem(path, "cp1252")
    if problem is None:
        return "cp1252"
    raise CsvError(f"{path} is neither UTF-8 nor Windows-1252 text ({problem}); {_RESAVE}")


def _decode_problem(path: Path, encoding: str) -> str | None:
    """Strictly decode the whole file in chunks (constant memory); describe the first bad byte, if any."""
    skip = len(codecs.BOM_UTF8) if encoding == "utf-8-sig" else 0  # so error offsets count from the data
    decoder = codecs.getincrementaldecoder("utf-8" if skip else encoding)("strict")
    newlines = 0
    with path.open("rb") as f:
        f.seek(skip)
        while True:
            chunk = f.read(_CHUNK)
            pending = len(decoder.getstate()[0])  # bytes of a character split across chunks
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as err:
                bad = f"byte 0x{err.object[err.start]:02x}"
                if encoding == "utf-16":
                    return bad
                line = newlines + chunk[: max(0, err.start - pending)].count(b"\n") + 1
                return f"{bad} on line {line}"
            if not chunk:
                return None
            newlines += chunk.count(b"\n")


def _start(f: TextIO) -> tuple[str, int, Iterator[list[str]]] | None:
    """Skip a `sep=` line and blank lines; return (delimiter, header row number, reader at the header).

    Returns None when the file holds nothing but blank lines.
    """
    line = f.readline()
    text = line.rstrip("\r\n")
    sep = None
    if len(text) == 5 and text[:4].lower() == "sep=":  # Excel's delimiter hint, not a row
        sep, line = text[4], f.readline()
    skipped = 0
    while line and not line.strip():
        skipped += 1  # a blank line is still a row in a spreadsheet
        line = f.readline()
    if not line:
        return None
    delimiter = sep or _guess_delimiter(line)
    return delimiter, skipped + 1, csv.reader(chain([line], f), delimiter=delimiter)


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


def neutralise(value: str) -> str:
    """Prefix a cell that a spreadsheet would run as a formula with a single quote.

    Formulas start with = + - @ tab or CR; text such as "-5" is prefixed too, the accepted price.
    """
    return "'" + value if value.startswith(_FORMULA_START) else value


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


class ResultsWriter:
    """Context manager writing a results CSV, every text cell neutralised.

    The file is UTF-8 with a BOM (so Excel shows non-Latin text) and comma-separated. It is
    written from the history after judging, so it can always be written again.
    """

    def __init__(self, path: str | Path, fieldnames: list[str]) -> None:
        """Create (or truncate) `path` and write the header row of `fieldnames`."""
        self.path = Path(path)
        self.fieldnames = list(fieldnames)
        self._file = self.path.open("w", encoding="utf-8-sig", newline="")
        self._writer = csv.writer(self._file)
        self._writer.writerow([neutralise(str(name)) for name in self.fieldnames])

    def write(self, row: dict[str, object]) -> None:
        """Write one row; missing keys and None give empty cells, keys outside fieldnames are ignored."""
        self._writer.writerow([_cell(row.get(name)) for name in self.fieldnames])

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
