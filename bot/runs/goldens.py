"""Checking a rubric against its goldens: each example triple judged (never cached, never stored) and compared."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.csvfiles.results import flatten
from bot.judge.judgment import judge
from bot.llm.client import JudgeClient
from bot.records import RowState, Triple, Verdict
from bot.rubric import Golden, Rubric, misses
from bot.trust.pairwise import FLIP


@dataclass(frozen=True)
class GoldenResult:
    """One golden: the verdict and each expectation it missed."""

    golden: Golden
    verdict: Verdict
    misses: list[str]

    @property
    def ok(self) -> bool:
        """Scored, with every expectation met."""
        return self.verdict.status == RowState.SCORED and not self.misses


async def check_goldens(rubric: Rubric, client: JudgeClient) -> list[GoldenResult]:
    """Judge every golden of `rubric` (never cached, never stored) and compare; a pairwise rubric's golden in both
    orders, its winner read back in the golden's terms (A is its answer_a) when B was shown first."""
    results = []
    for golden in rubric.goldens:
        for swapped in (False, True) if rubric.pairwise else (False,):
            verdict = await judge(rubric, golden_texts(golden, swapped), client)
            values = verdict_values(verdict)
            if swapped:
                values["winner"] = FLIP.get(str(values.get("winner")), values.get("winner"))
                golden = golden.model_copy(update={"name": f"{golden.name} (B shown first)"})
            results.append(GoldenResult(golden, verdict, misses(golden.expect, values) if verdict.output is not None else []))
    return results


def verdict_values(verdict: Verdict) -> dict[str, Any]:
    """A verdict's values by the paths a golden's expectations name: its fields flattened, its derived values, its
    headline and pass/fail."""
    return {**flatten(verdict.output or {}), **verdict.derived, "headline": verdict.headline, "passed": verdict.passed}


def golden_texts(golden: Golden, swapped: bool = False) -> Triple:
    """What the judge is shown of a golden: its answer, or its two answers in the order asked, with its passages."""
    if golden.answer_a is None or golden.answer_b is None:
        return Triple(question=golden.question, reference=golden.reference, answer=golden.answer or "",
                      context=golden.passages)
    first, second = (golden.answer_b, golden.answer_a) if swapped else (golden.answer_a, golden.answer_b)
    return Triple(question=golden.question, reference=golden.reference, answer=first, answer_b=second,
                  context=golden.passages)
