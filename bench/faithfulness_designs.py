"""How far faithfulness in one judge call agrees with the two-call design of RAGAS and DeepEval (the answer's claims
first, then a verdict on each against the passages), on the shipped rubric's goldens or on rows of your own.

Each case is judged both ways by the configured judge (OPENAI_BASE_URL, OPENAI_API_KEY; --judge, else JUDGE_MODEL),
never cached and never stored:

- one call: the shipped `faithfulness` rubric, as `judgebot judge` asks it;
- two calls: bench/rubrics/faithfulness-claims.yaml splits the answer into claims (without the passages), then
  bench/rubrics/faithfulness-verdicts.yaml checks each numbered claim against the numbered passages. The claims and
  their verdicts make a faithfulness reply, checked by the shipped rubric's rules and scored by its formulas (the
  supported share; pass when no claim is contradicted and the share reaches the threshold), so that only the way the
  claim list is obtained differs.

Prints each case's tag, supported share, pass/fail and claims by each design, then, over the cases both designs
scored (each case once), in how many pass/fail and the tag agree, the mean absolute difference of the share, the
claims each found, the goldens each meets and the tokens each sent. A case the content-free screen fails is failed
by both designs before any judge is asked: it is listed and left out. Run by hand, with a judge of your own:

    OPENAI_API_KEY=... python bench/faithfulness_designs.py --judge gpt-4.1-mini
    python bench/faithfulness_designs.py --rows rag_rows.csv        # question, context, answer columns
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import Settings
from bot.csvfiles.reading import open_csv
from bot.csvfiles.results import flatten
from bot.csvfiles.rows import CsvRow
from bot.judge.content_free import is_screened
from bot.judge.judgment import judge
from bot.judge.prompt import provenance
from bot.llm.client import JudgeClient
from bot.llm.configured import judge_client_from
from bot.records import RowState, Triple, Verdict
from bot.rubric import Rubric, load_rubrics, misses
from bot.rubric.rubric_file import load_rubric

RUBRICS = Path(__file__).resolve().parent / "rubrics"


@dataclass(frozen=True)
class Case:
    """One case to judge both ways: a golden (with what it expects) or a row of a file."""

    name: str
    triple: Triple
    expect: dict[str, Any] | None = None


@dataclass
class Outcome:
    """One design's verdict on a case: its tag, share, pass/fail and claims, or why it has none."""

    verdict: Verdict | None = None
    claims: int | None = None
    problem: str | None = None
    tokens: int = 0
    requests: int = 0

    @property
    def scored(self) -> Verdict | None:
        """The design's scored verdict; None when it has none."""
        verdict = self.verdict
        return verdict if self.problem is None and verdict is not None and verdict.status == RowState.SCORED else None

    @property
    def why(self) -> str:
        """Why the design has no verdict."""
        return self.problem or (self.verdict.error or str(self.verdict.status) if self.verdict else "not asked")

    def shown(self) -> str:
        if (verdict := self.scored) is None:
            return "no verdict (why: below)"
        result = "pass" if verdict.passed else "fail"
        return f"{verdict.tag} {verdict.headline:.0f} {result}, {self.claims} claim{'' if self.claims == 1 else 's'}"


@dataclass
class Compared:
    """A case and each design's outcome."""

    case: Case
    one: Outcome
    two: Outcome = field(default_factory=Outcome)
    screened: bool = False


def golden_cases(rubric: Rubric) -> list[Case]:
    """The rubric's goldens as cases."""
    return [Case(golden.name, Triple(question=golden.question, reference=golden.reference, answer=golden.answer or "",
                                     context=golden.passages), golden.expect) for golden in rubric.goldens]


def file_cases(path: Path) -> list[Case]:
    """The rows of a CSV file (question, context, answer) as cases, each named by its line; a row that cannot be
    read is reported and left out."""
    cases = []
    for row in open_csv(path, reference=False, context=True):
        if not isinstance(row, CsvRow):
            print(f"line {row.line}: left out: {row.reason}")
            continue
        cases.append(Case(f"line {row.line}", Triple(question=row.question, reference="", answer=row.answer,
                                                     context=row.context)))
    return cases


