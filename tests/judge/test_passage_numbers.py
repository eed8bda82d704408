"""A judge's reply that names a passage the row does not have (claim 2 cites passage 7 of 3, a list of one entry per
passage that skips one) is refused with the reason, repaired once, and stays invalid when the repair names it again:
never a score. Through the real client against the stand-in judge server; and the field options that ask for it."""

from __future__ import annotations

import json

import pytest

from bot.errors import RubricError
from bot.judge.judgment import judge
from bot.records import Triple
from bot.rubric import Rubric
from bot.rubric.rubric_file import rubric_from_text
from tests.support.openai_server import Reply
from tests.support.rubric_files import grounded
from tests.support.sound_replies import claim, passage

PASSAGES = ["Deleted notes are moved to Trash.", "Notes stay in Trash for 30 days.", "Sync needs a sign-in."]
TRIPLE = Triple(question="How long are deleted notes kept?", reference="", answer="They stay in the Trash for 30 days.",
                context=PASSAGES)
SEVENTH = "claims.1.passage: 7 names no retrieved passage: this row has 3 retrieved passages, numbered 1 to 3"


def faithful(*claims: dict, tag: str = "Faithful") -> dict:
    return {"result_tag": tag, "claims": list(claims)}


CITES_SEVEN = faithful(claim("Deleted notes go to the Trash", "supported", 1), claim("They stay 30 days", "supported", 7))
CITES_TWO = faithful(claim("Deleted notes go to the Trash", "supported", 1), claim("They stay 30 days", "supported", 2))


async def test_a_claim_citing_a_passage_the_row_does_not_have_is_invalid_after_its_repair(judge_server, make_client,
                                                                                            rubrics):
    judge_server.enqueue(Reply.json(CITES_SEVEN), Reply.json(CITES_SEVEN))
    verdict = await judge(rubrics.get("faithfulness"), TRIPLE, make_client())

    assert verdict.status == "invalid"
    assert verdict.error == f"the judge's reply broke the rubric after one repair: {SEVENTH}"
    assert (verdict.headline, verdict.passed, verdict.tag, verdict.output) == (None, None, None, None)
    first, repair = judge_server.bodies()
    assert repair["messages"][2]["content"] == json.dumps(CITES_SEVEN, ensure_ascii=False)
    assert f"- {SEVENTH}" in repair["messages"][3]["content"]


async def test_the_same_claim_citing_a_passage_the_row_has_is_scored_after_its_repair(judge_server, make_client,
                                                                                      rubrics):
    judge_server.enqueue(Reply.json(CITES_SEVEN), Reply.json(CITES_TWO))
    verdict = await judge(rubrics.get("faithfulness"), TRIPLE, make_client())
    assert verdict.status == "scored" and verdict.attempts == 2
    assert (verdict.headline, verdict.passed, verdict.tag) == (100.0, True, "Faithful")

    judge_server.enqueue(Reply.json(CITES_SEVEN))  # passage 7 of 7 retrieved passages is one the row has
    seven = TRIPLE.model_copy(update={"context": [*PASSAGES, "four", "five", "six", "seven"]})
    assert (await judge(rubrics.get("faithfulness"), seven, make_client())).status == "scored"


async def test_a_row_without_passages_has_none_to_cite(judge_server, make_client, rubrics):
    judge_server.enqueue(Reply.json(CITES_TWO), Reply.json(CITES_TWO))
    verdict = await judge(rubrics.get("faithfulness"), TRIPLE.model_copy(update={"context": []}), make_client())
    assert verdict.status == "invalid"
    assert "claims.0.passage: 1 names no retrieved passage: no passage was retrieved for this row" in verdict.error


@pytest.mark.parametrize(("entries", "problem"), [
    ([(1, True), (2, False)], "passages: 2 entries, but it takes one per retrieved passage: this row has 3 retrieved "
                              "passages, numbered 1 to 3"),
    ([(1, True), (2, False), (3, True), (4, False)], "passages.3.passage: 4 names no retrieved passage"),
])
async def test_context_relevance_takes_one_entry_for_each_passage_the_row_has(judge_server, make_client, rubrics,
                                                                             entries, problem):
    relevant = sum(relevant for _, relevant in entries)
    reply = {"result_tag": "Noisy", "passages": [passage(n, relevant) for n, relevant in entries]}
    assert relevant and relevant < len(entries)
    judge_server.enqueue(Reply.json(reply), Reply.json(reply))
    verdict = await judge(rubrics.get("context-relevance"), TRIPLE, make_client())
    assert verdict.status == "invalid" and problem in verdict.error


def test_each_shipped_rag_rubric_checks_its_passage_numbers_against_the_row(rubrics):
    for name, reply in (("faithfulness", CITES_SEVEN),
                        ("context-recall", {"result_tag": "Complete", "reference_facts": [
                            {"fact": "30 days", "in_context": True, "passage": 2},
                            {"fact": "free", "in_context": True, "passage": 9}]})):
        rubric = rubrics.get(name)
        assert rubric.validate_reply(reply)[1] == []  # without the row's passages, nothing to hold them to
        problems = rubric.validate_reply(reply, passages=3)[1]
        assert len(problems) == 1 and "names no retrieved passage" in problems[0]


def test_the_options_take_their_kind_and_a_template_with_passages() -> None:
    base = grounded()
    cites = {**base, "output": {**base["output"], "cited": {"type": "integer", "passage_number": True}}}
    reply = {"score": 2, "verdict": "good", "why": "w", "cited": 4}
    assert Rubric.model_validate(cites).validate_reply(reply, passages=3)[1] == [
        "cited: 4 names no retrieved passage: this row has 3 retrieved passages, numbered 1 to 3"]
    for option, kind in (("passage_number", "string"), ("one_per_passage", "integer")):
        with pytest.raises(ValueError, match=f"'{option}' applies to"):
            Rubric.model_validate({**base, "output": {**base["output"], "x": {"type": kind, option: True}}})
    without = {**cites, "user_template": base["user_template"].replace("$context", "none")}
    with pytest.raises(RubricError, match="passage_number or one_per_passage, but the template has no \\$context"):
        rubric_from_text(json.dumps(without)).self_check()


def test_the_options_left_off_keep_a_rubrics_hash(rubrics):
    # a rubric that names neither option hashes as it did before they existed
    assert "passage_number" not in json.dumps(rubrics.get("eth").model_dump(mode="json"))
    off = {**grounded(), "output": {**grounded()["output"], "cited": {"type": "integer", "passage_number": False}}}
    plain = {**grounded(), "output": {**grounded()["output"], "cited": {"type": "integer"}}}
    assert Rubric.model_validate(off).content_hash == Rubric.model_validate(plain).content_hash
