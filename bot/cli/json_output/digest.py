"""`judgebot digest` as a `--json` document: a week's figures against the week before, and everything the digest
says besides."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bot.cli.json_output import Document, Interval, UtcTime
from bot.cli.json_output.agreement import DoubtFigures, PassFailAgreement
from bot.cli.json_output.history import ModelFigures, Spending

if TYPE_CHECKING:
    from bot.digest import Digest, Line
    from bot.trust.pairwise import Matchup


class WeekFigures(ModelFigures):
    """One model under test on one rubric over the period, against the week before."""

    week_before: ModelFigures | None
    """The same figures the week before; null when it had no judgment of them."""
    mean_headline_change: float | None
    """Mean headline less the week before's, in headline points; null when either has none."""
    pass_rate_change_points: float | None
    """Pass rate less the week before's, in percentage points."""
    error_rate: float | None
    """Share of the cases whose verdict was a judge's failure."""

    @classmethod
    def of_line(cls, line: Line) -> WeekFigures:
        """One line of a digest."""
        return cls(**dict(ModelFigures.of(line.now)),
                   week_before=None if line.before is None else ModelFigures.of(line.before),
                   mean_headline_change=line.change, pass_rate_change_points=line.pass_change,
                   error_rate=line.error_rate)


class WinRate(Document):
    """B against A over the pairwise runs' pairs of the period (each pair judged in both orders, ties split)."""

    a: str
    """Model A (or the file's first answer column)."""
    b: str
    """Model B."""
    pairs: int
    """Pairs with an outcome."""
    b_won_pairs: int
    """Pairs B won."""
    a_won_pairs: int
    """Pairs A won."""
    tied_pairs: int
    """Ties, inconsistent pairs among them."""
    inconsistent_pairs: int
    """Pairs whose winner changed with the order of the answers (counted as ties)."""
    win_rate: float | None
    """B's win rate, ties split, from 0 to 1."""
    interval: Interval | None
    """Its 95 % interval [low, high]."""
    sign_test_p: float | None
    """The exact sign test's p over the pairs with a winner."""

    @classmethod
    def of(cls, match: Matchup) -> WinRate:
        """A matchup of the digest."""
        return cls(a=match.a, b=match.b, pairs=match.pairs, b_won_pairs=match.wins, a_won_pairs=match.losses,
                   tied_pairs=match.ties, inconsistent_pairs=match.inconsistent, win_rate=match.win_rate,
                   interval=match.interval, sign_test_p=match.sign_p)


class JudgeChange(Document):
    """The judge itself changed during the period."""

    what: str
    """"judge model", or "rubric NAME" (its version or text)."""
    before: str
    """What it was."""
    after: str
    """What it became."""
    since: UtcTime
    """From when."""


class LabelTrust(Document):
    """One rubric's labels of the week against the weeks before: how far to trust the judge."""

    rubric: str
    """The rubric's name."""
    this_week: PassFailAgreement
    """People's labels of this period's judgments."""
    weeks_before: PassFailAgreement
    """The labels of the 4 weeks before, together."""
    doubts: list[DoubtFigures]
    """What to doubt."""


class ReviewQueue(Document):
    """The channel's review queue."""

    open_cases: int
    """Cases waiting for a label."""
    labeled_cases: int
    """Cases labeled during the period."""
    oldest_queued_at: UtcTime | None
    """When the oldest open case was queued."""


class JudgesAmong(Document):
    """How far a rubric's judges (a jury's members, or one judge's samples) agree among themselves."""

    rubric: str
    """The rubric's name."""
    among: Literal["judges", "samples"]
    """judges: a jury's members, each by its own verdict; samples: one judge's samples."""
    outcome: Literal["tag", "pass_fail"]
    """What outcome_alpha is on: the tag, or pass/fail for a rubric without one."""
    outcome_alpha: float | None
    """Krippendorff's alpha on the outcome."""
    outcome_rows: int
    """Rows it is over (rows with two values or more)."""
    headline_alpha: float | None
    """Krippendorff's alpha on the headline (interval)."""
    headline_rows: int
    """Rows it is over."""