async def one_call(rubric: Rubric, case: Case, client: JudgeClient) -> Outcome:
    """The shipped rubric's verdict, as `judgebot judge` asks it."""
    verdict = await judge(rubric, case.triple, client)
    claims = len((verdict.output or {}).get("claims") or []) if verdict.status == RowState.SCORED else None
    return Outcome(verdict, claims, tokens=verdict.tokens_in + verdict.tokens_out, requests=verdict.attempts)


async def two_calls(faithfulness: Rubric, claims_rubric: Rubric, verdicts_rubric: Rubric, case: Case,
                    client: JudgeClient) -> Outcome:
    """The claims first, then each numbered claim against the passages; put together as a faithfulness reply, checked
    by its rules and scored by its formulas."""
    split = await judge(claims_rubric, case.triple.model_copy(update={"context": None}), client)
    outcome = Outcome(tokens=split.tokens_in + split.tokens_out, requests=split.attempts)
    if split.status != RowState.SCORED or split.output is None:
        outcome.problem = f"claims call: {split.error or split.status}"
        return outcome
    claims: list[str] = split.output["claims"]
    entries: list[dict[str, Any]] = []
    if claims:
        numbered = "\n".join(f"{number}. {claim}" for number, claim in enumerate(claims, 1))
        checked = await judge(verdicts_rubric, case.triple.model_copy(update={"answer": numbered}), client)
        outcome.tokens += checked.tokens_in + checked.tokens_out
        outcome.requests += checked.attempts
        if checked.status != RowState.SCORED or checked.output is None:
            outcome.problem = f"verdicts call: {checked.error or checked.status}"
            return outcome
        by_claim = {entry["claim"]: entry for entry in checked.output["verdicts"]}
        if sorted(by_claim) != list(range(1, len(claims) + 1)):
            outcome.problem = f"verdicts call: {len(by_claim)} verdicts for {len(claims)} claims"
            return outcome
        entries = [{"claim": claim, "verdict": by_claim[number]["verdict"], "passage": by_claim[number]["passage"]}
                   for number, claim in enumerate(claims, 1)]
    reply = {"claims": entries, "result_tag": _tag(entries)}
    output, problems = faithfulness.validate_reply(reply, passages=len(case.triple.context or ()))
    if output is None or problems:
        outcome.problem = "; ".join(problems)
        return outcome
    scoring = faithfulness.score(output)
    outcome.verdict = Verdict(status=RowState.SCORED, output=output, derived=scoring.derived, headline=scoring.headline,
                              passed=scoring.passed, label=scoring.label, tag=scoring.tag,
                              **provenance(faithfulness, client.model, case.triple))
    outcome.claims = len(entries)
    return outcome


def _tag(entries: list[dict[str, Any]]) -> str:
    """The faithfulness tag the verdicts of the claims give, by the rubric's own definitions."""
    verdicts = {entry["verdict"] for entry in entries}
    if not entries:
        return "No claims"
    if "contradicted" in verdicts:
        return "Contradicted"
    return "Unsupported" if "not_in_context" in verdicts else "Faithful"


async def compare(cases: list[Case], client: JudgeClient, rubrics: tuple[Rubric, Rubric, Rubric]) -> list[Compared]:
    """Each case judged both ways, one case at a time (the figures do not depend on the order)."""
    faithfulness, claims_rubric, verdicts_rubric = rubrics
    found = []
    for case in cases:
        one = await one_call(faithfulness, case, client)
        if one.verdict is not None and is_screened(one.verdict.flags):
            found.append(Compared(case, one, screened=True))
            continue
        found.append(Compared(case, one, await two_calls(faithfulness, claims_rubric, verdicts_rubric, case, client)))
    return found


