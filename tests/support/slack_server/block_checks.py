"""Block Kit as Slack checks it: every block parsed and validated by slack_sdk, and a message's own limits."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

MESSAGE_BLOCKS = 50  # a message holds at most 50 blocks...
MARKDOWN_CHARACTERS = 12_000  # ...its markdown blocks 12,000 characters in all...
TABLES = 1  # ...and one table


def block_problems(blocks: Any, *, message: bool = True) -> list[str]:
    """Slack's words for what is wrong with these blocks (nothing: an empty list).

    Each block must be of a type slack_sdk knows and pass its validation, nested elements included (to_dict validates
    every object it renders); a message adds its own limits on top of a view's.
    """
    if not isinstance(blocks, list):
        return ["[ERROR] blocks must be a list [json-pointer:/blocks]"]
    problems = []
    for index, raw in enumerate(blocks):
        where = f"[json-pointer:/blocks/{index}]"
        if not isinstance(raw, dict):
            problems.append(f"[ERROR] a block must be an object {where}")
            continue
        try:
            block = Block.parse(raw)
            if block is None:
                problems.append(f"[ERROR] unknown block type {raw.get('type')!r} {where}")
                continue
            block.to_dict()
        except (SlackObjectFormationError, TypeError, ValueError, KeyError, AttributeError) as error:
            problems.append(f"[ERROR] {error} {where}")
    if message:
        if len(blocks) > MESSAGE_BLOCKS:
            problems.append(f"[ERROR] no more than {MESSAGE_BLOCKS} items allowed [json-pointer:/blocks]")
        typed = [b for b in blocks if isinstance(b, dict)]
        if sum(1 for b in typed if b.get("type") == "table") > TABLES:
            problems.append("[ERROR] only one table block is allowed in a message [json-pointer:/blocks]")
        markdown = sum(len(str(b.get("text", ""))) for b in typed if b.get("type") == "markdown")
        if markdown > MARKDOWN_CHARACTERS:
            problems.append(f"[ERROR] markdown blocks must hold no more than {MARKDOWN_CHARACTERS} characters "
                            "[json-pointer:/blocks]")
    return problems
