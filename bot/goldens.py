"""Goldens: run a rubric's example triples through the judge and compare with the expected ranges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.csvio import flatten
from bot.judge import Triple, Verdict, judge
from bot.llm import JudgeClient
from bot.rubrics import Golden, Rubric


@dataclass(frozen=True)
class GoldenResult:
    """One golden: the verdict and each expectation it missed."""

    golden: Golden
    verdict: Verdict
    misses: list[str]

    @property
    def ok(self) -> bool:
        """Scored, with every expectation met."""
        return self.verdict.status == "scored" and not self.misses


def misses(expect: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Expectations not met: [low, high] is a range, a list of strings the allowed values, anything else exact."""
    found = []
    for path, wanted in expect.items():
        value = values.get(path)
        if isinstance(wanted, list) and len(wanted) == 2 and all(isinstance(w, (int, float)) for w in wanted):
            ok = isinstance(value, (int, float)) and wanted[0] <= value <= wanted[1]
        elif isinstance(wanted, list):
            ok = value in wanted
        else:
            ok = value == wanted
        if not ok:
            found.append(f"{path} = {value!r}, expected {wanted!r}")
    return found


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
