"""The replies a sound judge gives to the goldens of the shipped general and RAG rubrics, written by hand, what a reply
adds up to as `rubrics check` compares it, and a local judge that answers each golden so."""

from __future__ import annotations

import re
from typing import Any

from bot.csvfiles.results import flatten
from bot.judge.content_free import why_content_free
from bot.rubric import Golden, Rubric
from tests.support.openai_server import Reply


def claim(text: str, verdict: str, passage: int | None) -> dict[str, Any]:
    return {"claim": text, "verdict": verdict, "passage": passage}


def passage(number: int, relevant: bool, reason: str = "says what the question asks") -> dict[str, Any]:
    return {"passage": number, "reason": reason, "relevant": relevant}


def fact(text: str, in_context: bool, number: int | None) -> dict[str, Any]:
    return {"fact": text, "in_context": in_context, "passage": number}


def part(text: str, addressed: bool) -> dict[str, Any]:
    return {"part": text, "addressed": addressed}


def correctness(tag: str, correctness: int, completeness: int, missing=(), errors=()) -> dict[str, Any]:
    return {"result_tag": tag, "correctness": correctness, "completeness": completeness, "missing": list(missing),
            "errors": list(errors), "reasoning": f"graded {tag}"}


def helpfulness(tag: str, addresses: int, specificity: int, clarity: int, doubtful=()) -> dict[str, Any]:
    return {"result_tag": tag, "addresses": addresses, "specificity": specificity, "clarity": clarity,
            "doubtful_claims": list(doubtful), "reasoning": f"graded {tag}"}


def relevance(tag: str, parts, off_topic=()) -> dict[str, Any]:
    return {"result_tag": tag, "question_parts": list(parts), "off_topic": list(off_topic), "reasoning": f"graded {tag}"}


SOUND: dict[str, dict[str, dict[str, Any]]] = {
    "correctness": {
        "right-and-complete": correctness("Correct", 2, 2),
        "main-point-only": correctness("Incomplete", 2, 1, missing=["the link stays valid for 24 hours"]),
        "generic-advice": correctness("Generic", 0, 0, missing=["port 8443", "the PORT setting"]),
        "honest-refusal": correctness("Refusal", 0, 0, missing=["2 GB per file"]),
        "wrong-number": correctness("Hallucination", 0, 0, missing=["100 °C"], errors=["90 °C"]),
        "invented-link": correctness("Hallucination", 0, 0, missing=["Account > Billing > Invoices"],
                                     errors=["invoices.example-billing.net"]),
    },
    "helpfulness": {
        "concrete-steps": helpfulness("Helpful", 2, 2, 2),
        "half-the-question": helpfulness("Partial", 1, 2, 2),
        "fits-any-question": helpfulness("Generic", 1, 0, 2),
        "declines": helpfulness("Refusal", 0, 0, 2),
        "wrong-fact": helpfulness("Doubtful", 2, 2, 2, doubtful=["Venus is the planet closest to the Sun"]),
    },
    "answer-relevance": {
        "answers-what-was-asked": relevance("Relevant", [part("how to change the language", True)]),
        "wrong-but-relevant": relevance("Relevant", [part("the year of the first Moon walk", True)]),
        "half-answered": relevance("Partial", [part("the price of the premium plan", True),
                                               part("whether it can be cancelled at any time", False)]),
        "something-else": relevance("Off-topic", [part("how to export contacts to CSV", False)],
                                    off_topic=["the app has won design awards"]),
        "declines": relevance("Refusal", [part("the Sunday opening hours", False)]),
    },
    "faithfulness": {
        "grounded": {"result_tag": "Faithful", "claims": [
            claim("Deleted notes stay in the Trash for 30 days", "supported", 1),
            claim("After 30 days deleted notes are removed permanently", "supported", 1)]},
        "contradicts-its-passage": {"result_tag": "Contradicted", "claims": [
            claim("The Android app works fully offline", "contradicted", 1),
            claim("You can open your notes anywhere on Android", "contradicted", 1)]},
        "adds-facts": {"result_tag": "Unsupported", "claims": [
            claim("Export is in Settings > Export", "supported", 1),
            claim("Notes can be exported as Markdown or PDF", "supported", 1),
            claim("Notes can be exported to Word", "not_in_context", None),
            claim("Exports are backed up to Dropbox every night", "not_in_context", None)]},
        "says-nothing": {"result_tag": "No claims", "claims": []},
        "one-passage-string": {"result_tag": "Faithful", "claims": [
            claim("A free account syncs up to two devices", "supported", 1)]},
    },
    "context-relevance": {
        "all-on-topic": {"result_tag": "Relevant", "passages": [passage(1, True), passage(2, True)]},
        "relevant-first-then-noise": {"result_tag": "Noisy", "passages": [
            passage(1, True), passage(2, False, "platforms, not export"), passage(3, False, "company history")]},
        "noise-first": {"result_tag": "Noisy", "passages": [
            passage(1, False, "dark mode, not offline use"), passage(2, True)]},
        "nothing-found": {"result_tag": "Irrelevant", "passages": [
            passage(1, False, "platforms, not prices"), passage(2, False, "tags, not prices")]},
    },
    "context-recall": {
        "everything-retrieved": {"result_tag": "Complete", "reference_facts": [
            fact("Deleted notes stay in Trash for 30 days", True, 1),
            fact("Then they are deleted for good", True, 1)]},
        "half-retrieved": {"result_tag": "Partial", "reference_facts": [
            fact("Export is in Settings > Export", True, 1), fact("Formats are Markdown or PDF", True, 1),
            fact("An export can be scheduled weekly", False, None)]},
        "wrong-passages": {"result_tag": "Missing", "reference_facts": [
            fact("The business plan costs 8 euros per seat per month", False, None),
            fact("It is billed yearly", False, None)]},
        "passage-says-otherwise": {"result_tag": "Missing", "reference_facts": [
            fact("The Android app works offline", False, None),
            fact("Once notes have been synced", False, None)]},
    },
}


