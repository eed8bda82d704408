"""Worked examples a rubric file carries for the judge: a question, reference and answer (and the retrieved passages,
for a rubric that reads context) with the values a person expects for some or all of the rubric's fields, checked
like a reply and shown to the judge as data."""

from __future__ import annotations

import json
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from bot.errors import FormulaError, RubricError
from bot.rubric.fields import FieldSpec, annotation_of, leaves, nested
from bot.rubric.formulas import did_you_mean, evaluate
from bot.rubric.goldens import passages

EXAMPLE_KINDS = {"enum", "integer", "number", "boolean"}  # fields an example can give a value of


class Example(BaseModel):
    """A triple and the values a person expects the judge to give, by dotted path; with an optional note."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1)
    reference: str = ""  # none for a rubric that grades without a reference
    answer: str
    context: str | list[str] | None = None  # the retrieved passages, for a rubric whose template holds $context
    expected: dict[str, Any] = Field(min_length=1)
    note: str | None = None

    @model_serializer(mode="wrap")
    def _without_empty_context(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out while there is none, so that the hash of a rubric whose examples were written before context
        existed stays the same."""
        data: dict[str, Any] = handler(self)
        if data.get("context") is None:
            data.pop("context", None)
        return data


def check_examples(examples: list[Example], output: dict[str, FieldSpec], rules: list[Any]) -> None:
    """Refuse an example whose values name no field, do not fit their field, or break a rule they can be read by
    (RubricError naming every such problem)."""
    if problems := example_problems(examples, output, rules):
        raise RubricError("; ".join(problems))


def example_problems(examples: list[Example], output: dict[str, FieldSpec], rules: list[Any]) -> list[str]:
    """Every value of the examples that names no field or does not fit its field, and every rule an example breaks,
    each naming the example."""
    fields = {path: spec for path, spec in leaves(output) if spec.type in EXAMPLE_KINDS}
    problems = []
    for index, example in enumerate(examples):
        where = f"examples.{index}"
        for path, value in example.expected.items():
            if path not in fields:
                problems.append(f"{where}.expected: no field {path!r} an example can give (an enum, number or "
                                f"boolean of the output).{did_you_mean(path, fields)}")
                continue
            try:
                TypeAdapter(annotation_of(f"example_{index}", fields[path])).validate_python(value, strict=True)
            except ValidationError as err:
                problems.append(f"{where}.expected.{path}: {value!r}: {err.errors(include_url=False)[0]['msg']}")
        values = nested(example.expected)
        for rule in rules:
            try:
                ok = evaluate(rule.check, values)
            except FormulaError:
                continue  # the rule reads a field the example does not give
            if ok is False:
                problems.append(f"{where}: breaks the rule {rule.message!r}")
    return problems


def examples_text(examples: list[Example], uses_reference: bool, uses_context: bool = False) -> str:
    """The examples as the judge reads them (inside the data boundary): each triple (with its passages numbered, for
    a rubric that reads context) and the values expected."""
    parts = []
    for number, example in enumerate(examples, 1):
        lines = [f"Example {number}", f"Question: {example.question}"]
        if uses_reference:
            lines.append(f"Reference: {example.reference}")
        if uses_context:
            context = passages(example.context) or []
            lines += ["Context:", *(f"[{n}] {passage}" for n, passage in enumerate(context, 1))] if context else [
                "Context: (no passage was retrieved)"]
        lines += [f"Answer: {example.answer}",
                  f"Expected: {json.dumps(example.expected, ensure_ascii=False, sort_keys=True)}"]
        if example.note:
            lines.append(f"Why: {example.note}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
