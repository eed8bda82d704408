"""A verdict's fields as a card shows them: each field's label, short ones as a field of their own, long ones as
text, and the items of a list (a claim and what the judge found of it) as lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from bot.rubric import FieldSpec
from bot.slack.text import escape


def field_label(path: tuple[str, ...]) -> str:
    return " › ".join(part.replace("_", " ") for part in path)


def walk_fields(values: dict[str, Any], specs: dict[str, FieldSpec] | None,
          path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any, FieldSpec | None]]:
    for key, value in values.items():
        spec = (specs or {}).get(key)
        if isinstance(value, dict):
            yield from walk_fields(value, spec.fields if spec else None, (*path, key))
        else:
            yield (*path, key), value, spec


def is_short(value: Any, spec: FieldSpec | None) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if spec is None:  # the rubric is gone or changed: a short one-line text is shown as a tag would be
        return isinstance(value, str) and len(value) <= 40 and "\n" not in value
    return spec.kind.shown == "field"


def short_value(value: Any, spec: FieldSpec | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        value = f"{value:g}"
    top = f" / {spec.max:g}" if spec is not None and spec.max is not None else ""
    return f"{escape(str(value))}{top}"


def long_value(value: Any) -> str:
    if isinstance(value, list):
        if not value:
            return "_none_"
        return "\n".join(f"• {_item(item)}" for item in value)
    return str(value)


def _item(item: Any) -> str:
    """One item of a list field as a line: a text as it is; an object (a claim and its verdict) as its values in
    the rubric's order, the text first and the rest named ("supported · passage 1"), empty ones left out."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return json.dumps(item, ensure_ascii=False)
    parts: list[str] = []
    for key, value in item.items():
        if value is None or value == "":
            continue
        if isinstance(value, str):
            parts.append(value.replace("_", " ") if " " not in value and parts else value)
        else:
            parts.append(f"{key.replace('_', ' ')} {json.dumps(value, ensure_ascii=False)}")
    return " · ".join(parts)
