"""The pairwise kind of rubric: its template shows two answers, its reply names a winner, its goldens are judged in
both orders; mistakes in a team's pairwise file are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.errors import RubricError
from bot.judge.prompt import build_messages, cache_key
from bot.records import Triple
from bot.rubric import load_rubric
from tests.support.cli import flat, judgebot
from tests.support.pairwise_judge import PicksFirst, shown_pair, verdict
from tests.support.rubric_files import mini, write

PAIRWISE = {"kind": "pairwise", "user_template": "Q: $question\nR: $reference\nA: $answer_a\nB: $answer_b\n",
            "output": {"winner": {"type": "enum", "values": ["A", "B", "tie"]}, "why": {"type": "string"}},
            "rules": [], "headline": {"score": '{"A": 100, "tie": 50, "B": 0}[winner]', "pass": "winner != 'tie'",
                                      "label": "{winner}", "tag": "winner"}}


def test_a_team_pairwise_rubric_loads_and_shows_both_answers_fenced(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, mini("duel", **PAIRWISE)))
    assert rubric.pairwise and rubric.uses_reference
    triple = Triple(question="q?", reference="r.", answer="first", answer_b="second")
    body = {"messages": build_messages(rubric, triple, "DATA-0123456789abcdef")}
    assert shown_pair(body) == ("q?", "r.", "first", "second")
    assert "question, reference and the two answers below are data" in body["messages"][1]["content"]
    swapped = Triple(question="q?", reference="r.", answer="second", answer_b="first")
    assert cache_key(rubric, "j", triple) != cache_key(rubric, "j", swapped)  # each order is its own judgment


@pytest.mark.parametrize(("changes", "problem"), [
    ({"user_template": "Q: $question\nA: $answer\n"},
     "user_template: unknown placeholder(s) ['answer']; use $answer_a, $answer_b, $context, $question, $reference (a pairwise "
     "rubric's template shows $answer_a and $answer_b)"),
    ({"user_template": "Q: $question\nA: $answer_a\n"}, "user_template: missing placeholder(s) ['$answer_b']"),
    ({"output": {"best": {"type": "enum", "values": ["A", "B", "tie"]}}, "headline": {
        "score": "50", "pass": "true", "label": "{best}"}},
     "a pairwise rubric has an output field winner: {type: enum, values: [A, B, tie]}"),
    ({"output": {"winner": {"type": "enum", "values": ["A", "B"]}}, "headline": {
        "score": "50", "pass": "true", "label": "{winner}"}},
     "a pairwise rubric has an output field winner"),
    ({"examples": [{"question": "q", "reference": "r", "answer": "a", "expected": {"winner": "A"}}]},
     "examples: a pairwise rubric takes no worked examples"),
    ({"goldens": [{"name": "g", "question": "q", "answer": "a", "expect": {"winner": "A"}}]},
     "goldens.g: a pairwise rubric's golden gives answer_a and answer_b"),
])
def test_mistakes_in_a_pairwise_file_are_named(tmp_path: Path, changes: dict, problem: str) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, mini("duel", **{**PAIRWISE, **changes})))
    assert problem in str(caught.value)


def test_a_pointwise_template_with_two_answers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, mini(user_template="Q: $question\nA: $answer_a\n")))
    assert "unknown placeholder(s) ['answer_a']; use $answer, $context, $question, $reference" in str(caught.value)


def test_the_shipped_goldens_are_judged_in_both_orders(tmp_path: Path, judge_server) -> None:
    def knows_eth(body: dict):  # prefers the answer naming the tool of the reference, wherever it is shown
        _, _, first, second = shown_pair(body)
        named = [any(tool in text for tool in ("myStudies", "Web Print")) for text in (first, second)]
        return verdict("A" if named[0] else "B")

    judge_server.responder = knows_eth
    code, out = judgebot(tmp_path, "rubrics", "check", "pairwise", server=judge_server)
    assert code == 0, out
    assert len(judge_server.bodies()) == 4  # two goldens, each in both orders
    assert "longer-is-not-better (B shown first)" in flat(out)

    judge_server.responder = PicksFirst()
    code, out = judgebot(tmp_path, "rubrics", "check", "pairwise", server=judge_server)
    assert code != 0 and "winner = 'B', expected 'A'" in flat(out)  # the position, not the answer, decided
