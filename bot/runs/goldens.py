"""Checking a rubric against its goldens: each example triple judged (never cached, never stored) and compared."""

from __future__ import annotations

from dataclasses import dataclass

from bot.csvfiles.results import flatten
from bot.judge.judgment import judge
from bot.llm.client import JudgeClient
from bot.records import RowState, Triple, Verdict
from bot.rubric import Golden, Rubric, misses


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
    """Judge every golden of `rubric` (never cached, never stored) and compare."""
    results = []
    for golden in rubric.goldens:
        triple = Triple(question=golden.question, reference=golden.reference, answer=golden.answer)
        verdict = await judge(rubric, triple, client)
        values = {**flatten(verdict.output or {}), **verdict.derived,
                  "headline": verdict.headline, "passed": verdict.passed}
        results.append(GoldenResult(golden, verdict, misses(golden.expect, values) if verdict.output else []))
    return results
