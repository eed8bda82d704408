"""The shipped rubrics for any bot (correctness, helpfulness, answer-relevance): each golden is what a sound judge's
reply adds up to, every tag and both outcomes are covered, each rule turns a reply that breaks it into an error, the
scores are as the files say, and `judgebot rubrics check` runs their goldens against a judge."""

from __future__ import annotations

import copy

import pytest

from bot.rubric import misses
from tests.support.cli import flat, judgebot
from tests.support.sound_replies import (
    SOUND,
    correctness,
    helpfulness,
    judged_goldens,
    part,
    relevance,
    sound_judge,
    values_of,
)

GENERAL = ("correctness", "helpfulness", "answer-relevance")


@pytest.mark.parametrize(("name", "golden"), [(name, golden) for name in GENERAL for golden in SOUND[name]])
def test_each_golden_is_what_a_sound_reply_adds_up_to(rubrics, name, golden):
    rubric = rubrics.get(name)
    (found,) = [g for g in rubric.goldens if g.name == golden]
    values, problems = values_of(rubric, SOUND[name][golden])
    assert problems == []
    assert misses(found.expect, values) == []


@pytest.mark.parametrize("name", GENERAL)
def test_goldens_cover_every_tag_and_both_outcomes(rubrics, name):
    rubric = rubrics.get(name)
    assert rubric.uses_reference == (name == "correctness")
    assert sorted(g.name for g in judged_goldens(rubric)) == sorted(SOUND[name])
    outcomes = [values_of(rubric, SOUND[name][g.name])[0] for g in judged_goldens(rubric)]
    tag = rubric.headline.tag
    assert tag is not None
    assert {values[tag] for values in outcomes} == set(dict(rubric.output)[tag].values or [])
    assert {values["passed"] for values in outcomes} == {True, False}


def broken(reply: dict, **changes) -> dict:
    changed = copy.deepcopy(reply)
    changed.update(changes)
    return changed


CORRECT = correctness("Correct", 2, 2)
INCOMPLETE = correctness("Incomplete", 2, 1, missing=["a key fact"])


@pytest.mark.parametrize(("reply", "messages"), [
    (broken(CORRECT, result_tag="Incomplete"), ["result_tag is Correct exactly when correctness and completeness are "
                                                "both 2"]),
    (broken(INCOMPLETE, correctness=0, errors=["wrong"]),
     ["an Incomplete answer is right on the main point (correctness and completeness at least 1)"]),
    (correctness("Hallucination", 1, 1, missing=["x"], errors=["y"]),
     ["a Generic, Refusal or Hallucination answer has correctness 0"]),
    (correctness("Refusal", 0, 1, missing=["x"]), ["a Generic or Refusal answer has completeness 0"]),
    (correctness("Hallucination", 0, 0, missing=["x"]),
     ["errors is empty exactly when correctness is 2 (or the answer is Generic or a Refusal, which state no fact)"]),
    (broken(CORRECT, errors=["an invented link"]),
     ["errors is empty exactly when correctness is 2 (or the answer is Generic or a Refusal, which state no fact)"]),
    (broken(INCOMPLETE, missing=[]), ["missing is empty exactly when completeness is 2"]),
    (broken(CORRECT, reasoning=" \n"), ["reasoning must not be empty"]),
])
def test_correctness_rules(rubrics, reply, messages):
    assert rubrics.get("correctness").validate_reply(reply)[1] == messages


@pytest.mark.parametrize(("reply", "messages"), [
    (helpfulness("Partial", 2, 2, 2), ["result_tag is Helpful exactly when addresses is 2, specificity and clarity at "
                                       "least 1, and nothing is doubtful"]),
    (helpfulness("Helpful", 2, 1, 0), ["result_tag is Helpful exactly when addresses is 2, specificity and clarity at "
                                       "least 1, and nothing is doubtful"]),
    (helpfulness("Partial", 1, 1, 2, doubtful=["a made-up link"]),
     ["result_tag is Doubtful exactly when doubtful_claims is not empty"]),
    (helpfulness("Partial", 1, 0, 2), ["specificity 0 is for a Generic, Refusal or Doubtful answer"]),
    (helpfulness("Generic", 1, 1, 2), ["a Generic answer has specificity 0"]),
    (helpfulness("Refusal", 1, 0, 2), ["a Refusal has addresses 0 and specificity 0"]),
    (broken(helpfulness("Helpful", 2, 2, 2), reasoning=""), ["reasoning must not be empty"]),
])
def test_helpfulness_rules(rubrics, reply, messages):
    assert rubrics.get("helpfulness").validate_reply(reply)[1] == messages


