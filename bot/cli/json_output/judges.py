"""`judgebot judges compare` as a `--json` document: a candidate judge against the judge in use, on people's labels
and on recent judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.json_output import Document, Interval
from bot.cli.json_output.agreement import CalibrationFigures, KappaFigures

if TYPE_CHECKING:
    from bot.store import Judgment
    from bot.trust.judge_comparison import HistorySide, LabeledSide


class AgainstPeople(Document):
    """Both judges against people's labels, on the labeled cases both scored."""

    labels_from: str
    """The labels file's name, or the Slack channel id."""
    judge_in_use: CalibrationFigures
    """The judge in use against the labels."""
    candidate: CalibrationFigures
    """The candidate against the same labels."""
    paired_cases: int
    """Distinct cases both scored that people decided pass or fail: McNemar's pairs."""
    candidate_right_cases: int
    """Cases the candidate gets right by people's majority, and the judge in use does not."""
    judge_in_use_right_cases: int
    """Cases the judge in use gets right, and the candidate does not."""
    split_cases: int
    """Cases people split evenly on: left out of McNemar's test."""
    mcnemar_p: float | None
    """McNemar's exact p over the cases only one judge got right; null when they never differ."""
    unscored_cases: int
    """Labeled cases one of them gave no verdict: left out."""

    @classmethod
    def of(cls, labeled: LabeledSide, labels_from: str) -> AgainstPeople:
        """The labeled side of a comparison."""
        return cls(labels_from=labels_from, judge_in_use=CalibrationFigures.of(labeled.old),
                   candidate=CalibrationFigures.of(labeled.new), paired_cases=labeled.paired,
                   candidate_right_cases=labeled.new_right, judge_in_use_right_cases=labeled.old_right,
                   split_cases=labeled.split, mcnemar_p=labeled.p, unscored_cases=labeled.unscored)


class Verdict(Document):
    """One judge's verdict of a row."""

    passed: bool | None
    """Whether it passed."""
    tag: str | None
    """Its tag."""
    headline: float | None
    """Its headline, 0 to 100."""

    @classmethod
    def of(cls, judgment: Judgment) -> Verdict:
        """A judgment's verdict."""
        return cls(passed=judgment.passed, tag=judgment.tag,
                   headline=None if judgment.headline is None else float(judgment.headline))


class Flip(Document):
    """A recent judgment the two judges pass or fail differently."""

    row: int
    """Its row among the compared rows."""
    question: str
    """The question."""
    model: str | None
    """The model under test."""
    judge_in_use: Verdict
    """The judge in use's verdict."""
    candidate: Verdict
    """The candidate's verdict."""


class JudgeTagMove(Document):
    """Rows whose tag is one by the judge in use and another (or the same) by the candidate."""

    judge_in_use_tag: str
    """The judge in use's tag ("(none)": none)."""
    candidate_tag: str
    """The candidate's tag."""
    rows: int
    """Rows so tagged."""


class AgainstEachOther(Document):
    """The two judges on the same recent judgments, picked at random and judged again by both."""

    rows: int
    """Rows both scored."""
    pass_fail_rows: int
    """Of them, rows with pass/fail from both."""
    same_pass_fail_rows: int
    """Rows both pass or both fail."""
    agreement: float | None
    """Share of pass_fail_rows they agree on, from 0 to 1."""
    interval: Interval | None
    """Its 95 % Wilson interval [low, high]."""
    kappa: KappaFigures
    """Cohen's kappa between them on pass/fail."""
    to_fail_rows: int
    """Rows the judge in use passes and the candidate fails."""
    to_pass_rows: int
    """Rows the judge in use fails and the candidate passes."""
    headline_shift: float | None
    """The candidate's mean headline less the judge in use's, in points."""
    headline_shift_interval: Interval | None
    """Its 95 % t interval [low, high]."""
    unscored_rows: int
    """Rows one of them gave no verdict: left out."""
    tag_moves: list[JudgeTagMove]
    """The judge in use's tags against the candidate's."""
    flips: list[Flip]
    """The rows they pass or fail differently, the biggest headline change first."""

    @classmethod
    def of(cls, history: HistorySide) -> AgainstEachOther:
        """The history side of a comparison."""
        return cls(rows=history.n, pass_fail_rows=history.pass_n, same_pass_fail_rows=history.same_pass,
                   agreement=history.agreement, interval=history.interval, kappa=KappaFigures.of(history.kappa),
                   to_fail_rows=history.to_fail, to_pass_rows=history.to_pass, headline_shift=history.shift,
                   headline_shift_interval=history.shift_interval, unscored_rows=history.unscored,
                   tag_moves=[JudgeTagMove(judge_in_use_tag=old, candidate_tag=new, rows=count)
                              for (old, new), count in sorted(history.tags.items())],
                   flips=[Flip(row=flip.line, question=flip.question, model=flip.model,
                               judge_in_use=Verdict.of(flip.old), candidate=Verdict.of(flip.new))
                          for flip in history.flips])


class JudgesCompareDocument(Document):
    """`judgebot judges compare --json`: a candidate judge against the judge in use, before switching."""

    rubric: str
    """The rubric's name."""
    rubric_version: str
    """The rubric's version."""
    judge_in_use: str
    """The judge in use (--from, the channel's own judge, or JUDGE_MODEL)."""
    candidate: str
    """The candidate judge (--to)."""
    labeled_cases: int
    """Labeled cases both judged."""
    recent_judgments: int
    """Recent judgments both judged again."""
    against_people: AgainstPeople | None
    """Both against people's labels; null without labeled cases."""
    against_each_other: AgainstEachOther
    """Both on the recent judgments."""