class Example(Document):
    """A judgment worth a look."""

    judgment_id: int
    """The judgment's id."""
    model: str | None
    """The model under test."""
    rubric: str
    """The rubric's name."""
    headline: float
    """Its headline, 0 to 100 (a regression: this week's)."""
    headline_before: float | None
    """A regression: the question's headline the week before; null otherwise."""
    row: int | None
    """The row of its file, if any."""
    question: str
    """The question."""


class DigestDocument(Document):
    """`judgebot digest --json`: a Slack channel's (or the terminal's) digest of one week."""

    channel: str | None
    """The Slack channel id; null: the judgments made in a terminal."""
    week: str
    """The ISO week, such as 2026-W46."""
    start: UtcTime
    """Where the week begins (local midnight, in UTC)."""
    end: UtcTime
    """Where it ends (exclusive)."""
    timezone: str
    """The timezone the week's days begin in."""
    cases: int
    """Cases evaluated during the week, each once."""
    replaced_judgments: int
    """Judgments of those cases that a later one replaced: not counted."""
    error_cases: int
    """Cases whose only verdicts were a judge's failures."""
    figures: list[WeekFigures]
    """One entry per model under test and rubric."""
    pairwise: list[WinRate]
    """Win rates of the pairwise runs of the week."""
    spend: Spending | None
    """What the week's judgments cost."""
    judge_changes: list[JudgeChange]
    """The judge changed during the week."""
    trust: list[LabelTrust]
    """Per rubric, how far people's labels say the judge can be trusted."""
    review_queue: ReviewQueue | None
    """The channel's review queue."""
    judges_among_themselves: list[JudgesAmong]
    """Per rubric judged several times a row, how far the judges agree."""
    regressions: list[Example]
    """Questions that scored lower than the week before, biggest drop first."""
    lowest: list[Example]
    """The lowest scores of the week."""
    warnings: list[str]
    """The judge's coming shutdown, and the like."""

    @classmethod
    def of(cls, digest: Digest, timezone: str) -> DigestDocument:
        """The document of a digest built for the terminal."""
        period = digest.period
        queue = None if digest.queue is None else ReviewQueue(
            open_cases=digest.queue.open, labeled_cases=digest.queue.labeled, oldest_queued_at=digest.queue.oldest)
        return cls(
            channel=digest.channel_id, week=period.week, start=period.start, end=period.end, timezone=timezone,
            cases=digest.cases, replaced_judgments=digest.rejudged, error_cases=digest.errors,
            figures=[WeekFigures.of_line(line) for line in digest.lines],
            pairwise=[WinRate.of(match) for match in digest.pairwise],
            spend=None if digest.spend is None else Spending.of(digest.spend),
            judge_changes=[JudgeChange(what=change.what, before=change.before, after=change.after, since=change.since)
                           for change in digest.changes],
            trust=[LabelTrust(rubric=found.rubric_name, this_week=PassFailAgreement.of(found.week),
                              weeks_before=PassFailAgreement.of(found.before),
                              doubts=[DoubtFigures.of(doubt) for doubt in found.doubts]) for found in digest.trust],
            review_queue=queue,
            judges_among_themselves=[
                JudgesAmong(rubric=name, among="judges" if alphas.jury else "samples",
                            outcome="tag" if tagged else "pass_fail", outcome_alpha=alphas.outcome.alpha,
                            outcome_rows=alphas.outcome.units, headline_alpha=alphas.headline.alpha,
                            headline_rows=alphas.headline.units) for name, alphas, tagged in digest.alphas],
            regressions=[Example(judgment_id=r.example.judgment_id, model=r.example.model_name,
                                  rubric=r.example.rubric_name, headline=r.after, headline_before=r.before,
                                  row=r.example.row_number, question=r.example.question) for r in digest.regressions],
            lowest=[Example(judgment_id=e.judgment_id, model=e.model_name, rubric=e.rubric_name, headline=e.headline,
                             headline_before=None, row=e.row_number, question=e.question) for e in digest.worst],
            warnings=list(digest.warnings))
