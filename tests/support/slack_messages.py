"""What the bot posted on the local Slack server: its cards and their buttons, and its replies through response_urls."""

from __future__ import annotations

import asyncio
import json

from tests.support.slack_server import FakeSlackServer

INLINE = "eth How do I register for exams? || In myStudies (ETHIS). || Use myStudies."


def blocks_in(message: dict) -> list[dict]:
    """The blocks of a message or of a call's parameters (which may carry them as JSON text)."""
    blocks = message.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else list(blocks)


def blocks_json(message: dict) -> str:
    """The blocks of a message or call as one JSON text, to look for what they say."""
    return json.dumps(blocks_in(message), ensure_ascii=False)


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
