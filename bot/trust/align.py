"""Aligning a rubric with people's labels: worked examples picked from the cases where people corrected the judge,
their notes offered as guidelines, and the gain measured honestly, by cross-validation on cases the examples never
came from."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.errors import RubricError
from bot.records import RowState
from bot.rubric import Rubric
from bot.rubric.examples import EXAMPLE_KINDS, Example, check_examples
from bot.rubric.fields import leaves
from bot.store import Judgment
from bot.trust.align_report import AlignCase, AlignReport, report
from bot.trust.drift import CheckCase, case_count
from bot.trust.labels import Completed, complete
from bot.yaml_text import dump_yaml

MIN_LABELS, MIN_CORRECTIONS = 20, 5  # fewer distinct cases say too little to align on
DEFAULT_FOLDS, DEFAULT_EXAMPLES = 5, 6


def question_of(case: CheckCase) -> str:
    """The question a labeled row asks, whitespace aside: what a fold is dealt by."""
    return " ".join(case.row.question.split())


def folds_of(cases: Sequence[CheckCase], rubric: Rubric, k: int) -> list[AlignCase]:
    """The cases dealt into `k` folds by the hash of their question: every answer to one question (and every
    person's label of one case) is in the same fold, so no held-out case shares its question with an example from
    another fold; a rerun deals them alike. Each comes with what the person's own values say."""
    keyed = sorted({question_of(case) for case in cases}, key=lambda text: hashlib.sha256(text.encode()).hexdigest())
    folds = {question: index % k for index, question in enumerate(keyed)}
    return [AlignCase(case, complete(case.human, rubric), folds[question_of(case)], case.note) for case in cases]


def disagrees(judgment: Judgment | None, human: Completed) -> bool:
    """Whether a person's label contradicts a verdict: pass/fail, or the tag, where the label gives them."""
    if judgment is None or judgment.status != RowState.SCORED:
        return False
    return ((human.passed is not None and judgment.passed is not None and human.passed != judgment.passed)
            or (human.tag is not None and judgment.tag is not None and human.tag != judgment.tag))


def example_of(case: AlignCase, rubric: Rubric) -> Example | None:
    """A case as a worked example: the person's values of the fields an example can give; None if they give none
    or break the rubric's rules."""
    fields = {path for path, spec in leaves(rubric.output) if spec.type in EXAMPLE_KINDS}
    expected = {path: value for path, value in case.human.values.items() if path in fields and value is not None}
    if not expected:
        return None
    row = case.case.row
    example = Example(question=row.question, reference=row.reference if rubric.uses_reference else "",
                      answer=row.answer, context=row.context if rubric.uses_context else None,
                      expected=expected, note=case.note)
    try:
        check_examples([example], rubric.output, rubric.rules)
    except RubricError:
        return None
    return example


def pick_examples(corrections: Sequence[AlignCase], rubric: Rubric, limit: int) -> list[Example]:
    """Up to `limit` examples from corrected cases: short texts first, varied across the values people gave (one
    of each in turn), never two of one question."""
    made = [(case, example) for case in corrections if (example := example_of(case, rubric)) is not None]
    made.sort(key=lambda pair: (len(pair[0].case.row.question) + len(pair[0].case.row.answer), pair[0].line))
    chosen: list[Example] = []
    questions: set[str] = set()
    used: Counter[str] = Counter()
    while len(chosen) < limit:
        fresh = [(case, example) for case, example in made if example.question not in questions]
        if not fresh:
            break
        case, example = min(fresh, key=lambda pair: used[_kind(pair[1])])  # the least shown kind, shortest first
        chosen.append(example)
        questions.add(example.question)
        used[_kind(example)] += 1
    return chosen


def _kind(example: Example) -> str:
    return repr(sorted(example.expected.items()))


def candidate_rubric(rubric: Rubric, examples: list[Example], guidelines: list[str] | None = None, *,
                     name: str | None = None, version: str | None = None) -> Rubric:
    """The rubric with these examples (and guidelines) in place of its own, under another name and version if
    given; its hash differs, so its verdicts are never taken for the rubric's."""
    data = rubric.model_dump(mode="json")
    data["examples"] = [example.model_dump(mode="json", exclude_none=True) for example in examples]
    if guidelines is not None:
        data["guidelines"] = guidelines
    if name is not None:
        data["name"], data["aliases"] = name, []
    if version is not None:
        data["version"] = version
    return Rubric.model_validate(data)


def next_version(version: str) -> str:
    """The version after `version`: its last number one up ("1.0" -> "1.1"), else ".1" added."""
    found = re.search(r"(\d+)(?!.*\d)", version)
    if found is None:
        return f"{version}.1"
    return f"{version[:found.start()]}{int(found.group(1)) + 1}{version[found.end():]}"


def guidelines_from(notes: Sequence[str | None]) -> list[str]:
    """People's notes with their corrections, as candidate guidelines: each once, in one line, shortest first."""
    lines = {" ".join(note.split()) for note in notes if note and note.strip()}
    return sorted(lines, key=lambda line: (len(line), line))



Judge = Callable[[Rubric, list[CheckCase], str, str], Awaitable[dict[int, Judgment] | None]]


@dataclass
class Aligned:
    """What alignment found: the held-out figures, the corrections, the candidate to keep and people's notes."""

    report: AlignReport
    corrections: list[AlignCase]
    candidate: Rubric
    notes: list[str]
    folds: int


async def cross_validate(cases: Sequence[CheckCase], rubric: Rubric, *, folds: int, examples: int,
                         judge: Judge, name: str | None = None) -> Aligned | str | None:
    """Judge the labeled cases with the rubric as it is, then each fold's held-out cases with a candidate whose
    examples come from the other folds' corrections; the figures and the candidate with examples from every
    correction (under `name`, else the rubric's own, at the next version). `judge(rubric, cases, what, lead)` judges
    (None: its cost was not agreed, and None is returned); a sentence when there are too few corrections to learn
    from."""
    aligned = folds_of(cases, rubric, folds)
    count = case_count(cases)
    labels = f" ({len(cases)} labels)" if len(cases) != count else ""
    before = await judge(rubric, [case.case for case in aligned], "the rubric as it is",
                         f"Aligning {rubric.name} on {count} labeled cases{labels}: first the rubric as it is (the "
                         "candidate then judges each case once more)")
    if before is None:
        return None
    corrections = [case for case in aligned if disagrees(before.get(case.line), case.human)]
    corrected = case_count([case.case for case in corrections])  # a case several people corrected is one
    if corrected < MIN_CORRECTIONS:
        return (f"The judge disagrees with people on {corrected} of {count} labeled cases: too few "
                f"corrections to learn from (it takes {MIN_CORRECTIONS}).")
    after: dict[int, Judgment] = {}
    for fold in range(folds):
        held_out = [case for case in aligned if case.fold == fold]
        if not held_out:
            continue
        chosen = pick_examples([case for case in corrections if case.fold != fold], rubric, examples)
        judged = await judge(candidate_rubric(rubric, chosen), [case.case for case in held_out],
                             f"fold {fold + 1} of {folds}", f"Fold {fold + 1} of {folds}: {len(held_out)} held-out "
                             f"cases with {len(chosen)} examples from the other folds")
        if judged is None:
            return None
        after.update(judged)
    final = pick_examples(corrections, rubric, examples)
    candidate = candidate_rubric(rubric, final, name=name, version=next_version(rubric.version))
    return Aligned(report(aligned, before, after, rubric, corrected), corrections, candidate,
                   guidelines_from([case.note for case in corrections]), folds)


def candidate_file(aligned: Aligned, rubric: Rubric, day: str) -> str:
    """The candidate as a rubric file: a header saying where it came from and its figures, people's notes as
    guidelines to consider (commented out: a guideline is not measured until it is in use), then the rubric."""
    candidate, found = aligned.candidate, aligned.report
    data = candidate.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude={"examples"})
    data["examples"] = [example.model_dump(mode="json", exclude_none=True) for example in candidate.examples]
    header = [f"# {candidate.name} {candidate.version}: {rubric.name} {rubric.version} with {len(candidate.examples)} "
              f"examples from people's corrections (judgebot align, {day}).",
              f"# Held out by {aligned.folds}-fold cross-validation (folds by question) over {found.n} labeled "
              f"cases: agreement on pass/fail {_share(found.before.agreement)} -> {_share(found.after.agreement)}, "
              f"fixed {len(found.fixed)}, broken {len(found.broken)}; on the tag {_share(found.before.tag_agreement)} "
              f"-> {_share(found.after.tag_agreement)}, fixed {len(found.tag_fixed)}, broken {len(found.tag_broken)}."]
    if aligned.notes:
        header.append("# People's notes, to consider as guidelines (a guideline is not measured until it is in use):")
        header += [f"#   - {note}" for note in aligned.notes]
    return "\n".join(header) + "\n" + dump_yaml(data)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"