def met(outcome: Outcome, expect: dict[str, Any]) -> bool:
    """Whether a design's verdict meets a golden's expectations, as `judgebot rubrics check` compares them."""
    if (verdict := outcome.scored) is None:
        return False
    values = {**flatten(verdict.output or {}), **verdict.derived, "headline": verdict.headline, "passed": verdict.passed}
    return not misses(expect, values)


def report(found: list[Compared]) -> list[str]:
    """The lines printed: each case, then the figures over the cases both designs scored."""
    lines = [f"{'case':<34} {'one call':<42} two calls"]
    for item in found:
        if item.screened:
            lines.append(f"{item.case.name[:34]:<34} failed by the content-free screen in both, no judge asked")
        else:
            lines.append(f"{item.case.name[:34]:<34} {item.one.shown():<42} {item.two.shown()}")
    for item in found:
        for design, outcome in (("one call", item.one), ("two calls", item.two)):
            if not item.screened and outcome.scored is None:
                lines.append(f"{item.case.name}: {design}: no verdict: {outcome.why}")
    both = [item for item in found if not item.screened and item.one.scored and item.two.scored]
    verdicts = [(one, two) for item in both if (one := item.one.scored) and (two := item.two.scored)]
    screened = sum(item.screened for item in found)
    missing = len(found) - screened - len(both)
    lines.append("")
    lines.append(f"cases           {len(found)}: {len(both)} scored by both designs, {screened} failed by the "
                 f"content-free screen (left out), {missing} without a verdict from one design or both (left out)")
    if not both:
        return lines
    n = len(both)
    passes = sum(one.passed == two.passed for one, two in verdicts)
    tags = sum(one.tag == two.tag for one, two in verdicts)
    gaps = [abs((one.headline or 0.0) - (two.headline or 0.0)) for one, two in verdicts]  # a scored verdict has one
    lines.append(f"pass/fail       the same in {passes} of {n} cases")
    lines.append(f"tag             the same in {tags} of {n} cases")
    lines.append(f"supported share mean absolute difference {statistics.fmean(gaps):.1f} points over {n} cases "
                 f"(largest {max(gaps):.0f})")
    lines.append(f"claims          one call {sum(item.one.claims or 0 for item in both)}, two calls "
                 f"{sum(item.two.claims or 0 for item in both)} in all; the same number in "
                 f"{sum(item.one.claims == item.two.claims for item in both)} of {n} cases")
    goldens = [item for item in both if item.case.expect is not None]
    if goldens:
        lines.append(f"goldens met     one call {sum(met(item.one, item.case.expect or {}) for item in goldens)} of "
                     f"{len(goldens)}, two calls {sum(met(item.two, item.case.expect or {}) for item in goldens)} of "
                     f"{len(goldens)}")
    lines.append(f"tokens          one call {sum(item.one.tokens for item in both)} in {sum(item.one.requests for item in both)} "
                 f"requests, two calls {sum(item.two.tokens for item in both)} in "
                 f"{sum(item.two.requests for item in both)} (as the judge's replies counted them)")
    return lines


async def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", help="the judge model (else JUDGE_MODEL)")
    parser.add_argument("--rows", type=Path, help="a CSV file of question, context and answer columns (else the "
                        "faithfulness rubric's goldens)")
    args = parser.parse_args(argv)
    settings = Settings()
    faithfulness = load_rubrics(settings.rubrics_dir).get("faithfulness")
    rubrics = (faithfulness, load_rubric(RUBRICS / "faithfulness-claims.yaml"),
               load_rubric(RUBRICS / "faithfulness-verdicts.yaml"))
    cases = file_cases(args.rows) if args.rows else golden_cases(faithfulness)
    async with judge_client_from(settings, model=args.judge) as client:
        lines = report(await compare(cases, client, rubrics))
    print(f"judge           {client.model}; rubric {faithfulness.name} {faithfulness.version} "
          f"({faithfulness.source or 'shipped'})")
    print("\n".join(lines))
    return lines


if __name__ == "__main__":
    asyncio.run(main())
