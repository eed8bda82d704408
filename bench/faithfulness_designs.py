"""How far faithfulness in one judge call agrees with the two-call design of RAGAS and DeepEval.

The two-call design asks for the answer's claims first, then for a verdict on each against the passages. Both designs
are measured on the faithfulness rubric's goldens or on rows of your own.

Each case is judged both ways by the configured judge (OPENAI_BASE_URL, OPENAI_API_KEY; --judge, else JUDGE_MODEL),
never cached and never stored:

- one call: the faithfulness rubric in use (the shipped one, or a team's copy in RUBRICS_DIR), as `judgebot judge`
  asks it, with one repair when a reply breaks its rules;
- two calls: bench/rubrics/faithfulness-claims.yaml splits the answer into claims (without the passages), then
  bench/rubrics/faithfulness-verdicts.yaml checks each numbered claim against the numbered passages (one repair when
  a reply breaks its rules; asked once more when it gives a verdict to another number of claims than there are).
  The claims and their verdicts make a faithfulness reply, its tag following from the verdicts, checked by the
  rubric's rules and scored by its formulas (the supported share; pass when no claim is contradicted and the share
  reaches the threshold).

Prints each case's tag, supported share, pass/fail and claims by each design, and why a design has no verdict; then,
over the cases both designs scored (each case once), in how many pass/fail and the tag agree, the mean absolute
difference of the share and the claims each found; the goldens each design meets (one without a verdict meets
none); and the input and output tokens each spent. A case the content-free screen fails is failed by both designs
before any judge is asked: it is listed and left out. Run by hand, with a judge of your own:

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
from bot.csvfiles.rows import CsvRow
from bot.errors import FormulaError, JudgebotError
from bot.judge.content_free import is_screened
from bot.judge.judgment import judge
from bot.judge.prompt import provenance
from bot.llm.client import JudgeClient
from bot.llm.configured import judge_client_from
from bot.records import RowState, Triple, Verdict
from bot.rubric import Rubric, load_rubrics, misses
from bot.rubric.rubric_file import load_rubric
from bot.runs.goldens import golden_texts, verdict_values

RUBRICS = Path(__file__).resolve().parent / "rubrics"


@dataclass(frozen=True)
class Case:
    """One case to judge both ways: a golden (with what it expects) or a row of a file."""

    name: str
    triple: Triple
    expect: dict[str, Any] | None = None


@dataclass
class Outcome:
    """One design's verdict on a case, with its claims and what its requests spent, or why it has none."""

    verdict: Verdict | None = None
    claims: int | None = None
    problem: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    requests: int = 0

    def spent(self, verdict: Verdict) -> Verdict:
        """Count a judge call's requests and tokens; the verdict, for chaining."""
        self.tokens_in += verdict.tokens_in
        self.tokens_out += verdict.tokens_out
        self.requests += verdict.attempts
        return verdict

    @property
    def scored(self) -> Verdict | None:
        """The design's scored verdict; None when it has none."""
        verdict = self.verdict
        return verdict if self.problem is None and verdict is not None and verdict.status == RowState.SCORED else None

    @property
    def why(self) -> str:
        """Why the design has no verdict."""
        if self.problem is not None:
            return self.problem
        return (self.verdict.error or str(self.verdict.status)) if self.verdict is not None else "not asked"

    def shown(self) -> str:
        """The verdict in a few words: tag, share, pass/fail, claims."""
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
    return [Case(golden.name, golden_texts(golden), golden.expect) for golden in rubric.goldens]


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
    """The rubric's verdict, as `judgebot judge` asks it."""
    outcome = Outcome()
    outcome.verdict = outcome.spent(await judge(rubric, case.triple, client))
    if outcome.verdict.status == RowState.SCORED:
        outcome.claims = len((outcome.verdict.output or {}).get("claims") or [])
    return outcome


