"""A rubric's output fields: the kinds a field can be (one table), and the pydantic model and strict JSON schema built
from a rubric's fields.

A new kind of field is one entry in KINDS: how a reply's value is validated, its JSON schema, a sample value, how
summaries treat it, and how a card shows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationInfo,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

Summary = Literal["mean", "count", "none"]  # averaged in summaries, counted (as tags), or left out
Shown = Literal["field", "section", "children"]  # on a card: a short field, a section of text, or its own fields


@dataclass(frozen=True)
class Kind:
    """What one type of output field means everywhere it is used."""

    annotation: Callable[[str, FieldSpec], Any]  # the pydantic type a reply's value must have
    schema: Callable[[FieldSpec], dict[str, Any]]  # its JSON schema for structured output
    sample: Callable[[FieldSpec], Any]  # a value that fits, to try formulas before any judge replied
    summary: Summary
    shown: Shown
    options: frozenset[str] = frozenset()  # the keys of a field spec this kind takes besides the common ones
    required: frozenset[str] = frozenset()  # the ones it needs

    @property
    def numeric(self) -> bool:
        """A number: it takes a range, and weighted means and summaries can use it."""
        return RANGE <= self.options


LENIENT_NUMBERS = "lenient_numbers"  # the rubric setting, passed to validation as context


def _whole_number(value: Any, info: ValidationInfo) -> Any:
    """"2" or 2.0 as 2 when the rubric takes lenient numbers; anything else (a boolean always) is left to StrictInt."""
    if not (info.context or {}).get(LENIENT_NUMBERS) or isinstance(value, bool):
        return value
    exact = _exact_integer(value)
    return value if exact is None else exact


def _exact_integer(value: Any) -> int | None:
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
        try:
            return _exact_integer(float(value))
        except ValueError:
            return None
    return None


def _plain_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _number_schema(spec: FieldSpec) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": spec.type}
    if spec.min is not None:
        schema["minimum"] = _plain_number(spec.min)
    if spec.max is not None:
        schema["maximum"] = _plain_number(spec.max)
    return schema


def _number_sample(spec: FieldSpec) -> Any:
    value = spec.max if spec.max is not None else spec.min if spec.min is not None else 1
    return int(value) if spec.type == "integer" else float(value)


def _list_annotation(name: str, spec: FieldSpec) -> Any:
    assert spec.items is not None  # required for lists
    return list[annotation_of(f"{name}_item", spec.items)]  # type: ignore[misc]  # a type built at run time


def _list_schema(spec: FieldSpec) -> dict[str, Any]:
    assert spec.items is not None  # required for lists
    schema: dict[str, Any] = {"type": "array", "items": field_schema(spec.items)}
    if spec.min_items is not None:
        schema["minItems"] = spec.min_items
    if spec.max_items is not None:
        schema["maxItems"] = spec.max_items
    return schema


def _list_sample(spec: FieldSpec) -> Any:
    assert spec.items is not None  # required for lists
    return [sample_of(spec.items)] * (spec.min_items or 0)


RANGE = frozenset({"min", "max"})
KINDS: dict[str, Kind] = {
    # Strict: a boolean is never a score, and "2", 2.0 or "true" are not what the schema asked for (the reply is
    # invalid and gets the repair request, rather than a coerced value); a rubric may take "2" and 2.0 as 2.
    "integer": Kind(lambda _, spec: Annotated[StrictInt, BeforeValidator(_whole_number)], _number_schema,
                    _number_sample, "mean", "field", RANGE),
    "number": Kind(lambda _, spec: StrictFloat, _number_schema, _number_sample, "mean", "field", RANGE),
    "string": Kind(lambda _, spec: StrictStr, lambda spec: {"type": "string"}, lambda spec: "sample", "none", "section"),
    "boolean": Kind(lambda _, spec: StrictBool, lambda spec: {"type": "boolean"}, lambda spec: False, "none", "field"),
    "enum": Kind(lambda _, spec: Literal[tuple(spec.values or ())],  # the values are known at run time only
                 lambda spec: {"type": "string", "enum": list(spec.values or [])},
                 lambda spec: (spec.values or [""])[0], "count", "field", frozenset({"values"}), frozenset({"values"})),
    "list": Kind(_list_annotation, _list_schema, _list_sample, "none", "section",
                 frozenset({"items", "min_items", "max_items"}), frozenset({"items"})),
    "object": Kind(lambda name, spec: build_model(name, spec.fields or {}), lambda spec: json_schema(spec.fields or {}),
                   lambda spec: sample_reply(spec.fields or {}), "none", "children", frozenset({"fields"}),
                   frozenset({"fields"})),
}
OPTIONS = ("min", "max", "values", "items", "fields", "min_items", "max_items")
PASSAGE_OPTIONS = ("passage_number", "one_per_passage")  # checked against the row's retrieved passages


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


class FieldSpec(BaseModel):
    """One field of a judge's JSON reply, as a rubric file declares it."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description=f"One of {', '.join(KINDS)}.")
    description: str | None = None
    nullable: bool = False
    min: float | None = None
    max: float | None = None
    values: list[str] | None = None
    items: FieldSpec | None = None
    fields: dict[str, FieldSpec] | None = None
    min_items: int | None = Field(None, ge=0)
    max_items: int | None = Field(None, ge=0)
    summary: bool = Field(True, description="Whether summaries average (numbers) or count (enums) this field.")
    passage_number: bool = Field(False, description="An integer field that names one of the row's retrieved "
                                 "passages, numbered from 1: a reply naming a passage the row does not have is refused.")
    one_per_passage: bool = Field(False, description="A list that holds one entry per retrieved passage: a reply "
                                  "whose list is longer or shorter than the row's passages is refused.")

    @field_validator("type")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in KINDS:  # worded as pydantic words an unknown choice
            *first, last = (repr(kind) for kind in KINDS)
            raise PydanticCustomError("literal_error", "Input should be {expected}",
                                      {"expected": f"{', '.join(first)} or {last}"})
        return value

    @property
    def kind(self) -> Kind:
        """What this field's type means."""
        return KINDS[self.type]

    @model_validator(mode="after")
    def _fits_its_kind(self) -> FieldSpec:
        given = {name for name in OPTIONS if getattr(self, name) not in (None, [], {})}
        for name in sorted(given - self.kind.options):
            takers = [kind for kind, spec in KINDS.items() if name in spec.options]
            shown = "'min'/'max'" if name in RANGE else repr(name)
            raise ValueError(f"{shown} apply to {' and '.join(takers)} fields, not {self.type}")
        for name in sorted(self.kind.required - given):
            raise ValueError(f"{_a(self.type)} field needs a non-empty {name!r}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min}) is above 'max' ({self.max})")
        for name, kind in (("passage_number", "integer"), ("one_per_passage", "list")):
            if getattr(self, name) and self.type != kind:
                raise ValueError(f"{name!r} applies to {kind} fields, not {self.type}")
        return self

    @model_serializer(mode="wrap")
    def _without_passage_options_off(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out while off, so that the hash of a rubric written before they existed stays the same."""
        data: dict[str, Any] = handler(self)
        for name in PASSAGE_OPTIONS:
            if not data.get(name):
                data.pop(name, None)
        return data

    @property
    def reads_passages(self) -> bool:
        """Whether a reply's value of this field is checked against the row's retrieved passages."""
        return self.passage_number or self.one_per_passage


def build_model(name: str, fields: dict[str, FieldSpec]) -> type[BaseModel]:
    """Build a pydantic model that validates a reply against `fields` (unknown keys are errors)."""
    definitions: dict[str, Any] = {}
    for index, (key, spec) in enumerate(fields.items()):
        # Keys such as "Factual Accuracy" are not identifiers: the attribute gets a safe name, the alias keeps the key.
        attribute = re.sub(r"\W", "_", key.lower()) or "field"
        attribute = f"f{index}_{attribute}"
        definitions[attribute] = (annotation_of(f"{name}_{attribute}", spec), Field(alias=key))
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="forbid", populate_by_name=True),
                                          **definitions)
    return model


def annotation_of(name: str, spec: FieldSpec) -> Any:
    """The pydantic type of a field: its kind's, with the spec's range, length and nullability."""
    constraints: dict[str, Any] = {"ge": spec.min, "le": spec.max, "min_length": spec.min_items,
                                   "max_length": spec.max_items}
    constraints = {key: value for key, value in constraints.items() if value is not None}
    base = spec.kind.annotation(name, spec)
    annotated = Annotated[base, Field(**constraints)] if constraints else base
    return annotated | None if spec.nullable else annotated


def json_schema(fields: dict[str, FieldSpec]) -> dict[str, Any]:
    """The strict JSON schema for structured output: every property required, no extra properties."""
    return {
        "type": "object",
        "properties": {key: field_schema(spec) for key, spec in fields.items()},
        "required": list(fields),
        "additionalProperties": False,
    }


def generation_ordered(fields: dict[str, FieldSpec], first: Sequence[str], prefix: str = "") -> dict[str, FieldSpec]:
    """`fields` with those named in `first` (dotted paths) put before their siblings, in that order, at every depth."""
    here = [path.removeprefix(prefix) for path in first if path.startswith(prefix)]
    named = [key for key in here if key in fields]
    ordered: dict[str, FieldSpec] = {}
    for key in [*named, *(key for key in fields if key not in named)]:
        spec = fields[key]
        if spec.kind.shown == "children":
            spec = spec.model_copy(update={"fields": generation_ordered(spec.fields or {}, first, f"{prefix}{key}.")})
        ordered[key] = spec
    return ordered


def field_paths(fields: dict[str, FieldSpec], prefix: str = "") -> list[str]:
    """Every field as a dotted path, objects and the fields inside them alike."""
    found: list[str] = []
    for key, spec in fields.items():
        found.append(f"{prefix}{key}")
        if spec.kind.shown == "children":
            found.extend(field_paths(spec.fields or {}, f"{prefix}{key}."))
    return found


def field_schema(spec: FieldSpec) -> dict[str, Any]:
    """The JSON schema of one field: its kind's, with the description and nullability."""
    schema = spec.kind.schema(spec)
    if spec.description:
        schema["description"] = spec.description
    if spec.nullable:
        if spec.type in ("object", "list"):
            return {"anyOf": [schema, {"type": "null"}]}
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    return schema


def sample_of(spec: FieldSpec) -> Any:
    """A value that fits `spec`."""
    return spec.kind.sample(spec)


def sample_reply(fields: dict[str, FieldSpec]) -> dict[str, Any]:
    """A reply that fits `fields`, so formulas can be tried before any judge has replied."""
    return {key: sample_of(spec) for key, spec in fields.items()}


def leaves(fields: dict[str, FieldSpec], prefix: str = "", *, in_nullable: bool = False) -> list[tuple[str, FieldSpec]]:
    """Every field with no fields of its own as (dotted path, spec), in order; inside a nullable object, nullable."""
    found: list[tuple[str, FieldSpec]] = []
    for key, spec in fields.items():
        path = f"{prefix}{key}"
        if spec.kind.shown == "children":
            found.extend(leaves(spec.fields or {}, f"{path}.", in_nullable=in_nullable or spec.nullable))
        else:
            found.append((path, spec.model_copy(update={"nullable": True}) if in_nullable else spec))
    return found


def nested(values: dict[str, Any]) -> dict[str, Any]:
    """Values by dotted path as the nested dicts a reply holds them in."""
    found: dict[str, Any] = {}
    for path, value in values.items():
        *parents, last = path.split(".")
        into = found
        for part in parents:
            child = into.get(part)
            into[part] = child = child if isinstance(child, dict) else {}
            into = child
        into[last] = value
    return found


def passage_problems(fields: dict[str, FieldSpec], output: dict[str, Any], passages: int, prefix: str = "") -> list[str]:
    """What a validated reply says of passages the row does not have: a passage number outside 1 to `passages`, a
    list of one entry per passage of another length. Named by the field's path, as validation names it."""
    problems: list[str] = []
    for key, spec in fields.items():
        value = output.get(key)
        where = f"{prefix}{key}"
        if spec.passage_number and isinstance(value, int) and not 1 <= value <= passages:
            problems.append(f"{where}: {value} names no retrieved passage: {_passages_held(passages)}")
        elif spec.type == "list" and isinstance(value, list):
            if spec.one_per_passage and len(value) != passages:
                problems.append(f"{where}: {len(value)} entr{'y' if len(value) == 1 else 'ies'}, but it takes one per "
                                f"retrieved passage: {_passages_held(passages)}")
            if spec.items is not None:
                for index, item in enumerate(value):
                    problems += passage_problems({str(index): spec.items}, {str(index): item}, passages, f"{where}.")
        elif spec.kind.shown == "children" and isinstance(value, dict):
            problems += passage_problems(spec.fields or {}, value, passages, f"{where}.")
    return problems


def _passages_held(count: int) -> str:
    if count == 0:
        return "no passage was retrieved for this row"
    if count == 1:
        return "this row has one retrieved passage, numbered 1"
    return f"this row has {count} retrieved passages, numbered 1 to {count}"


def reads_passages(fields: dict[str, FieldSpec]) -> bool:
    """Whether any field, at any depth, is checked against the row's retrieved passages."""
    return any(spec.reads_passages or (spec.items is not None and reads_passages({"item": spec.items}))
               or reads_passages(spec.fields or {}) for spec in fields.values())
