"""A rubric's output schema: field specs, and the pydantic model and strict JSON schema built from them."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

FieldType = Literal["integer", "number", "string", "boolean", "enum", "list", "object"]


class FieldSpec(BaseModel):
    """One field of a judge's JSON reply, as a rubric file declares it."""

    model_config = ConfigDict(extra="forbid")

    type: FieldType
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

    @model_validator(mode="after")
    def _fits_its_type(self) -> FieldSpec:
        numeric = self.type in ("integer", "number")
        if not numeric and (self.min is not None or self.max is not None):
            raise ValueError(f"'min'/'max' apply to integer and number fields, not {self.type}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min}) is above 'max' ({self.max})")
        if (self.type == "enum") != bool(self.values):
            raise ValueError("an enum field needs a non-empty 'values' list, and only enums take 'values'")
        if (self.type == "list") != (self.items is not None):
            raise ValueError("a list field needs 'items', and only lists take 'items'")
        if self.type != "list" and (self.min_items is not None or self.max_items is not None):
            raise ValueError("'min_items'/'max_items' apply to list fields only")
        if (self.type == "object") != bool(self.fields):
            raise ValueError("an object field needs a non-empty 'fields' mapping, and only objects take 'fields'")
        return self


def build_model(name: str, fields: dict[str, FieldSpec]) -> type[BaseModel]:
    """Build a pydantic model that validates a reply against `fields` (unknown keys are errors)."""
    definitions: dict[str, Any] = {}
    for index, (key, spec) in enumerate(fields.items()):
        # Keys such as "Factual Accuracy" are not identifiers: the attribute gets a safe name, the alias keeps the key.
        attribute = re.sub(r"\W", "_", key.lower()) or "field"
        attribute = f"f{index}_{attribute}"
        definitions[attribute] = (_annotation(f"{name}_{attribute}", spec), Field(alias=key))
    return create_model(  # type: ignore[call-overload]
        name, __config__=ConfigDict(extra="forbid", populate_by_name=True), **definitions
    )


def _annotation(name: str, spec: FieldSpec) -> Any:
    constraints: dict[str, Any] = {}
    if spec.type == "integer":
        base: Any = int
    elif spec.type == "number":
        base = float
    elif spec.type == "string":
        base = str
    elif spec.type == "boolean":
        base = bool
    elif spec.type == "enum":
        base = Literal[tuple(spec.values or ())]  # type: ignore[misc]
    elif spec.type == "list":
        base = list[_annotation(f"{name}_item", spec.items)]  # type: ignore[arg-type, misc]
        constraints = {"min_length": spec.min_items, "max_length": spec.max_items}
    else:
        base = build_model(name, spec.fields or {})
    if spec.min is not None:
        constraints["ge"] = spec.min
    if spec.max is not None:
        constraints["le"] = spec.max
    constraints = {k: v for k, v in constraints.items() if v is not None}
    annotated = Annotated[base, Field(**constraints)] if constraints else base
    return annotated | None if spec.nullable else annotated


def json_schema(fields: dict[str, FieldSpec]) -> dict[str, Any]:
    """The strict JSON schema for structured output: every property required, no extra properties."""
    return {
        "type": "object",
        "properties": {key: _field_schema(spec) for key, spec in fields.items()},
        "required": list(fields),
        "additionalProperties": False,
    }


def _field_schema(spec: FieldSpec) -> dict[str, Any]:
    if spec.type == "object":
        schema = json_schema(spec.fields or {})
    elif spec.type == "list":
        schema = {"type": "array", "items": _field_schema(spec.items)}  # type: ignore[arg-type]
        if spec.min_items is not None:
            schema["minItems"] = spec.min_items
        if spec.max_items is not None:
            schema["maxItems"] = spec.max_items
    elif spec.type == "enum":
        schema = {"type": "string", "enum": list(spec.values or [])}
    else:
        schema = {"type": spec.type}
        if spec.min is not None:
            schema["minimum"] = _plain_number(spec.min)
        if spec.max is not None:
            schema["maximum"] = _plain_number(spec.max)
    if spec.description:
        schema["description"] = spec.description
    if spec.nullable:
        if spec.type in ("object", "list"):
            return {"anyOf": [schema, {"type": "null"}]}
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    return schema


def _plain_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def leaves(fields: dict[str, FieldSpec], prefix: str = "", *, in_nullable: bool = False) -> list[tuple[str, FieldSpec]]:
    """Every non-object field as (dotted path, spec), in declaration order; inside a nullable object, nullable."""
    found: list[tuple[str, FieldSpec]] = []
    for key, spec in fields.items():
        path = f"{prefix}{key}"
        if spec.type == "object":
            found.extend(leaves(spec.fields or {}, f"{path}.", in_nullable=in_nullable or spec.nullable))
        else:
            found.append((path, spec.model_copy(update={"nullable": True}) if in_nullable else spec))
    return found