async def two_calls(faithfulness: Rubric, designs: tuple[Rubric, Rubric], case: Case, client: JudgeClient) -> Outcome:
    """The claims first, then each numbered claim against the passages; put together as a faithfulness reply, checked
    by its rules and scored by its formulas."""
    claims_rubric, verdicts_rubric = designs
    outcome = Outcome()
    split = outcome.spent(await judge(claims_rubric, case.triple.model_copy(update={"context": None}), client))
    if split.status != RowState.SCORED or is_screened(split.flags) or "claims" not in (split.output or {}):
        outcome.problem = f"claims call: {split.error or split.label or split.status}"
        return outcome
    claims = [" ".join(claim.split()) for claim in (split.output or {})["claims"]]  # one a line when numbered
    entries: list[dict[str, Any]] = []
    if claims:
        found = await _verdicts(verdicts_rubric, case, claims, client, outcome)
        if isinstance(found, str):
            outcome.problem = f"verdicts call: {found}"
            return outcome
        entries = [{"claim": claim, "verdict": found[number]["verdict"], "passage": found[number]["passage"]}
                   for number, claim in enumerate(claims, 1)]
    outcome.verdict, outcome.problem = _scored(faithfulness, case, entries, client.model)
    outcome.claims = len(entries)
    return outcome


async def _verdicts(rubric: Rubric, case: Case, claims: list[str], client: JudgeClient,
                    outcome: Outcome) -> dict[int, dict[str, Any]] | str:
    """Each claim's verdict by its number, or why there is none; asked once more when the reply gives a verdict to
    another number of claims than there are (the rubric's rules cannot see how many there are)."""
    numbered = "\n".join(f"{number}. {claim}" for number, claim in enumerate(claims, 1))
    found: dict[int, dict[str, Any]] = {}
    for _ in range(2):
        checked = outcome.spent(await judge(rubric, case.triple.model_copy(update={"answer": numbered}), client))
        if checked.status != RowState.SCORED or checked.output is None:
            return str(checked.error or checked.status)
        found = {entry["claim"]: entry for entry in checked.output["verdicts"]}
        if sorted(found) == list(range(1, len(claims) + 1)):
            return found
    return f"{len(found)} verdicts for {len(claims)} claims, twice"


def _scored(faithfulness: Rubric, case: Case, entries: list[dict[str, Any]], judge_model: str
            ) -> tuple[Verdict | None, str | None]:
    """The claims and their verdicts as a faithfulness reply, checked by its rules and scored by its formulas; or why
    it cannot be."""
    reply = {"claims": entries, "result_tag": _tag(entries)}
    output, problems = faithfulness.validate_reply(reply, passages=len(case.triple.context or ()))
    if output is None or problems:
        return None, "; ".join(problems)
    try:
        scoring = faithfulness.score(output)
    except FormulaError as err:
        return None, f"the rubric's formulas: {err}"
    return Verdict(status=RowState.SCORED, output=output, derived=scoring.derived, headline=scoring.headline,
                   passed=scoring.passed, label=scoring.label, tag=scoring.tag,
                   **provenance(faithfulness, judge_model, case.triple)), None


def _tag(entries: list[dict[str, Any]]) -> str:
    """The faithfulness tag the verdicts of the claims give, by the rubric's own definitions."""
    verdicts = {entry["verdict"] for entry in entries}
    if not entries:
        return "No claims"
    if "contradicted" in verdicts:
        return "Contradicted"
    return "Unsupported" if "not_in_context" in verdicts else "Faithful"


async def compare(cases: list[Case], client: JudgeClient, faithfulness: Rubric,
                  designs: tuple[Rubric, Rubric]) -> list[Compared]:
    """Each case judged both ways, one case at a time (the figures do not depend on the order)."""
    found = []
    for case in cases:
        one = await one_call(faithfulness, case, client)
        if one.verdict is not None and is_screened(one.verdict.flags):
            found.append(Compared(case, one, screened=True))
            continue
        found.append(Compared(case, one, await two_calls(faithfulness, designs, case, client)))
    return found


