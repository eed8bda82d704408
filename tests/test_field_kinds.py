"""The kinds of rubric output field, one table: each kind validates its sample, refuses what it must, has a schema
structured output accepts, and a row in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.rubric.fields import KINDS, FieldSpec, build_model, field_schema, json_schema, leaves, sample_of

README = Path(__file__).resolve().parent.parent / "README.md"

SPECS = {  # a spec of each kind, with every option it takes
    "integer": {"type": "integer", "min": 0, "max": 2},
    "number": {"type": "number", "min": 1, "max": 5},
    "string": {"type": "string"},
    "boolean": {"type": "boolean"},
    "enum": {"type": "enum", "values": ["Correct", "Generic"]},
    "list": {"type": "list", "items": {"type": "string"}, "min_items": 1, "max_items": 3},
    "object": {"type": "object", "fields": {"score": {"type": "integer", "min": 1, "max": 5}}},
}
WRONG = {  # a value of the right JSON shape that each kind must refuse
    "integer": 3, "number": 0.5, "string": 7, "boolean": "maybe", "enum": "Hallucination", "list": [], "object": {"score": 9},
}


def test_every_kind_is_specified_here():
    assert set(SPECS) == set(KINDS) == set(WRONG)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_kind_accepts_its_sample_and_refuses_a_wrong_value(kind):
    spec = FieldSpec.model_validate(SPECS[kind])
    model = build_model("Reply", {"field": spec})
    assert model.model_validate({"field": sample_of(spec)}).model_dump(by_alias=True) == {"field": sample_of(spec)}
    with pytest.raises(ValueError):
        model.model_validate({"field": WRONG[kind]})
    with pytest.raises(ValueError):
        model.model_validate({"field": None})
    nullable = build_model("Reply", {"field": spec.model_copy(update={"nullable": True})})
    assert nullable.model_validate({"field": None}).model_dump(by_alias=True) == {"field": None}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_kind_has_a_strict_schema(kind):
    spec = FieldSpec.model_validate({**SPECS[kind], "description": "what it is"})
    schema = field_schema(spec)
    assert schema["description"] == "what it is"
    assert schema["type"] == {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean",
                              "enum": "string", "list": "array", "object": "object"}[kind]
    if kind == "object":
        assert schema["additionalProperties"] is False and schema["required"] == ["score"]
    whole = json_schema({"field": spec})
    assert whole["required"] == ["field"] and whole["additionalProperties"] is False


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_kind_refuses_options_it_does_not_take(kind):
    foreign = {"min": 1, "values": ["a"], "items": {"type": "string"}, "fields": {"x": {"type": "string"}}}
    for option, value in foreign.items():
        if option in KINDS[kind].options:
            continue
        with pytest.raises(ValueError, match="apply to"):
            FieldSpec.model_validate({**SPECS[kind], option: value})
    for option in KINDS[kind].required:
        without = {key: value for key, value in SPECS[kind].items() if key != option}
        with pytest.raises(ValueError, match=f"needs a non-empty '{option}'"):
            FieldSpec.model_validate(without)


def test_summaries_average_numbers_count_enums_and_objects_show_their_fields():
    assert {kind for kind, spec in KINDS.items() if spec.summary == "mean"} == {"integer", "number"}
    assert {kind for kind, spec in KINDS.items() if spec.summary == "count"} == {"enum"}
    nested = {"evaluation": FieldSpec.model_validate(SPECS["object"])}
    assert [path for path, _ in leaves(nested)] == ["evaluation.score"]


def test_every_kind_has_a_row_in_the_readme():
    rows = re.findall(r"^\| `(\w+)` \|", README.read_text(encoding="utf-8"), re.MULTILINE)
    assert set(KINDS) <= set(rows)


def test_an_unknown_kind_lists_the_kinds():
    with pytest.raises(ValueError, match="Input should be 'integer', 'number', 'string', 'boolean', 'enum', 'list' or "
                                         "'object'"):
        FieldSpec.model_validate({"type": "integr"})


@pytest.mark.parametrize(("kind", "value"), [("integer", True), ("integer", "2"), ("integer", 2.0), ("number", True),
                                             ("number", "2.5"), ("boolean", "true"), ("boolean", 1), ("string", 5)])
def test_a_value_of_another_json_type_is_never_coerced(kind, value):
    model = build_model("Reply", {"field": FieldSpec.model_validate({"type": kind})})
    with pytest.raises(ValueError):
        model.model_validate({"field": value})


def test_a_number_field_takes_a_whole_number():
    model = build_model("Reply", {"field": FieldSpec.model_validate({"type": "number"})})
    assert model.model_validate({"field": 4}).model_dump(by_alias=True) == {"field": 4.0}


def test_a_boolean_is_never_a_score_of_the_eth_rubric(rubrics):
    reply = {"correctness": 2, "completeness": True, "result_tag": "Correct", "reasoning": "Names the portal."}
    output, problems = rubrics.get("eth").validate_reply(reply)
    assert output is None and problems and "completeness" in problems[0]
    output, problems = rubrics.get("eth").validate_reply({**reply, "completeness": 1})
    assert output is not None and problems == []
