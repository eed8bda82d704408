"""A rubric's generation order: the schema the judge is sent lists some fields first, the reply keeps the file's order."""

from __future__ import annotations

import json

import pytest

from bot.judge.judgment import judge
from bot.rubric import RubricError, load_rubric
from tests.support.judge_cases import ACADEMIC_TRIPLE, ETH_OK, ETH_TRIPLE, academic
from tests.support.openai_server import Reply
from tests.support.rubric_files import mini, seed_data, write


def order(schema: dict) -> list[str]:
    """The keys of an object schema, checking that `required` lists them in the same order."""
    assert schema["required"] == list(schema["properties"])
    return list(schema["properties"])


async def test_eth_is_sent_its_reasoning_first_and_its_verdict_keeps_the_seeds_keys_in_order(judge_server, make_client,
                                                                                             rubrics):
    rubric = rubrics.get("eth")
    judge_server.enqueue(Reply.json(ETH_OK))
    verdict = await judge(rubric, ETH_TRIPLE, make_client())
    body = judge_server.bodies()[0]
    sent = body["response_format"]["json_schema"]["schema"]
    assert order(sent) == ["reasoning", "correctness", "completeness", "result_tag"]
    assert '{"type":"object","properties":{"reasoning":' in body["messages"][0]["content"]
    assert verdict.status == "scored"
    assert list(verdict.output) == ["correctness", "completeness", "result_tag", "reasoning"] == list(rubric.output)


async def test_academic_is_sent_facts_first_and_each_list_before_its_score(judge_server, make_client, rubrics):
    rubric = rubrics.get("academic")
    judge_server.enqueue(Reply.json(academic()))
    verdict = await judge(rubric, ACADEMIC_TRIPLE, make_client())
    sent = judge_server.bodies()[0]["response_format"]["json_schema"]["schema"]
    assert order(sent) == ["reference_facts", "key_aspects", "evaluation", "proposed_revision", "revision_attempt",
                           "termination_reason"]
    evaluation = sent["properties"]["evaluation"]
    assert order(evaluation) == ["coverage", "factuality", "clarity"]
    assert [order(evaluation["properties"][name]) for name in ("coverage", "factuality", "clarity")] == [
        ["missing_aspects", "score"], ["incorrect_facts", "score"], ["issues", "score"]]
    assert verdict.status == "scored"
    assert list(verdict.output) == list(academic()) == list(rubric.output)
    assert list(verdict.output["evaluation"]["coverage"]) == ["score", "missing_aspects"]


def test_the_seed_rubrics_keep_their_keys_and_the_benchmark_its_order(rubrics):
    assert list(rubrics.get("eth").output) == ["correctness", "completeness", "result_tag", "reasoning"]
    assert list(rubrics.get("academic").output) == ["revision_attempt", "reference_facts", "key_aspects",
                                                    "evaluation", "proposed_revision", "termination_reason"]
    benchmark = rubrics.get("benchmark")
    assert order(benchmark.reply_schema) == list(benchmark.output) == [
        "Factual Accuracy", "Relevance", "Clarity", "Language Consistency", "Conciseness", "Overall"]


def test_the_order_shapes_the_schema_and_the_hash_but_no_hash_without_it(tmp_path):
    plain = load_rubric(write(tmp_path, mini()))
    (tmp_path / "other").mkdir()
    reordered = load_rubric(write(tmp_path / "other", mini(generation_order=["why", "verdict"])))
    assert order(plain.reply_schema) == ["score", "verdict", "why"]
    assert order(reordered.reply_schema) == ["why", "verdict", "score"]
    assert reordered.content_hash != plain.content_hash
    unchanged = seed_data("benchmark")
    assert "generation_order" not in unchanged  # its hash is the one it had before the setting existed


def nested() -> dict:
    data = mini()
    data["output"]["detail"] = {"type": "object", "nullable": True,
                                "fields": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    return data


def test_a_nested_field_goes_first_inside_its_object_even_a_nullable_one(tmp_path):
    rubric = load_rubric(write(tmp_path, {**nested(), "generation_order": ["detail.b", "detail"]}))
    schema = rubric.reply_schema
    assert order(schema) == ["detail", "score", "verdict", "why"]
    assert order(schema["properties"]["detail"]["anyOf"][0]) == ["b", "a"]
    output, problems = rubric.validate_reply({"score": 2, "verdict": "good", "why": "w", "detail": {"b": "x", "a": 1}})
    assert problems == [] and list(output) == ["score", "verdict", "why", "detail"]
    assert list(output["detail"]) == ["a", "b"]


@pytest.mark.parametrize(("listed", "problem"), [
    (["reason"], "generation_order.0: no field 'reason' in the output (nested fields are written a.b)."),
    (["why", "detail.c"], "generation_order.1: no field 'detail.c' in the output (nested fields are written a.b)."),
    (["why.a"], "generation_order.0: no field 'why.a' in the output (nested fields are written a.b)."),
    (["why", "score", "why"], "generation_order.2: 'why' is listed twice"),
])
def test_a_generation_order_naming_no_field_or_one_twice_is_refused_naming_the_file(tmp_path, listed, problem):
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, {**nested(), "generation_order": listed}))
    assert str(caught.value).startswith(f"mini.yaml: {problem}"), str(caught.value)


def test_a_misspelt_path_gets_the_closest_field(tmp_path):
    with pytest.raises(RubricError, match=r"Did you mean 'why'\?"):
        load_rubric(write(tmp_path, {**nested(), "generation_order": ["wy"]}))


async def test_a_reply_in_generation_order_is_scored_like_one_in_the_files_order(judge_server, make_client, rubrics):
    reasoning_first = {"reasoning": ETH_OK["reasoning"], **{k: v for k, v in ETH_OK.items() if k != "reasoning"}}
    judge_server.enqueue(Reply.json(reasoning_first))
    verdict = await judge(rubrics.get("eth"), ETH_TRIPLE, make_client())
    assert (verdict.status, verdict.headline, verdict.output) == ("scored", 75.0, ETH_OK)
    assert list(verdict.output) == list(ETH_OK)
    assert verdict.raw_reply == json.dumps(reasoning_first, ensure_ascii=False)  # the judge's reply exactly as returned
