"""The Correct it form: the judge's value of every enum and number of a judgment, for a person to change, and
what a submitted form holds."""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError
from slack_sdk.models.blocks import InputBlock, Option, PlainTextInputElement, StaticSelectElement
from slack_sdk.models.views import View

from bot.rubric import FieldSpec, Rubric, leaves
from bot.slack.text import clean, clip, shown
from bot.slack.views.blocks import section
from bot.slack.views.card import LABEL_ROOM
from bot.slack.views.commands import FormContext, FormSeal
from bot.slack.views.size_limits import (
    BUTTON_LIMIT,
    ERROR_LIMIT,
    HEADER_LIMIT,
    INPUT_LIMIT,
    SELECT_OPTIONS,
    VIEW_BLOCKS,
)
from bot.store import Judgment
from bot.trust.labels import value_at

CORRECTION = "judgebot_correction"  # the callback of the Correct it form
FIELD_BLOCK, VALUE_ACTION, NOTE_BLOCK = "field_", "value", "note"
SELECT_RANGE = 11  # an integer field with at most this many values is picked from a list; a wider one is typed


class CorrectionContext(FormContext):
    """Where the Correct it form was opened (the card's channel and workspace), and the judgment it corrects."""

    judgment_id: int


def open_correction(seal: FormSeal, metadata: str) -> CorrectionContext | None:
    """The context a Correct it form was opened in, or None unless this bot sealed it exactly so."""
    if seal.open(metadata) is None:
        return None
    try:  # the seal is checked: what it holds is ours, and read whole (a form of /judge names no judgment)
        return CorrectionContext.model_validate_json(metadata.partition(".")[2])
    except ValidationError:
        return None


def correctable(rubric: Rubric) -> list[tuple[str, FieldSpec]]:
    """The fields a person can correct: every enum and number of the rubric's output, by dotted path."""
    return [(path, spec) for path, spec in leaves(rubric.output) if spec.type == "enum" or spec.kind.numeric]


def _picked_from_list(spec: FieldSpec) -> bool:
    if spec.type == "enum":
        return len(spec.values or []) <= SELECT_OPTIONS
    return (spec.type == "integer" and spec.min is not None and spec.max is not None
            and math.floor(spec.max) - math.ceil(spec.min) + 1 <= SELECT_RANGE)


def _choices(spec: FieldSpec) -> list[tuple[str, str]]:
    """(option value, its text) of a field picked from a list: an enum's values by index (a value may be longer than
    an option's value may be), or the integers of the range."""
    if spec.type == "enum":
        return [(str(index), value) for index, value in enumerate(spec.values or [])]
    assert spec.min is not None and spec.max is not None  # only ranged integers are picked from a list
    return [(str(number), str(number)) for number in range(math.ceil(spec.min), math.floor(spec.max) + 1)]


def _choice_of(spec: FieldSpec, current: Any) -> str | None:
    """The option value of the judge's value of a field picked from a list."""
    if spec.type != "enum":
        return None if current is None else str(current)
    values = spec.values or []
    return str(values.index(current)) if current in values else None


def _option(value: str, text: str) -> Option:
    return Option(value=value, label=clip(clean(text), BUTTON_LIMIT)[0] or "(empty)")


def _field_input(index: int, path: str, spec: FieldSpec, current: Any) -> InputBlock:
    label = clip(path.replace(".", " › ").replace("_", " "), HEADER_LIMIT)[0]
    element: StaticSelectElement | PlainTextInputElement
    if _picked_from_list(spec):
        choices = _choices(spec)
        wanted = _choice_of(spec, current)
        initial = next((_option(value, text) for value, text in choices if value == wanted), None)
        element = StaticSelectElement(action_id=VALUE_ACTION, options=[_option(v, t) for v, t in choices],
                                      initial_option=initial)
    else:
        shown_now = None if current is None else f"{current:g}" if isinstance(current, (int, float)) else str(current)
        element = PlainTextInputElement(action_id=VALUE_ACTION, initial_value=shown_now, max_length=INPUT_LIMIT)
    hint = _range_text(spec) if spec.kind.numeric else None
    return InputBlock(block_id=f"{FIELD_BLOCK}{index}", label=label, element=element, optional=spec.nullable,
                      hint=hint)


