"""A context cell: the passages a RAG assistant retrieved for a row, as a JSON list of strings (several, in order) or
plain text (one)."""

from __future__ import annotations

from bot.records import json_passages


def read_passages(cell: str) -> list[str] | str:
    """The passages a context cell holds: a JSON list of strings (several passages, in order), or plain text (one
    passage; none for an empty cell). A cell that opens with "[" and is not a JSON list of strings is not guessed at:
    the reason a person reads is returned instead."""
    text = cell.strip()
    if not text:
        return []
    if not text.startswith("["):
        return [cell]
    found = json_passages(text)
    if isinstance(found, list):
        return found
    why = "it " + found if found.startswith("is not valid") else "it is JSON, but not a list of strings"
    return (f'the context cell starts with "[" but {why}: write several passages as a JSON list of strings, such as '
            '["first passage", "second passage"], and one passage that starts with "[" as a list of one')
