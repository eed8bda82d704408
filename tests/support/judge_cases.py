"""Triples and judge replies for the eth and academic rubrics, as the judgment and rubric-order tests send them."""

from __future__ import annotations

from bot.records import Triple

ETH_TRIPLE = Triple(
    question="How do I register for my exams at ETH?",
    reference="Exam registration is done in myStudies (ETHIS) during the registration period.",
    answer="You register for exams in myStudies, the ETHIS student portal, during the registration window.",
)
ETH_OK = {"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names myStudies (ETHIS)."}

ACADEMIC_TRIPLE = Triple(
    question="How many credits does the thesis track of the master's programme require?",
    reference="The thesis track requires 30 credits of coursework plus a 6-credit thesis, 36 credits in total.",
    answer="The thesis track requires between 30 and 36 credits, including the thesis.",
)


def academic(coverage=5, missing=(), factuality=3, incorrect=("30-36 credits instead of exactly 36",), clarity=4,
             issues=None, revision="The thesis track requires 36 credits: 30 of coursework and a 6-credit thesis.",
             termination=None) -> dict:
    return {
        "revision_attempt": 0,
        "reference_facts": ["30 credits of coursework", "6-credit thesis", "36 credits in total"],
        "key_aspects": ["thesis track credits"],
        "evaluation": {
            "coverage": {"score": coverage, "missing_aspects": list(missing)},
            "factuality": {"score": factuality, "incorrect_facts": list(incorrect)},
            "clarity": {"score": clarity, "issues": issues},
        },
        "proposed_revision": revision,
        "termination_reason": termination,
    }