def _range_text(spec: FieldSpec) -> str | None:
    whole = "A whole number" if spec.type == "integer" else "A number"
    if spec.min is not None and spec.max is not None:
        return f"{whole} from {spec.min:g} to {spec.max:g}."
    if spec.min is not None:
        return f"{whole} of at least {spec.min:g}."
    if spec.max is not None:
        return f"{whole} of at most {spec.max:g}."
    return f"{whole}."


def correction_view(judgment: Judgment, rubric: Rubric, *, metadata: str, blind: bool = False,
                    callback_id: str = CORRECTION) -> View:
    """The Correct it form: the judge's value of every enum and number, for a person to change, and a note;
    `metadata` (a sealed context) says which judgment, and where the form was opened. `blind`: every field starts
    empty and the judge's verdict is not shown (a reviewer's label is not anchored on it)."""
    if blind:
        intro = section(f"Your label of #{judgment.id}: what should the verdict be? The judge's verdict is shown once "
                        "you save.")
    else:
        intro = section(f"What the judge gave #{judgment.id}: *{shown(judgment.label or '', LABEL_ROOM)[0]}*\n"
                        "Change what it should have been; the card shows your correction.")
    fields = [_field_input(index, path, spec, None if blind else value_at(judgment.output, path))
              for index, (path, spec) in enumerate(correctable(rubric))][:VIEW_BLOCKS - 2]
    note = InputBlock(block_id=NOTE_BLOCK, label="Note", optional=True, element=PlainTextInputElement(
        action_id=VALUE_ACTION, multiline=True, max_length=INPUT_LIMIT, placeholder="Why (optional)"))
    return View(type="modal", callback_id=callback_id, title="Your label" if blind else "Correct the judge",
                submit="Save", close="Cancel",
                private_metadata=metadata, blocks=[intro, *fields, note])


def _typed(spec: FieldSpec, picked: str) -> tuple[Any, str | None]:
    """A typed or picked value as the field's value, or the error to show under the field."""
    if spec.type == "enum":
        values = spec.values or []
        if _picked_from_list(spec):
            index = int(picked) if picked.isdigit() else -1
            return (values[index], None) if 0 <= index < len(values) else (None, "Pick one of the options.")
        return (picked, None) if picked in values else (None, "Type one of the rubric's values exactly.")
    try:
        number = float(picked.replace(",", "."))
    except ValueError:
        return None, _range_text(spec)
    if not math.isfinite(number) or (spec.type == "integer" and not number.is_integer()):
        return None, _range_text(spec)
    if (spec.min is not None and number < spec.min) or (spec.max is not None and number > spec.max):
        return None, _range_text(spec)
    return (int(number) if spec.type == "integer" else number), None


def correction_values(view: dict[str, Any], judgment: Judgment, rubric: Rubric,
                      *, blind: bool = False) -> tuple[dict[str, Any], str | None, dict[str, str]]:
    """What the Correct it form holds: (the person's value of every correctable field by dotted path, the note, and
    the error of each field that holds no valid value). A field the form left out keeps the judge's value, unless
    the form was blind (then the person said nothing of it)."""
    state = (view.get("state") or {}).get("values") or {}
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for index, (path, spec) in enumerate(correctable(rubric)):
        block = f"{FIELD_BLOCK}{index}"
        entry = (state.get(block) or {}).get(VALUE_ACTION)
        if entry is None:
            if not blind:
                values[path] = value_at(judgment.output, path)
            continue
        picked = ((entry.get("selected_option") or {}).get("value") if "selected_option" in entry
                  else entry.get("value")) or ""
        if not picked.strip():
            values[path] = None
            if not spec.nullable:
                errors[block] = "Please give a value."
            continue
        values[path], error = _typed(spec, picked.strip())
        if error:
            errors[block] = clip(error, ERROR_LIMIT)[0]
    note = clean(((state.get(NOTE_BLOCK) or {}).get(VALUE_ACTION) or {}).get("value") or "").strip()
    return values, note or None, errors
