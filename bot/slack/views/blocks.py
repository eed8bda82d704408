"""Block Kit pieces shared by cards and views: sections, context lines, and messages within Slack's size limits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import AlertBlock, Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.slack.text import clip, escape
from bot.slack.views.size_limits import MESSAGE_BLOCKS, MESSAGE_CHARS, SECTION_LIMIT, TEXT_LIMIT


def section(markdown: str) -> SectionBlock:
    """A section of mrkdwn text (already escaped), cut to the section limit should a caller not have."""
    return SectionBlock(text=MarkdownTextObject(text=clip(markdown, SECTION_LIMIT)[0]))


def context(*parts: str) -> ContextBlock:
    """A small grey line of the non-empty `parts`, separated by dots."""
    return ContextBlock(elements=[MarkdownTextObject(text=" · ".join(p for p in parts if p))])


def size(blocks: Iterable[Block]) -> int:
    """Characters the blocks take in a message, as Slack counts them (roughly: their JSON)."""
    return len(json.dumps([block.to_dict() for block in blocks], ensure_ascii=False))


def encoded_size(blocks: Iterable[Block]) -> int:
    """Bytes the blocks take in a view's JSON (UTF-8: an Arabic letter takes two)."""
    return len(json.dumps([block.to_dict() for block in blocks], ensure_ascii=False).encode("utf-8"))


def message(blocks: list[Block], text: str) -> dict[str, Any]:
    """Keyword arguments for a post, an update or an ephemeral reply: blocks as dicts, and the fallback text."""
    return {"text": clip(text, TEXT_LIMIT)[0], "blocks": [block.to_dict() for block in blocks]}


def warning_blocks(warnings: Iterable[str]) -> list[Block]:
    """A warning alert per warning (untrusted text, escaped here), for a message."""
    return [alert(escape(warning)) for warning in warnings]


def warning_sections(warnings: Iterable[str]) -> list[Block]:
    """A section per warning (untrusted text, escaped here), marked as one: for the Home tab, which shows sections."""
    return [section(f":warning: {escape(warning)}") for warning in warnings]


def alert(text: str) -> AlertBlock:
    """Slack's warning alert with `text` (mrkdwn, already escaped)."""
    return AlertBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)[0]), level="warning")


def notice(text: str) -> dict[str, Any]:
    """A one-paragraph message (already escaped)."""
    return message([section(text)], text)


def listing(head: Sequence[Block], entries: Sequence[Block], *, more: str) -> list[Block]:
    """`head` then as many `entries` as one message holds; `more` (with {n}) says how many were left out."""
    blocks, used = list(head), size(head)
    for shown, entry in enumerate(entries):
        cost = size([entry])
        if len(blocks) + 2 > MESSAGE_BLOCKS or used + cost + 200 > MESSAGE_CHARS:
            return [*blocks, context(more.format(n=len(entries) - shown))]
        blocks.append(entry)
        used += cost
    return blocks


def packed(blocks: list[Block]) -> list[list[Block]]:
    """`blocks` split into messages that each stay within the block count and size limits."""
    messages: list[list[Block]] = [[]]
    for block in blocks:
        if messages[-1] and (len(messages[-1]) + 1 > MESSAGE_BLOCKS - 1
                             or size([*messages[-1], block]) > MESSAGE_CHARS):
            messages.append([])
        messages[-1].append(block)
    return [m for m in messages if m]


def text_sections(lines: list[str], heading: str) -> list[SectionBlock]:
    """Lines of mrkdwn in as few sections as the section limit allows, the first one under `heading`."""
    sections, current = [], heading
    for line in lines:
        if len(current) + len(line) + 1 > SECTION_LIMIT:
            sections.append(section(current))
            current = ""
        current = f"{current}\n{line}" if current else line
    return [*sections, section(current)] if current else sections


@dataclass
class Room:
    """What is left of a modal: blocks and bytes."""

    blocks: int
    size: int

    def take(self, entries: Iterable[Block], share: float = 1.0) -> list[Block]:
        """The first `entries` that fit in `share` of the room left; the room shrinks by what they take."""
        limit_blocks, limit_size = int(self.blocks * share), int(self.size * share)
        taken: list[Block] = []
        used = 0
        for entry in entries:
            cost = encoded_size([entry]) + 1  # and a comma
            if len(taken) + 1 > limit_blocks or used + cost > limit_size:
                break
            taken.append(entry)
            used += cost
        self.blocks -= len(taken)
        self.size -= used
        return taken