def met(outcome: Outcome, expect: dict[str, Any]) -> bool:
    """Whether a design's verdict meets a golden's expectations, as `judgebot rubrics check` compares them; a design
    without a verdict meets none."""
    verdict = outcome.scored
    return verdict is not None and not misses(expect, verdict_values(verdict))


def case_lines(found: list[Compared]) -> list[str]:
    """Each case's line, then why a design has no verdict."""
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
    return lines


def figures(found: list[Compared]) -> list[str]:
    """The figures: over the cases both designs scored, each once; the goldens each meets; what each spent."""
    asked = [item for item in found if not item.screened]
    pairs = [(item, one, two) for item in asked if (one := item.one.scored) and (two := item.two.scored)]
    lines = [f"cases           {len(found)}: {len(pairs)} scored by both designs, {len(found) - len(asked)} failed by "
             f"the content-free screen (left out), {len(asked) - len(pairs)} without a verdict from one design or both "
             "(left out)"]
    if pairs:
        n = len(pairs)
        gaps = [abs((one.headline or 0.0) - (two.headline or 0.0)) for _, one, two in pairs]
        lines += [f"pass/fail       the same in {sum(one.passed == two.passed for _, one, two in pairs)} of {n} cases",
                  f"tag             the same in {sum(one.tag == two.tag for _, one, two in pairs)} of {n} cases",
                  f"supported share mean absolute difference {statistics.fmean(gaps):.1f} points over {n} cases "
                  f"(largest {max(gaps):.0f})",
                  f"claims          one call {sum(item.one.claims or 0 for item, _, _ in pairs)}, two calls "
                  f"{sum(item.two.claims or 0 for item, _, _ in pairs)} in all; the same number in "
                  f"{sum(item.one.claims == item.two.claims for item, _, _ in pairs)} of {n} cases"]
    goldens = [item for item in asked if item.case.expect is not None]
    if goldens:
        lines.append(f"goldens met     one call {sum(met(item.one, item.case.expect or {}) for item in goldens)} of "
                     f"{len(goldens)}, two calls {sum(met(item.two, item.case.expect or {}) for item in goldens)} of "
                     f"{len(goldens)} (the goldens a judge was asked; a design without a verdict meets none)")
    for design, outcomes in (("one call ", [item.one for item in asked]), ("two calls", [item.two for item in asked])):
        lines.append(f"{design}       {sum(o.tokens_in for o in outcomes)} input and {sum(o.tokens_out for o in outcomes)} "
                     f"output tokens in {sum(o.requests for o in outcomes)} requests (as the judge's replies counted "
                     f"them), over the {len(asked)} cases a judge was asked")
    return lines


def main() -> None:
    """Judge the cases both ways and print the lines; a problem (no judge to reach, a file that cannot be read) said
    in a sentence."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", help="the judge model (else JUDGE_MODEL)")
    parser.add_argument("--rows", type=Path, help="a CSV file of question, context and answer columns (else the "
                        "faithfulness rubric's goldens)")
    args = parser.parse_args()
    try:
        measure(args.judge, args.rows)
    except JudgebotError as err:
        sys.exit(f"faithfulness_designs: {err}")


def measure(judge_model: str | None, rows: Path | None) -> None:
    """The cases (the goldens, or the rows of a file) judged both ways by the judge, and the lines printed."""
    settings = Settings()
    faithfulness = load_rubrics(settings.rubrics_dir).get("faithfulness")
    designs = (load_rubric(RUBRICS / "faithfulness-claims.yaml"), load_rubric(RUBRICS / "faithfulness-verdicts.yaml"))
    cases = file_cases(rows) if rows else golden_cases(faithfulness)

    async def measured() -> list[Compared]:
        async with judge_client_from(settings, model=judge_model) as client:
            return await compare(cases, client, faithfulness, designs)

    found = asyncio.run(measured())
    print(f"judge           {judge_model or settings.judge_model}; rubric {faithfulness.name} {faithfulness.version} "
          f"({faithfulness.source or 'shipped'})")
    print("\n".join([*case_lines(found), "", *figures(found)]))


if __name__ == "__main__":
    main()
