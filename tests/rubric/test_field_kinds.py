"""The kinds of rubric output field, one table: each kind validates its sample, refuses what it must, has a schema
structured output accepts, and a row in docs/rubrics.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.rubric.fields import KINDS, FieldSpec, build_model, field_schema, json_schema, leaves, sample_of

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rubrics.md"

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
    rows = re.findall(r"^\| `(\w+)` \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE)
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


# --- a rubric's opt-in: lenient_numbers ---------------------------------------------------------------------------


def lenient_rubric(tmp_path: Path, lenient: bool | None):
    from bot.rubric import load_rubric
    from tests.support.rubric_files import mini, write

    data = mini(lenient_numbers=lenient)
    data["output"]["parts"] = {"type": "list", "items": {"type": "object", "fields": {"n": {"type": "integer"}}}}
    return load_rubric(write(tmp_path, data))


REPLY = {"score": 2, "verdict": "good", "why": "ok", "parts": [{"n": 1}]}


@pytest.mark.parametrize(("value", "taken"), [("2", 2), (2.0, 2), (" 1 ", 1), ("2.0", 2), ("1e0", 1)])
def test_a_lenient_rubric_takes_a_string_or_float_that_is_exactly_an_integer(tmp_path, value, taken):
    rubric = lenient_rubric(tmp_path, True)
    verdict = "good" if taken == 2 else "bad"  # the rubric's rule: score 2 exactly when good
    output, problems = rubric.validate_reply({**REPLY, "score": value, "verdict": verdict, "parts": [{"n": value}]})
    assert problems == [] and output is not None
    assert output["score"] == taken and type(output["score"]) is int
    assert output["parts"] == [{"n": taken}] and type(output["parts"][0]["n"]) is int


@pytest.mark.parametrize("value", [True, False, "true", 1.5, "1.5", "two", "", "nan", "inf", "3", 3.0, None])
def test_a_lenient_rubric_still_refuses_a_boolean_a_fraction_or_a_value_out_of_range(tmp_path, value):
    rubric = lenient_rubric(tmp_path, True)
    output, problems = rubric.validate_reply({**REPLY, "score": value})
    assert output is None and problems and problems[0].startswith("score:"), problems


@pytest.mark.parametrize("lenient", [None, False])
@pytest.mark.parametrize("value", ["2", 2.0])
def test_without_the_opt_in_a_string_or_float_integer_makes_the_reply_invalid(tmp_path, lenient, value):
    rubric = lenient_rubric(tmp_path, lenient)
    assert rubric.validate_reply(REPLY) == ({**REPLY}, [])
    output, problems = rubric.validate_reply({**REPLY, "score": value})
    assert output is None and problems[0].startswith("score:")
    output, problems = rubric.validate_reply({**REPLY, "parts": [{"n": value}]})
    assert output is None and problems[0].startswith("parts.0.n:")


def test_the_opt_in_is_part_of_the_rubric_hash_only_when_on(tmp_path, rubrics):
    # Rubrics written before the setting existed keep their hash, so their cached verdicts and digests stay valid.
    # (eth and academic took a generation order and reordered their prompt's JSON: a new hash; benchmark kept its own.)
    older = ("academic", "benchmark", "eth", "pairwise")  # the rubrics shipped before the setting
    assert {r.name: r.content_hash for r in rubrics if r.name in older} == {
        "academic": "7fb702e6244b4936", "benchmark": "1877c60a3472178e", "eth": "108d1d349dd7f4ce",
        "pairwise": "de74c3b5f65a959a"}
    off, unset = lenient_rubric(tmp_path, False).content_hash, lenient_rubric(tmp_path, None).content_hash
    assert off == unset != lenient_rubric(tmp_path, True).content_hash


async def test_a_lenient_rubric_scores_a_judges_string_integer_without_a_repair_request(tmp_path, judge_server,
                                                                                      make_client):
    import json

    from bot.judge.judgment import judge
    from bot.records import Triple
    from tests.support.openai_server import Reply

    triple = Triple(question="Q?", reference="R", answer="A")
    judge_server.responder = lambda body: Reply(content=json.dumps({**REPLY, "score": "2", "parts": [{"n": 1.0}]}))
    verdict = await judge(lenient_rubric(tmp_path, True), triple, make_client())
    assert (verdict.status, len(judge_server.bodies())) == ("scored", 1), verdict
    assert verdict.output == REPLY and verdict.headline == 100.0
    verdict = await judge(lenient_rubric(tmp_path, False), triple, make_client())
    assert (verdict.status, len(judge_server.bodies())) == ("invalid", 3), verdict  # the one repair request