def values_of(rubric: Rubric, reply: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What `rubrics check` compares a golden's expectations with (the reply's fields by dotted path, the derived
    values, headline and passed), and the rules the reply breaks."""
    output, problems = rubric.validate_reply(reply)
    assert output is not None, problems
    scoring = rubric.score(output)
    return {**flatten(output), **scoring.derived, "headline": scoring.headline, "passed": scoring.passed}, problems


def judged_goldens(rubric: Rubric) -> list[Golden]:
    """The goldens of `rubric` a judge is asked about: not those the content-free screen fails without asking."""
    return [golden for golden in rubric.goldens if rubric.content_free != "fail" or not any(
        why_content_free(answer, golden.question) for answer in (golden.answer, golden.answer_a, golden.answer_b)
        if answer is not None)]


def sound_judge(name: str, rubric: Rubric):
    """A responder for the local judge server: the sound reply to the golden of `rubric` whose question it is sent."""
    by_question = {golden.question: SOUND[name][golden.name] for golden in judged_goldens(rubric)}

    def respond(body: dict) -> Reply:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        question = re.findall(r"<(DATA-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.DOTALL)[0][1]
        return Reply.json(by_question[question])

    return respond


# What a sound judge makes of each answer of examples/rag.csv under faithfulness, by the answer's first words.
RAG_EXAMPLE_FAITHFULNESS: dict[str, dict[str, Any]] = {
    "Deleted notes stay in the Trash for 30 days.": {"result_tag": "Faithful", "claims": [
        claim("Deleted notes stay in the Trash for 30 days", "supported", 1),
        claim("Until then they can be restored from Trash", "supported", 2)]},
    "Deleted notes go to the Trash": {"result_tag": "Faithful", "claims": [
        claim("Deleted notes go to the Trash", "supported", 1), claim("They can be restored there", "supported", 2)]},
    "No. Offline mode": {"result_tag": "Faithful", "claims": [
        claim("Offline mode is available on desktop and iOS", "supported", 1),
        claim("The Android app needs a connection to open notes", "supported", 1)]},
    "Yes, the Android app": {"result_tag": "Contradicted", "claims": [
        claim("The Android app works fully offline", "contradicted", 1)]},
    "Go to Settings > Export": {"result_tag": "Faithful", "claims": [
        claim("Export is in Settings > Export, as Markdown or PDF", "supported", 1),
        claim("The export includes every notebook", "supported", 1)]},
    "Open Settings > Export": {"result_tag": "Unsupported", "claims": [
        claim("Export is in Settings > Export, as Markdown or PDF", "supported", 1),
        claim("Notes can be exported to Word", "not_in_context", None),
        claim("Exports are backed up to Dropbox every night", "not_in_context", None)]},
    "I couldn't find": {"result_tag": "No claims", "claims": []},
    "The business plan costs": {"result_tag": "Unsupported", "claims": [
        claim("The business plan costs 12 euros per seat per month", "not_in_context", None)]},
    "A free account syncs": {"result_tag": "Faithful", "claims": [
        claim("A free account syncs up to two devices", "supported", 1),
        claim("A paid plan syncs any number of devices", "supported", 1)]},
    "Not a whole notebook": {"result_tag": "Faithful", "claims": [
        claim("Everyone invited to a notebook needs an account", "supported", 1),
        claim("A single note can be published as a read-only public link", "supported", 2)]},
}


def rag_example_judge(body: dict) -> Reply:
    """The faithfulness reply to a row of examples/rag.csv, found by its answer (the last text the judge is sent)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    answer = re.findall(r"<(DATA-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.DOTALL)[-1][1]
    (reply,) = [reply for start, reply in RAG_EXAMPLE_FAITHFULNESS.items() if answer.startswith(start)]
    return Reply.json(reply)
