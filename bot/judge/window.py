"""Whether a row's prompt fits the judge model's context window: the tokens a rubric's messages and reply take, and
the check every judgment makes before its first request (a local server cuts a longer prompt and answers anyway)."""

from __future__ import annotations

import json
import math

from bot.judge.prompt import build_messages
from bot.llm.client import JudgeClient
from bot.llm.context_window import ContextWindow, room_for_row
from bot.llm.prices import PriceTable
from bot.llm.tokens import messages_tokens, text_tokens
from bot.records import Triple
from bot.rubric import Rubric, leaves

REQUEST_TOKENS = 3  # the reply's priming
BOUNDARY = "DATA-0123456789abcdef"  # as long as the random boundary the judge's texts are wrapped in
STRING_REPLY_TOKENS = 60  # a reasoning or explanation field, before any reply of the rubric is known
LIST_ITEMS = 3
LIST_ITEM_TOKENS = 20
_rooms: dict[str, float] = {}  # the room a row of each rubric text needs besides its texts, counted once


def prompt_tokens(rubric: Rubric) -> float:
    """The tokens every request of the rubric sends whatever the row: its messages around empty texts, and the reply
    schema in the request's response_format."""
    messages = build_messages(rubric, Triple(question="", reference="", answer=""), BOUNDARY)
    schema = json.dumps(rubric.reply_schema, ensure_ascii=False)
    return (messages_tokens(messages)
            + text_tokens(schema) + REQUEST_TOKENS)


def schema_reply_tokens(rubric: Rubric) -> int:
    """The tokens of a reply as the rubric's schema shapes it: each key, a short value for numbers, booleans and
    enums, a few sentences for free text."""
    total = 5.0
    for path, spec in leaves(rubric.output):
        total += text_tokens(path.rsplit(".", 1)[-1]) + 3
        kind = spec.type
        if kind == "string":
            total += STRING_REPLY_TOKENS
        elif kind == "enum":
            total += max((text_tokens(value) for value in spec.values or [""]), default=1) + 1
        elif kind == "list":
            item = STRING_REPLY_TOKENS / 3 if spec.items is not None and spec.items.type == "string" else 2
            total += (spec.min_items or LIST_ITEMS) * max(item, LIST_ITEM_TOKENS / 4)
        else:
            total += 2
    return math.ceil(total)


def room_for(rubric: Rubric) -> float:
    """The tokens a row of the rubric needs besides its own texts: its messages, the reply, and a repair turn."""
    room = _rooms.get(rubric.content_hash)
    if room is None:
        room = _rooms[rubric.content_hash] = room_for_row(prompt_tokens(rubric), schema_reply_tokens(rubric))
    return room


async def window_of(client: JudgeClient, prices: PriceTable | None = None) -> ContextWindow | None:
    """The judge model's context window, as its endpoint tells it (else as the price table lists it for the model);
    None when neither says."""
    window = await client.context_window()
    if window is None and prices is not None and (listed := prices.context_of(client.model)) is not None:
        window = ContextWindow(tokens=listed, source="the model's listed context window",
                               advice="choose a judge model with a longer context")
    return window


async def overflow(rubric: Rubric, triple: Triple, client: JudgeClient, prices: PriceTable | None = None) -> str | None:
    """Why the row cannot fit the judge model's context window (`window_of`); None when it fits, or when it is not
    known."""
    window = await window_of(client, prices)
    return None if window is None else window.overflow(room_for(rubric), triple.texts())
