"""Slack's table block: a header and rows cut to Slack's limits, untrusted text literal in its cells."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block, TableBlock

from bot.figures import MISSING
from bot.slack.text import plain
from bot.slack.views.blocks import context
from bot.slack.views.size_limits import TABLE_CELL, TABLE_CELLS, TABLE_ROWS, TABLE_TEXT

Cell = dict[str, Any]
NOTE_ROOM = 400  # characters kept in a message for the line that says what a table left out


@dataclass(frozen=True)
class Column:
    """A column's title, and how its cells sit: figures to the right, long text wrapped."""

    title: str
    right: bool = False
    wrap: bool = False


def text(value: str) -> Cell:
    """A cell of the bot's own words or figures (never untrusted text): raw_text, shown as it is."""
    return {"type": "raw_text", "text": value[:TABLE_CELL] or MISSING}


def untrusted(value: str | None, limit: int = TABLE_CELL) -> Cell:
    """A cell of untrusted text (a model's, rubric's, criterion's or tag's name): a rich_text cell of one text
    element, which Slack shows literally (a mention, a link or an emoji is an element of its own kind there, never
    parsed from text, so `<!channel>`, `*bold*` or `<https://x|y>` stay characters), on one line, cut, cleaned, and
    isolated so that its direction controls reorder nothing around it."""
    shown = plain(" ".join((value or "").split()), min(limit, TABLE_CELL)) or MISSING  # one line, spaces alike
    return {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": [{"type": "text",
                                                                                       "text": shown}]}]}


def _header(title: str) -> Cell:
    """A column's title in bold (it may be untrusted, such as a tag people gave: made literal like one)."""
    cell = untrusted(title)
    cell["elements"][0]["elements"][0]["style"] = {"bold": True}
    return cell


def cell_text(cell: Cell) -> str:
    """What a cell shows, whichever its kind."""
    if cell.get("type") == "rich_text":
        return "".join(str(element.get("text", "")) for section in cell.get("elements", [])
                       for element in section.get("elements", []))
    return str(cell.get("text", ""))


@dataclass
class Table:
    """A table block (None when not even one row fits), and what it left out."""

    block: TableBlock | None
    rows_left: int = 0
    columns_left: int = 0

    def blocks(self, *, rows: str, columns: str = "{n} more column(s) not shown") -> list[Block]:
        """The table, then a line saying what was left out: `rows` and `columns` are mrkdwn whose first {n} says how
        many (replaced, not formatted: what follows it may quote a file's name, braces and all)."""
        said = [words.replace("{n}", f"{n:,}", 1) for words, n in ((rows, self.rows_left), (columns, self.columns_left))
                if n]
        return [*([self.block] if self.block is not None else []), *([context(*said)] if said else [])]


def _size(row: Sequence[Cell]) -> int:
    return len(json.dumps(list(row), ensure_ascii=False)) + 1  # and a comma


def _letters(row: Sequence[Cell]) -> int:
    return sum(len(cell_text(cell)) for cell in row)


def table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *, room: int,
          last: Sequence[Cell] | None = None) -> Table:
    """A table of `columns` over `rows`, cut to Slack's limits: 20 cells a row (the first columns kept), 100 rows
    with the header, 10,000 characters of cell text, and `room` characters of JSON (what the rest of the message
    leaves); the first rows are kept, and `last` (such as a row of totals) always closes the table."""
    kept = list(columns[:TABLE_CELLS])
    width = len(kept)
    settings = [{"align": "right"} if column.right else {"align": "left", "is_wrapped": True} if column.wrap
                else {"align": "left"} for column in kept]
    header = [_header(column.title) for column in kept]
    closing = [list(last[:width])] if last is not None else []
    used = len(json.dumps({"type": "table", "column_settings": settings}, ensure_ascii=False)) + 20
    used += _size(header) + sum(map(_size, closing))
    letters = _letters(header) + sum(map(_letters, closing))
    body: list[list[Cell]] = []
    for row in rows:
        cells = list(row[:width])
        if (len(body) + 1 + len(closing) + 1 > TABLE_ROWS or used + _size(cells) > room
                or letters + _letters(cells) > TABLE_TEXT):
            break
        body.append(cells)
        used += _size(cells)
        letters += _letters(cells)
    block = TableBlock(rows=[header, *body, *closing], column_settings=settings) if body or closing else None
    if block is not None and used > room:
        block = None  # not even the header fits
    return Table(block=block, rows_left=len(rows) - (len(body) if block is not None else 0),
                 columns_left=max(len(columns) - TABLE_CELLS, 0))
