"""A context cell: the passages a RAG assistant retrieved for a row, as a JSON list of strings (several, in order) or
plain text (one); and how the history keeps the cell once its passages are kept apart, to write it back as it was."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot.records import context_of, json_passages


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


# How a context cell holding a JSON list can be written from its passages: the history's own form (the row's
# `context` column: bot.records.context_text), Python's default, and the compact forms of JavaScript's JSON.stringify.
_JSON_FORMS: dict[str, dict[str, Any]] = {
    "json": {"ensure_ascii": False},
    "json-ascii": {},
    "json-compact": {"ensure_ascii": False, "separators": (",", ":")},
    "json-compact-ascii": {"separators": (",", ":")},
}
TEXT_FORM = "text"  # a cell of one passage as plain text
KEPT = "passages"  # the key of what the history keeps of a context cell it writes back: {"passages": form}


def kept_cell(cell: str, passages: list[str], context: str) -> str | dict[str, str]:
    """What the history keeps of a row's context cell: the passages are kept once, in the row's `context` (their
    `context_text`), and the cell as the form to write it back from them ({"passages": "json"}), or the cell itself
    when no form gives it back exactly (a JSON list spaced its own way, an empty cell)."""
    if cell == context:
        return {KEPT: "json"}
    if len(passages) == 1 and cell == passages[0]:
        return {KEPT: TEXT_FORM}
    if cell.startswith("["):
        for form, options in _JSON_FORMS.items():
            if form != "json" and json.dumps(passages, **options) == cell:
                return {KEPT: form}
    return cell


def written_cell(kept: object, context: str | None) -> str:
    """A context cell as it was read, from what `kept_cell` kept and the row's `context` (any other cell as it is)."""
    if not isinstance(kept, dict):
        return str(kept)
    form = kept.get(KEPT)
    if form == "json" and context is not None:
        return context
    passages = context_of(context) or []
    if form == TEXT_FORM and len(passages) == 1:
        return passages[0]
    if form in _JSON_FORMS:
        return json.dumps(passages, **_JSON_FORMS[form])
    raise ValueError(f"a kept context cell {kept!r} that cannot be written back")


def input_cells(cells: Mapping[str, object] | None, context: str | None) -> dict[str, str]:
    """A history row's input cells as its file held them, its context cell written back from the row's passages."""
    return {header: cell if isinstance(cell, str) else written_cell(cell, context) for header, cell in (cells or {}).items()}
