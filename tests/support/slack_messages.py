"""What the bot posted on the local Slack server: its cards and their buttons, and its replies through response_urls."""

from __future__ import annotations

import asyncio
import json

from slack_sdk.models.blocks import TableBlock

from tests.support.slack_server import FakeSlackServer

INLINE = "eth How do I register for exams? || In myStudies (ETHIS). || Use myStudies."


def blocks_in(message: dict) -> list[dict]:
    """The blocks of a message or of a call's parameters (which may carry them as JSON text)."""
    blocks = message.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else list(blocks)


def blocks_json(message: dict) -> str:
    """The blocks of a message or call as one JSON text, to look for what they say."""
    return json.dumps(blocks_in(message), ensure_ascii=False)


def _cell_text(cell: dict) -> str:
    """What a table cell shows: a raw_text's text, a rich_text's text elements; any other element (a mention, a
    link, an emoji: what untrusted text must never become) as <its type>."""
    if cell["type"] == "raw_text":
        return cell["text"]
    assert cell["type"] == "rich_text", cell
    return "".join(element["text"] if element["type"] == "text" else f"<{element['type']}>"
                   for section in cell["elements"] for element in section["elements"])


def table_of(message: dict) -> dict | None:
    """The one table block of a message (None without one), checked as Slack checks it: slack_sdk's validation, one
    table a message, 100 rows, 20 cells a row, every row as long, no empty cell."""
    tables = [block for block in blocks_in(message) if block["type"] == "table"]
    assert len(tables) <= 1, f"Slack takes one table in a message: {len(tables)}"
    if not tables:
        return None
    [block] = tables
    TableBlock(**{key: value for key, value in block.items() if key != "type"}).validate_json()
    rows = block["rows"]
    assert 0 < len(rows) <= 100 and all(len(row) == len(rows[0]) for row in rows), rows
    assert len(rows[0]) <= 20 and len(block.get("column_settings") or []) <= 20
    assert all(_cell_text(cell) for row in rows for cell in row), "an empty cell"
    return block


def table_rows(message: dict) -> list[list[str]]:
    """What each cell of the message's table shows, row by row, the header first (empty without a table)."""
    block = table_of(message)
    return [[_cell_text(cell) for cell in row] for row in block["rows"]] if block else []


def table_dicts(message: dict) -> list[dict[str, str]]:
    """The rows of the message's table under its header: {column title: what the cell shows}."""
    header, *rows = table_rows(message) or [[]]
    return [dict(zip(header, row, strict=True)) for row in rows]


def buttons(message: dict) -> dict[str, str]:
    """action_id -> value of every button on a message."""
    found = {}
    for block in blocks_in(message):
        for element in block.get("elements", []) if block["type"] == "actions" else []:
            found[element["action_id"]] = element.get("value")
    return found


def feedback(message: dict) -> dict[str, str]:
    """The values of the feedback buttons on a message: {"agree": ..., "disagree": ...} (empty without them)."""
    for block in blocks_in(message):
        for element in block.get("elements", []) if block["type"] == "context_actions" else []:
            if element["type"] == "feedback_buttons":
                return {"agree": element["positive_button"]["value"], "disagree": element["negative_button"]["value"]}
    return {}


async def card_of(slack_server, channel: str = "C0GENERAL", *, count: int = 1, timeout: float = 10.0) -> dict:
    """The `count`-th message of `channel` (in posting order) that has become a card with buttons."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        cards = sorted((m for (c, _), m in list(slack_server.messages.items()) if c == channel and buttons(m)),
                       key=lambda m: float(m["ts"]))
        if len(cards) >= count:
            return cards[count - 1]
        assert asyncio.get_running_loop().time() < deadline, f"no card #{count} in {channel}: {slack_server.calls}"
        await asyncio.sleep(0.01)


async def said(slack_server: FakeSlackServer, count: int = 1) -> str:
    """Everything the bot said through response_urls, once at least `count` replies came."""
    calls = await slack_server.await_for("response_url", count=count)
    return json.dumps([call.params for call in calls], ensure_ascii=False)
