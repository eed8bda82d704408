"""The content-free screen (bot.judge.content_free) against a stand-in judge that falls for content-free answers:
such answers never pass and the judge is never asked; real short answers are judged as before."""

from __future__ import annotations

import pytest

from bot.judge.content_free import SCREENED, is_screened, why_content_free
from bot.judge.judgment import judge
from bot.records import Triple
from tests.support.judge_cases import ETH_TRIPLE
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply

QUESTION = ETH_TRIPLE.question
CONTENT_FREE = {
    ":": "is only punctuation",
    "...": "is only punctuation",
    "-": "is only punctuation",
    "   ": "is empty",
    "": "is empty",
    "Thought process:": 'is only an opener (such as "Thought process:") with nothing after it',
    "Let's solve this step by step": 'is only an opener (such as "Thought process:") with nothing after it',
    "**Final answer:**": 'is only an opener (such as "Thought process:") with nothing after it',
    QUESTION: "only repeats the question",
    "  how do I REGISTER for my exams, at ETH  ": "only repeats the question",
}
SHORT_ANSWERS = ["Yes.", "42", "OK", "No", "Okay.", "ETHIS", "Answer: in myStudies."]


def fooled(body: dict):
    """A judge that gives every answer full marks, as strong judges do for ":" (arXiv 2507.08794)."""
    return eth_reply("Correct")


@pytest.mark.parametrize(("answer", "why"), CONTENT_FREE.items())
def test_each_pattern_is_named(answer, why):
    assert why_content_free(answer, QUESTION) == why


@pytest.mark.parametrize("answer", SHORT_ANSWERS)
def test_short_real_answers_are_not_content_free(answer):
    assert why_content_free(answer, QUESTION) is None


def test_a_one_word_question_said_again_is_an_answer():
    assert why_content_free("Paris.", "Paris?") is None  # "Is it Paris?" answered "Paris." says something


@pytest.mark.parametrize("answer", list(CONTENT_FREE))
async def test_a_fooled_judge_is_never_asked_and_the_answer_never_passes(answer, judge_server, make_client, rubrics):
    judge_server.responder = fooled
    verdict = await judge(rubrics.get("eth"), ETH_TRIPLE.model_copy(update={"answer": answer}), make_client())
    assert judge_server.bodies() == []
    assert verdict.status == "scored" and verdict.passed is False and verdict.headline == 0.0
    assert verdict.label == f"Content-free: the answer {CONTENT_FREE[answer]}"
    assert verdict.flags[0] == f"the answer {CONTENT_FREE[answer]}: {SCREENED}" and is_screened(verdict.flags)
    assert (verdict.tokens_in, verdict.tokens_out, verdict.attempts, verdict.cost_usd) == (0, 0, 0, 0.0)
    assert verdict.output == {} and verdict.raw_reply is None  # nothing passed off as the judge's


@pytest.mark.parametrize("answer", SHORT_ANSWERS)
async def test_short_real_answers_are_judged_as_before(answer, judge_server, make_client, rubrics):
    judge_server.responder = fooled
    verdict = await judge(rubrics.get("eth"), ETH_TRIPLE.model_copy(update={"answer": answer}), make_client())
    assert len(judge_server.bodies()) == 1
    assert verdict.passed is True and not is_screened(verdict.flags) and verdict.flags == []


async def test_a_pair_is_won_by_the_answer_with_content(judge_server, make_client, rubrics):
    judge_server.responder = lambda body: pytest.fail("the judge was asked")
    pairwise, good = rubrics.get("pairwise"), "You register in myStudies during the registration period."

    def pair(first: str, second: str):
        return judge(pairwise, Triple(question=QUESTION, reference="", answer=first, answer_b=second), make_client())

    first_empty, second_empty, both = await pair(":", good), await pair(good, "Thought process:"), await pair("", "-")
    assert (first_empty.output, first_empty.headline, first_empty.tag) == ({"winner": "B"}, 0.0, "B")
    assert (second_empty.output, second_empty.headline) == ({"winner": "A"}, 100.0)
    assert (both.output, both.passed, both.headline) == ({"winner": "tie"}, False, 50.0)
    assert first_empty.label == "B · content-free: the first answer is only punctuation"
    assert judge_server.bodies() == []


async def test_a_rubric_that_does_not_grade_the_answer_judges_it_with_a_flag(judge_server, make_client, rubrics):
    rubric = rubrics.get("context-relevance")
    assert rubric.content_free == "flag"
    judge_server.responder = lambda body: Reply.json({"passages": [{"passage": 1, "reason": "on topic",
                                                                    "relevant": True}], "result_tag": "Relevant"})
    triple = Triple(question=QUESTION, reference="", answer=":", context=["Register in myStudies."])
    verdict = await judge(rubric, triple, make_client())
    assert len(judge_server.bodies()) == 1 and verdict.passed is True
    assert verdict.flags == ["the answer is only punctuation, which judges often pass"]