@pytest.mark.parametrize(("reply", "messages"), [
    (relevance("Refusal", []), ["question_parts lists at least one thing the question asks",
                                "result_tag is Relevant exactly when every part of the question is addressed"]),
    (relevance("Relevant", [part(" ", True)]), ["every entry of question_parts names what is asked"]),
    (relevance("Relevant", [part("a", True), part("b", False)]),
     ["result_tag is Relevant exactly when every part of the question is addressed",
      "result_tag is Partial exactly when some parts of the question are addressed, not all"]),
    (relevance("Partial", [part("a", False)]),
     ["result_tag is Partial exactly when some parts of the question are addressed, not all"]),
    (relevance("Off-topic", [part("a", True)]),
     ["result_tag is Relevant exactly when every part of the question is addressed"]),
    (broken(relevance("Relevant", [part("a", True)]), reasoning=""), ["reasoning must not be empty"]),
])
def test_answer_relevance_rules(rubrics, reply, messages):
    assert rubrics.get("answer-relevance").validate_reply(reply)[1] == messages


@pytest.mark.parametrize(("name", "reply", "headline", "passed", "label"), [
    ("correctness", CORRECT, 100.0, True, "Correct · correctness 2/2 · completeness 2/2"),
    ("correctness", INCOMPLETE, 75.0, True, "Incomplete · correctness 2/2 · completeness 1/2"),
    ("correctness", correctness("Incomplete", 1, 2, errors=["a wrong detail"]), 75.0, False,
     "Incomplete · correctness 1/2 · completeness 2/2"),
    ("correctness", correctness("Hallucination", 0, 1, missing=["x"], errors=["y"]), 25.0, False,
     "Hallucination · correctness 0/2 · completeness 1/2"),
    ("helpfulness", helpfulness("Helpful", 2, 1, 2), 83.33, True,
     "Helpful · addresses 2/2 · specificity 1/2 · clarity 2/2"),
    ("helpfulness", helpfulness("Doubtful", 2, 2, 2, doubtful=["x"]), 100.0, False,
     "Doubtful · addresses 2/2 · specificity 2/2 · clarity 2/2"),
    ("answer-relevance", relevance("Partial", [part("a", True), part("b", False), part("c", True)], off_topic=["ad"]),
     66.67, False, "Partial · 2/3 parts addressed · 1 off topic"),
    ("answer-relevance", relevance("Relevant", [part("a", True)], off_topic=["x", "y"]), 100.0, True,
     "Relevant · 1/1 parts addressed · 2 off topic"),
])
def test_scores(rubrics, name, reply, headline, passed, label):
    rubric = rubrics.get(name)
    output, problems = rubric.validate_reply(reply)
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.label, scoring.tag) == (headline, passed, label,
                                                                              reply["result_tag"])


@pytest.mark.parametrize("name", GENERAL)
def test_rubrics_check_judges_the_goldens(tmp_path, judge_server, rubrics, name):
    rubric = rubrics.get(name)
    judge_server.responder = sound_judge(name, rubric)
    code, out = judgebot(tmp_path, "rubrics", "check", name, server=judge_server)
    text = flat(out)
    assert code == 0, out
    assert f"{name}.yaml ({len(rubric.goldens)} goldens)" in text
    assert "Every golden came out as expected." in text and text.count(f"ok {name}/") == len(rubric.goldens)
    assert len(judge_server.bodies()) == len(judged_goldens(rubric))
