"""Where a CSV's header and rows begin, and how its lines are cut into cells: Excel's `sep=` line, blank lines and
rows of empty cells above the header skipped, the delimiter guessed from the header line, the end of the file marked,
NUL characters dropped and repeated header names told apart."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from itertools import chain
from typing import TextIO

END = "\ud800"  # fed to the reader after the last line: strict decoding never yields a lone surrogate
_FIELD_LIMIT = 2**31 - 1  # fits a C long on every platform; csv's default is 131,072
_EMPTY_ROW = ',;\t" \r\n\f\v'  # what a row of empty cells above the header is made of


def allow_long_cells() -> None:
    """Let the csv module read cells of any length a C long can count (its default stops at 131,072 characters)."""
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))


def start(f: TextIO) -> tuple[str, int, Iterator[list[str]]] | None:
    """Skip a `sep=` line, blank lines and rows of empty cells; return (delimiter, header row number, reader at the
    header). The reader ends with a row [END], or with END at the end of a quoted cell never closed.

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
    delimiter = sep or guess_delimiter(line)
    return delimiter, skipped + 1, csv.reader(chain([line], f, [END]), delimiter=delimiter)


def guess_delimiter(line: str) -> str:
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


def clean(cells: list[str]) -> list[str]:
    """The cells without NUL characters, which no database text column or Slack message takes."""
    return [cell.replace("\x00", "") for cell in cells]


def unique(headers: list[str]) -> list[str]:
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
