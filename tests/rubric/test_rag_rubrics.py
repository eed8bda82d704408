"""The shipped rubrics for RAG (faithfulness, context-relevance, context-recall): each golden is what a sound judge's
reply adds up to, every tag and both outcomes are covered, each rule turns an inconsistent reply into an error, the
shares and counts are computed from the lists (never the judge's own number), and `judgebot rubrics check` runs their
goldens, passages and all, against a judge; and examples/rag.csv as the docs grade it."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from bot.rubric import misses
from tests.support.cli import ROOT, flat, judgebot, read_results
from tests.support.sound_replies import (
    RAG_EXAMPLE_FAITHFULNESS,
    SOUND,
    claim,
    fact,
    judged_goldens,
    passage,
    rag_example_judge,
    sound_judge,
    values_of,
)

RAG = ("faithfulness", "context-relevance", "context-recall")


@pytest.mark.parametrize(("name", "golden"), [(name, golden) for name in RAG for golden in SOUND[name]])
def test_each_golden_is_what_a_sound_reply_adds_up_to(rubrics, name, golden):
    rubric = rubrics.get(name)
    (found,) = [g for g in rubric.goldens if g.name == golden]
    values, problems = values_of(rubric, SOUND[name][golden])
    assert problems == []
    assert misses(found.expect, values) == []


@pytest.mark.parametrize("name", RAG)
def test_goldens_cover_every_tag_and_both_outcomes(rubrics, name):
    rubric = rubrics.get(name)
    assert rubric.uses_context and rubric.uses_reference == (name == "context-recall")
    assert sorted(g.name for g in judged_goldens(rubric)) == sorted(SOUND[name])
    assert all(g.context for g in rubric.goldens)
    outcomes = [values_of(rubric, SOUND[name][g.name])[0] for g in judged_goldens(rubric)]
    tag = rubric.headline.tag
    assert tag is not None
    assert {values[tag] for values in outcomes} == set(dict(rubric.output)[tag].values or [])
    assert {values["passed"] for values in outcomes} == {True, False}


def faithful(*claims: dict, tag: str) -> dict:
    return {"result_tag": tag, "claims": list(claims)}


SUPPORTED = claim("Notes stay in Trash for 30 days", "supported", 1)
CONTRADICTED = claim("The Android app works offline", "contradicted", 2)
UNSUPPORTED = claim("Exports go to Dropbox nightly", "not_in_context", None)


@pytest.mark.parametrize(("reply", "messages"), [
    (faithful(tag="Faithful"), ["claims is empty exactly when result_tag is No claims (an answer that makes no claim)"]),
    (faithful(SUPPORTED, tag="No claims"),
     ["claims is empty exactly when result_tag is No claims (an answer that makes no claim)"]),
    (faithful(claim("  ", "supported", 1), tag="Faithful"), ["every claim states something"]),
    (faithful(claim("Notes stay 30 days", "supported", None), tag="Faithful"),
     ["a supported or contradicted claim names the passage that supports or contradicts it"]),
    (faithful(claim("Android works offline", "contradicted", None), tag="Contradicted"),
     ["a supported or contradicted claim names the passage that supports or contradicts it"]),
    (faithful(claim("Word export", "not_in_context", 1), tag="Unsupported"),
     ["a claim not in the context names no passage (passage null)"]),
    (faithful(SUPPORTED, CONTRADICTED, tag="Faithful"),
     ["result_tag is Contradicted exactly when some claim is contradicted"]),
    (faithful(SUPPORTED, CONTRADICTED, UNSUPPORTED, tag="Unsupported"),
     ["result_tag is Contradicted exactly when some claim is contradicted",
      "result_tag is Unsupported exactly when some claim is not in the context and none is contradicted"]),
    (faithful(SUPPORTED, UNSUPPORTED, tag="Faithful"),
     ["result_tag is Unsupported exactly when some claim is not in the context and none is contradicted"]),
    (faithful(SUPPORTED, tag="Unsupported"),
     ["result_tag is Unsupported exactly when some claim is not in the context and none is contradicted"]),
])
def test_faithfulness_rules(rubrics, reply, messages):
    assert rubrics.get("faithfulness").validate_reply(reply)[1] == messages


def test_faithfulness_schema_refuses_a_passage_zero_and_an_unknown_verdict(rubrics):
    rubric = rubrics.get("faithfulness")
    assert rubric.validate_reply(faithful(claim("x", "supported", 0), tag="Faithful"))[0] is None
    assert rubric.validate_reply(faithful(claim("x", "partly", 1), tag="Faithful"))[0] is None
    assert rubric.validate_reply({**faithful(SUPPORTED, tag="Faithful"), "score": 100})[0] is None  # no judge's score


@pytest.mark.parametrize(("claims", "tag", "headline", "passed", "label"), [
    ([SUPPORTED] * 4, "Faithful", 100.0, True, "Faithful · 4 supported · 0 contradicted · 0 not in context"),
    ([SUPPORTED] * 4 + [UNSUPPORTED], "Unsupported", 80.0, True,
     "Unsupported · 4 supported · 0 contradicted · 1 not in context"),
    ([SUPPORTED] * 3 + [UNSUPPORTED], "Unsupported", 75.0, False,
     "Unsupported · 3 supported · 0 contradicted · 1 not in context"),
    ([SUPPORTED] * 9 + [CONTRADICTED], "Contradicted", 90.0, False,
     "Contradicted · 9 supported · 1 contradicted · 0 not in context"),
    ([SUPPORTED, CONTRADICTED, UNSUPPORTED], "Contradicted", 33.33, False,
     "Contradicted · 1 supported · 1 contradicted · 1 not in context"),
    ([], "No claims", 100.0, True, "No claims · 0 supported · 0 contradicted · 0 not in context"),
])
def test_faithfulness_score_is_the_supported_share(rubrics, claims, tag, headline, passed, label):
    rubric = rubrics.get("faithfulness")
    output, problems = rubric.validate_reply(faithful(*claims, tag=tag))
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.label, scoring.tag) == (headline, passed, label, tag)
    assert scoring.derived["supported_share"] == headline


def relevance(*passages: dict, tag: str) -> dict:
    return {"result_tag": tag, "passages": list(passages)}


@pytest.mark.parametrize(("reply", "messages"), [
    (relevance(passage(1, True), passage(3, True), tag="Relevant"),
     ["passages are numbered 1, 2, 3, ... one entry each, no number skipped or repeated"]),
    (relevance(passage(1, True), passage(1, False), tag="Noisy"),
     ["passages are numbered 1, 2, 3, ... one entry each, no number skipped or repeated"]),
    (relevance(passage(1, True, reason=""), tag="Relevant"), ["every passage has a reason"]),
    (relevance(passage(1, True), passage(2, False), tag="Relevant"),
     ["result_tag is Relevant exactly when every passage is relevant"]),
    (relevance(passage(1, True), tag="Noisy"), ["result_tag is Relevant exactly when every passage is relevant"]),
    (relevance(passage(1, False), tag="Noisy"), ["result_tag is Irrelevant exactly when no passage is relevant"]),
    (relevance(passage(1, True), passage(2, False), tag="Irrelevant"),
     ["result_tag is Irrelevant exactly when no passage is relevant"]),
])
def test_context_relevance_rules(rubrics, reply, messages):
    assert rubrics.get("context-relevance").validate_reply(reply)[1] == messages


@pytest.mark.parametrize(("relevant", "tag", "precision", "ranked", "passed"), [
    ([True, True, True], "Relevant", 100.0, 100.0, True),
    ([True, False, False], "Noisy", 33.33, 100.0, False),
    ([False, False, True], "Noisy", 33.33, 33.33, False),
    ([True, False, True, False], "Noisy", 50.0, 83.33, True),  # (1/1 + 2/3) / 2
    ([False, True], "Noisy", 50.0, 50.0, True),
    ([False, False], "Irrelevant", 0.0, 0.0, False),
    ([], "Irrelevant", 0.0, 0.0, False),
])
def test_context_relevance_precision_and_ranked_precision(rubrics, relevant, tag, precision, ranked, passed):
    rubric = rubrics.get("context-relevance")
    output, problems = rubric.validate_reply(relevance(*(passage(n, r) for n, r in enumerate(relevant, 1)), tag=tag))
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.tag) == (precision, passed, tag)
    assert scoring.derived["ranked_precision"] == ranked
    count = sum(relevant)
    assert scoring.label == f"{tag} · {count}/{len(relevant)} passages relevant · ranked precision {ranked:.0f}"


def recall(*facts: dict, tag: str) -> dict:
    return {"result_tag": tag, "reference_facts": list(facts)}


@pytest.mark.parametrize(("reply", "messages"), [
    (recall(tag="Complete"), ["reference_facts lists at least one fact of the reference",
                              "result_tag is Missing exactly when no fact is in the context"]),
    (recall(fact(" ", True, 1), tag="Complete"), ["every fact states something"]),
    (recall(fact("30 days", True, None), tag="Complete"),
     ["a fact in the context names its passage, and a fact not in the context has passage null"]),
    (recall(fact("30 days", False, 2), tag="Missing"),
     ["a fact in the context names its passage, and a fact not in the context has passage null"]),
    (recall(fact("a", True, 1), fact("b", False, None), tag="Complete"),
     ["result_tag is Complete exactly when every fact is in the context"]),
    (recall(fact("a", False, None), tag="Partial"), ["result_tag is Missing exactly when no fact is in the context"]),
])
def test_context_recall_rules(rubrics, reply, messages):
    assert rubrics.get("context-recall").validate_reply(reply)[1] == messages


@pytest.mark.parametrize(("found", "tag", "headline", "passed"), [
    ([True, True], "Complete", 100.0, True),
    ([True, True, True, True, False], "Partial", 80.0, True),
    ([True, True, False], "Partial", 66.67, False),
    ([False], "Missing", 0.0, False),
])
def test_context_recall_is_the_share_of_reference_facts_found(rubrics, found, tag, headline, passed):
    rubric = rubrics.get("context-recall")
    facts = [fact(f"fact {n}", ok, n if ok else None) for n, ok in enumerate(found, 1)]
    output, problems = rubric.validate_reply(recall(*facts, tag=tag))
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.tag) == (headline, passed, tag)
    assert scoring.label == f"{tag} · {sum(found)}/{len(found)} reference facts in the context"


@pytest.mark.parametrize("name", RAG)
def test_rubrics_check_judges_the_goldens_with_their_passages(tmp_path, judge_server, rubrics, name):
    rubric = rubrics.get(name)
    judge_server.responder = sound_judge(name, rubric)
    code, out = judgebot(tmp_path, "rubrics", "check", name, server=judge_server)
    text = flat(out)
    assert code == 0, out
    assert "Every golden came out as expected." in text and text.count(f"ok {name}/") == len(rubric.goldens)
    bodies = judge_server.bodies()
    assert len(bodies) == len(judged_goldens(rubric))
    sent = "\n".join(m["content"] for body in bodies for m in body["messages"] if m["role"] == "user")
    most = 0
    for golden in judged_goldens(rubric):  # every passage of every golden reaches the judge, numbered
        passages = [golden.context] if isinstance(golden.context, str) else golden.context or []
        for passage_text in passages:
            assert passage_text in sent
        most = max(most, len(passages))
    assert most >= 2 and all(f"[{number}] <" in sent for number in range(1, most + 1))


def test_the_rag_example_holds_passages_as_json_lists_or_plain_text():
    with (ROOT / "examples" / "rag.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert list(rows[0]) == ["question", "reference", "contexts", "answer", "model"]
    assert {row["model"] for row in rows} == {"notes-helper-v1", "notes-helper-v2"}
    for row in rows:
        cell = row["contexts"]
        passages = json.loads(cell) if cell.startswith("[") else [cell]
        assert passages and all(isinstance(text, str) and text.strip() for text in passages)
    assert sum(not row["contexts"].startswith("[") for row in rows) == 1  # one row with a single passage as plain text
    assert all(any(row["answer"].startswith(start) for start in RAG_EXAMPLE_FAITHFULNESS) for row in rows)


def test_the_rag_example_graded_for_faithfulness(tmp_path, judge_server):
    shutil.copy(ROOT / "examples" / "rag.csv", tmp_path / "rag.csv")
    judge_server.responder = rag_example_judge
    code, out = judgebot(tmp_path, "judge", "rag.csv", "--rubric", "faithfulness", "--yes", server=judge_server)
    assert code == 0, out
    text = flat(out)
    assert "result_tag Faithful 6 · Unsupported 2 · Contradicted 1 · No claims 1" in text, out
    assert "columns question=question, reference=reference, answer=answer, model=model, context=contexts" in text, out
    _, results = read_results(tmp_path / "rag.results.csv")
    assert [row["result_tag"] for row in results] == [
        "Faithful", "Faithful", "Faithful", "Contradicted", "Faithful", "Unsupported", "No claims", "Unsupported",
        "Faithful", "Faithful"]
    assert [row["passed"] for row in results].count("true") == 7  # the six Faithful and the answer with no claim
    for body in judge_server.bodies():  # each row's passages reach the judge, numbered, none of the reference
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        assert "[1]" in user and "8 euros" not in user
