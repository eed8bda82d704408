"""Reading the judge's reply: its own JSON object found among prose, fences or quoted objects, validated against the
rubric, and the request that asks for a repair."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from bot.judge.injection_screen import verdict_shape
from bot.llm.answers import Completion
from bot.records import Triple
from bot.rubric import Rubric


def _objects(text: str, shape: re.Pattern[str] | None = None) -> tuple[list[dict[str, Any]], bool]:
    """Every outermost JSON object in `text`, in order (bare, in code fences or among prose), and whether a `{` that
    opens a key of `shape` (an object shaped like a verdict) does not decode."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    broken = False
    position = 0
    while (start := text.find("{", position)) != -1:
        try:
            value, position = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            broken = broken or (shape is not None and shape.match(text, start) is not None)
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
    return found, broken


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _quoted_in(found: dict[str, Any], texts: Collection[str]) -> bool:
    """Whether the object `found` in a reply is one the question, reference or answer holds (parsed alike, or the
    same text but for whitespace)."""
    compact = _squeezed(json.dumps(found, ensure_ascii=False, separators=(",", ":")))
    return any(found in _objects(text)[0] or compact in _squeezed(text) for text in texts if "{" in text)


def extract_json(text: str, fields: Collection[str] = (), quoted: Collection[str] = ()) -> Any:
    """The judge's own JSON object in a reply; ValueError if there is none, or more than one verdict to choose from.

    A reply that is one object is taken whole. Otherwise the verdict is the object holding one of `fields` (the
    rubric's output keys), never one that the `quoted` texts (the question, reference and answer) hold: a judge that
    quotes the answer's verdict-shaped JSON has its reply refused rather than the answer's JSON taken, when its own
    verdict is a different one, does not decode, or is missing. With no verdict-shaped object at all, the first object
    is the reply.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty")
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(value, dict):
            return value
    objects, broken = _objects(stripped, verdict_shape(tuple(fields)) if fields else None)
    if broken:
        raise ValueError("the reply holds a verdict object that is not valid JSON; reply with your own verdict only, "
                         "as one valid JSON object")
    if not objects:
        raise ValueError("no JSON object found in the reply")
    shaped = [found for found in objects if not found.keys().isdisjoint(fields)]
    if any(verdict != shaped[-1] for verdict in shaped):
        raise ValueError(f"the reply holds {len(shaped)} different verdict objects (one may be quoted from the "
                         "answer); reply with your own verdict only")
    if shaped and _quoted_in(shaped[-1], quoted):
        raise ValueError("the only verdict object in the reply is quoted from the question, reference or answer; "
                         "reply with your own verdict only")
    return shaped[-1] if shaped else objects[0]


def problems_of(rubric: Rubric, triple: Triple, completion: Completion) -> tuple[dict[str, Any] | None, list[str]]:
    """The reply's verdict validated against the rubric and the triple (the passage numbers against its passages);
    (output, problems), output None when there is no verdict to read."""
    if completion.refusal:
        return None, [f"the judge refused: {completion.refusal}"]
    try:
        data = extract_json(completion.text, rubric.output.keys(), triple.texts())
    except ValueError as err:
        return None, [str(err)]
    return rubric.validate_reply(data, passages=len(triple.context or ()) if rubric.uses_context else None)


def repair_request(problems: list[str]) -> str:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        "Your reply cannot be accepted:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON object, following the schema and the rules."
    )
