"""Aligning a rubric with people's labels: worked examples picked from the cases where people corrected the judge,
their notes offered as guidelines, and the gain measured honestly, by cross-validation on cases the examples never
came from."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import yaml

from bot.errors import RubricError
from bot.records import RowState
from bot.rubric import Rubric
from bot.rubric.examples import EXAMPLE_KINDS, Example, check_examples
from bot.rubric.fields import leaves
from bot.store import Judgment, utcnow
from bot.trust.calibration import Calibration, LabeledVerdict, calibrate
from bot.trust.drift import CheckCase, case_of, verdict_pair
from bot.trust.labels import Completed, complete, tag_order
from bot.trust.mcnemar import mcnemar_p

MIN_LABELS, MIN_CORRECTIONS = 20, 5  # fewer say too little to align on
DEFAULT_FOLDS, DEFAULT_EXAMPLES = 5, 6


@dataclass
class AlignCase:
    """A labeled case as alignment reads it: its texts and label, the person's verdict, and its fold."""

    case: CheckCase
    human: Completed
    fold: int
    note: str | None = None

    @property
    def line(self) -> int:
        return self.case.row.line


def folds_of(cases: Sequence[CheckCase], rubric: Rubric, k: int) -> list[AlignCase]:
    """The cases dealt into `k` folds by the hash of their texts (the same case is always in the same fold, and a
    rerun deals them alike), each with what the person's own values say."""
    keyed = sorted(cases, key=lambda case: hashlib.sha256(case_of(case).encode("utf-8")).hexdigest())
    folds: dict[str, int] = {}
    for case in keyed:
        folds.setdefault(case_of(case), len(folds) % k)
    return [AlignCase(case, complete(case.human, rubric), folds[case_of(case)], case.note) for case in cases]


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
                      answer=row.answer, expected=expected, note=case.note)
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


@dataclass
class Changed:
    """A held-out case the candidate got right where the rubric got it wrong (fixed), or the other way (broken)."""

    line: int
    question: str
    human: str
    before: str
    after: str


@dataclass
class AlignReport:
    """The rubric and the candidate on held-out cases: figures against the labels, paired changes, McNemar."""

    n: int
    corrections: int
    before: Calibration
    after: Calibration
    fixed: list[Changed] = field(default_factory=list)
    broken: list[Changed] = field(default_factory=list)
    p: float | None = None  # McNemar's on the paired cases (fixed against broken)
    unjudged: int = 0  # held-out cases without a verdict of both (a judge error): left out

    @property
    def improved(self) -> bool:
        """Whether the candidate fixed more held-out cases than it broke, and McNemar's test says it is no chance."""
        return len(self.fixed) > len(self.broken) and self.p is not None and self.p < 0.05


def _said(judgment: Judgment) -> str:
    return f"{judgment.tag or ''} ({'pass' if judgment.passed else 'fail'})".strip()


def _human(human: Completed) -> str:
    verdict = "" if human.passed is None else f" ({'pass' if human.passed else 'fail'})"
    return f"{human.tag or ''}{verdict}".strip() or "-"


def report(cases: Sequence[AlignCase], before: dict[int, Judgment], after: dict[int, Judgment],
           rubric: Rubric, corrections: int) -> AlignReport:
    """The rubric's verdicts and the candidate's on the same held-out cases, against the people's labels."""
    now, tags = utcnow(), tag_order(rubric)
    pairs_before: list[LabeledVerdict] = []
    pairs_after: list[LabeledVerdict] = []
    found = AlignReport(0, corrections, calibrate([], tags=tags), calibrate([], tags=tags))
    for case in cases:
        old, new = before.get(case.line), after.get(case.line)
        if old is None or new is None or old.status != RowState.SCORED or new.status != RowState.SCORED:
            found.unjudged += 1
            continue
        human = case.human
        for judgment, into in ((old, pairs_before), (new, pairs_after)):
            into.append(verdict_pair(judgment.passed, judgment.tag, judgment.judge_model, human.passed, human.tag, now,
                                     judgment.rubric_hash, case_of(case.case)))
        wrong_before, wrong_after = disagrees(old, human), disagrees(new, human)
        if wrong_before != wrong_after:
            changed = Changed(case.line, case.case.row.question, _human(human), _said(old), _said(new))
            (found.fixed if wrong_before else found.broken).append(changed)
    found.n = len(pairs_before)
    found.before, found.after = calibrate(pairs_before, tags=tags), calibrate(pairs_after, tags=tags)
    found.p = mcnemar_p(len(found.fixed), len(found.broken)) if found.fixed or found.broken else None
    return found


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
    before = await judge(rubric, [case.case for case in aligned], "the rubric as it is",
                         f"Aligning {rubric.name} on {len(aligned)} labeled cases: first the rubric as it is (the "
                         "candidate then judges each case once more)")
    if before is None:
        return None
    corrections = [case for case in aligned if disagrees(before.get(case.line), case.human)]
    if len(corrections) < MIN_CORRECTIONS:
        return (f"The judge disagrees with people on {len(corrections)} of {len(aligned)} labeled cases: too few "
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
    return Aligned(report(aligned, before, after, rubric, len(corrections)), corrections, candidate,
                   guidelines_from([case.note for case in corrections]), folds)


def candidate_file(aligned: Aligned, rubric: Rubric, day: str) -> str:
    """The candidate as a rubric file: a header saying where it came from and its figures, people's notes as
    guidelines to consider (commented out: a guideline is not measured until it is in use), then the rubric."""
    candidate, found = aligned.candidate, aligned.report
    data = candidate.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude={"examples"})
    data["examples"] = [example.model_dump(mode="json", exclude_none=True) for example in candidate.examples]
    header = [f"# {candidate.name} {candidate.version}: {rubric.name} {rubric.version} with {len(candidate.examples)} "
              f"examples from people's corrections (judgebot align, {day}).",
              f"# Held out by {aligned.folds}-fold cross-validation over {found.n} labeled cases: agreement "
              f"{_share(found.before.agreement)} -> {_share(found.after.agreement)}, fixed {len(found.fixed)}, "
              f"broken {len(found.broken)}."]
    if aligned.notes:
        header.append("# People's notes, to consider as guidelines (a guideline is not measured until it is in use):")
        header += [f"#   - {note}" for note in aligned.notes]
    return "\n".join(header) + "\n" + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"
