"""What alignment measured: the rubric and the candidate on the same held-out cases, against people's labels, the
cases each fixed and broke on pass/fail and on the tag, and McNemar's exact test over those cases."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.records import RowState
from bot.rubric import Rubric
from bot.store import Judgment, utcnow
from bot.trust.calibration import Calibration, LabeledVerdict, calibrate
from bot.trust.drift import CheckCase, case_of, verdict_pair
from bot.trust.labels import Completed, tag_order
from bot.trust.stats.mcnemar import by_chance, majority, mcnemar_p


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
    """The rubric and the candidate on the same held-out cases, against people's labels: the figures, and the cases
    each fixed and broke, on pass/fail and on the tag apart, with McNemar's exact test over the cases of each.

    A case several people labeled is one case, decided by most of them (an even split leaves it out of that test).
    """

    n: int  # held-out cases with a verdict of both
    corrections: int
    before: Calibration
    after: Calibration
    fixed: list[Changed] = field(default_factory=list)  # on pass/fail
    broken: list[Changed] = field(default_factory=list)
    p: float | None = None  # McNemar's over the cases fixed against broken on pass/fail
    tag_fixed: list[Changed] = field(default_factory=list)  # on the tag
    tag_broken: list[Changed] = field(default_factory=list)
    tag_p: float | None = None
    labels: int = 0  # held-out labels with a verdict of both
    unjudged: int = 0  # held-out labels without a verdict of both (a judge error): left out

    @property
    def improved_on(self) -> list[str]:
        """"pass/fail" and "the tag" where the candidate fixed more cases than it broke and McNemar's test, as
        printed, says it is no chance."""
        return [name for name, fixed, broken, p in (("pass/fail", self.fixed, self.broken, self.p),
                                                     ("the tag", self.tag_fixed, self.tag_broken, self.tag_p))
                if len(fixed) > len(broken) and not by_chance(p)]

    @property
    def worse_on(self) -> list[str]:
        """Where the candidate broke more cases than it fixed, not by chance."""
        return [name for name, fixed, broken, p in (("pass/fail", self.fixed, self.broken, self.p),
                                                     ("the tag", self.tag_fixed, self.tag_broken, self.tag_p))
                if len(broken) > len(fixed) and not by_chance(p)]

    @property
    def improved(self) -> bool:
        """Whether the candidate agrees with people more often on pass/fail or on the tag, not by chance, and is not
        worse on the other."""
        return bool(self.improved_on) and not self.worse_on


def _said(judgment: Judgment) -> str:
    return f"{judgment.tag or ''} ({'pass' if judgment.passed else 'fail'})".strip()


@dataclass
class _HeldOut:
    """One held-out case: its labels' rows, most people's pass/fail and tag, and both verdicts."""

    first: AlignCase
    passed: bool | None
    tag: str | None
    old: Judgment
    new: Judgment

    def said(self) -> str:
        verdict = "" if self.passed is None else f" ({'pass' if self.passed else 'fail'})"
        return f"{self.tag or ''}{verdict}".strip() or "-"


def _most(values: Sequence[str]) -> str | None:
    """The value most labels give; None for none, or a tie at the top."""
    ranked = Counter(values).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def report(cases: Sequence[AlignCase], before: dict[int, Judgment], after: dict[int, Judgment],
           rubric: Rubric, corrections: int) -> AlignReport:
    """The rubric's verdicts and the candidate's on the same held-out cases, against the people's labels."""
    now, tags = utcnow(), tag_order(rubric)
    pairs_before: list[LabeledVerdict] = []
    pairs_after: list[LabeledVerdict] = []
    found = AlignReport(0, corrections, calibrate([], tags=tags), calibrate([], tags=tags))
    grouped: dict[str, list[tuple[AlignCase, Judgment, Judgment]]] = {}
    for case in cases:
        old, new = before.get(case.line), after.get(case.line)
        if old is None or new is None or old.status != RowState.SCORED or new.status != RowState.SCORED:
            found.unjudged += 1
            continue
        key, human = case_of(case.case), case.human
        for judgment, into in ((old, pairs_before), (new, pairs_after)):
            into.append(verdict_pair(judgment.passed, judgment.tag, judgment.judge_model, human.passed, human.tag, now,
                                     judgment.rubric_hash, key))
        grouped.setdefault(key, []).append((case, old, new))
    for labels in grouped.values():
        first, old, new = labels[0]  # the rows of one case were judged alike: one verdict of each
        held = _HeldOut(first, majority(case.human.passed for case, _, _ in labels if case.human.passed is not None),
                        _most([case.human.tag for case, _, _ in labels if case.human.tag is not None]), old, new)
        _count(found.fixed, found.broken, held, held.passed, old.passed, new.passed)
        _count(found.tag_fixed, found.tag_broken, held, held.tag, old.tag, new.tag)
    found.n, found.labels = len(grouped), len(pairs_before)
    found.before, found.after = calibrate(pairs_before, tags=tags), calibrate(pairs_after, tags=tags)
    found.p = mcnemar_p(len(found.fixed), len(found.broken)) if found.fixed or found.broken else None
    found.tag_p = mcnemar_p(len(found.tag_fixed), len(found.tag_broken)) if found.tag_fixed or found.tag_broken \
        else None
    return found


def _count(fixed: list[Changed], broken: list[Changed], held: _HeldOut, human: object, old: object,
           new: object) -> None:
    """A case fixed or broken on one figure (pass/fail, or the tag), where people and both verdicts give it."""
    if human is None or old is None or new is None or (old == human) == (new == human):
        return
    changed = Changed(held.first.line, held.first.case.row.question, held.said(), _said(held.old), _said(held.new))
    (fixed if new == human else broken).append(changed)


def verdict_text(found: AlignReport) -> str:
    """What the held-out figures say, in one sentence that agrees with the p-values printed beside it."""
    if found.improved:
        return f"The candidate agrees with people more often on {' and '.join(found.improved_on)}, and not by chance."
    if found.worse_on:
        return (f"The candidate agrees with people less often on {' and '.join(found.worse_on)}, and not by chance: "
                "keep the rubric as it is.")
    return "No improvement that could not be chance: keep the rubric as it is, or label more cases."
