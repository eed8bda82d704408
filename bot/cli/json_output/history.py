"""`judgebot runs`, `history`, `stats` and `budget` as `--json` documents."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.cli.json_output import Document, UtcTime
from bot.cli.json_output.agreement import PassFailAgreement

if TYPE_CHECKING:
    from bot.store import Figures, Judgment, ListedJudgment, ListedRun, Run, Spend


class RunEntry(Document):
    """One run: a file, a triple, a check or a comparison judged."""

    id: int
    """The run's id (`judgebot resume ID`, `judgebot compare ID ID`)."""
    created_at: UtcTime
    """When it was started."""
    status: str
    """loading, pending, running, paused, interrupted (its process is gone), done, cancelled or failed."""
    stop_reason: str | None
    """Why it stopped, when it did before the end."""
    rubric: str
    """The rubric's name."""
    rubric_version: str
    """The rubric's version."""
    judge_model: str
    """The judge model (or the jury's name)."""
    rows: int
    """Rows of the run."""
    source: str
    """Where it came from: cli, slack, mcp, check, ..."""
    source_name: str | None
    """The file's name, or what the run compares."""
    model: str | None
    """The model under test --model-name named, if any."""

    @classmethod
    def of(cls, run: Run | ListedRun) -> RunEntry:
        """A run as `judgebot runs` lists it."""
        return cls(id=run.id, created_at=run.created_at, status=run.status, stop_reason=run.stop_reason,
                   rubric=run.rubric_name, rubric_version=run.rubric_version, judge_model=run.judge_model,
                   rows=run.total_rows, source=run.source, source_name=run.source_name, model=run.model_name)


class RunsDocument(Document):
    """`judgebot runs --json`: the recent runs, newest first."""

    runs: list[RunEntry]
    """The runs."""


class JudgmentEntry(Document):
    """One judgment: a row's verdict."""

    id: int
    """The judgment's id."""
    run_id: int
    """The run it belongs to."""
    created_at: UtcTime
    """When its row was saved."""
    judged_at: UtcTime | None
    """When the judge answered; null while pending."""
    status: str
    """pending, scored, invalid (the reply broke the rubric's rules), error (the judge failed) or malformed."""
    rubric: str
    """The rubric's name."""
    rubric_version: str
    """The rubric's version."""
    judge_model: str
    """The judge model (or the jury's name)."""
    model: str | None
    """The model under test."""
    headline: float | None
    """The headline score, 0 to 100; null unless scored."""
    passed: bool | None
    """Whether it passed; null unless scored."""
    label: str | None
    """The verdict in words, such as "Correct · correctness 2/2"."""
    tag: str | None
    """The rubric's tag, such as Correct."""
    user_id: str | None
    """The Slack user who asked; null in a terminal."""
    question: str
    """The question (empty once RETENTION_DAYS removed the texts)."""

    @classmethod
    def of(cls, row: Judgment | ListedJudgment) -> JudgmentEntry:
        """A judgment as `judgebot history` lists it."""
        return cls(id=row.id, run_id=row.run_id, created_at=row.created_at, judged_at=row.judged_at,
                   status=row.status, rubric=row.rubric_name, rubric_version=row.rubric_version,
                   judge_model=row.judge_model, model=row.model_name, headline=row.headline, passed=row.passed,
                   label=row.label, tag=row.tag, user_id=row.user_id, question=row.question)


class HistoryDocument(Document):
    """`judgebot history --json`: the latest judgments of a Slack channel or of the terminal, newest first."""

    channel: str | None
    """The Slack channel id; null: the judgments made in a terminal."""
    judgments: list[JudgmentEntry]
    """The judgments."""


class ModelFigures(Document):
    """How one model under test did on one rubric, each case once with its latest verdict."""

    model: str | None
    """The model under test (null: rows that named none)."""
    rubric: str
    """The rubric's name."""
    cases: int
    """Cases evaluated (a case: rubric, question, reference, context, answer and model under test)."""
    scored_cases: int
    """Of them, cases whose verdict scored."""
    passed_cases: int
    """Of the scored cases, those that passed."""
    error_cases: int
    """Cases whose only verdicts were a judge's failures (an error, or a reply that broke the rubric's rules)."""
    unsure_cases: int
    """Scored cases whose several judgments (samples, a jury) disagreed."""
    replaced_judgments: int
    """Judgments of these cases that a later one replaced (re-reads, re-runs): not counted ("judged again")."""
    mean_headline: float | None
    """Mean headline of the scored cases, 0 to 100."""
    pass_rate: float | None
    """Share of the scored cases that passed, from 0 to 1."""
    unsure_rate: float | None
    """Share of the scored cases that are unsure; null when none is."""
    tag_cases: dict[str, int]
    """Scored cases per tag."""
    cases_by_judge_model: dict[str, int]
    """Cases per judge model of their verdict: more than one key means the verdicts mix judges."""
    cases_by_rubric_version: dict[str, int]
    """Cases per text of the rubric of their verdict ("2 (3f2a1c9)"): more than one key means they mix texts."""
    people: PassFailAgreement
    """How far people agree with the judge on these cases: every label, correction and vote."""

    @classmethod
    def of(cls, figures: Figures) -> ModelFigures:
        """The figures of one model and rubric, as `judgebot stats` shows them."""
        from bot.trust.people_agreement import people_agreement

        return cls(model=figures.model_name, rubric=figures.rubric_name, cases=figures.cases,
                   scored_cases=figures.scored, passed_cases=figures.passed, error_cases=figures.errors,
                   unsure_cases=figures.unsure, replaced_judgments=figures.rejudged,
                   mean_headline=figures.mean_headline, pass_rate=figures.pass_rate, unsure_rate=figures.unsure_rate,
                   tag_cases=figures.tags, cases_by_judge_model=figures.judges,
                   cases_by_rubric_version=figures.versions,
                   people=PassFailAgreement.of(people_agreement(figures.said)))


class StatsDocument(Document):
    """`judgebot stats --json`: per model under test and rubric, the figures of a Slack channel or of the terminal."""

    channel: str | None
    """The Slack channel id; null: the judgments made in a terminal."""
    days: int
    """The last N days (0: all time)."""
    since: UtcTime | None
    """Where the period begins; null: all time."""
    model: str | None
    """The model under test --model asked for, if any."""
    figures: list[ModelFigures]
    """One entry per model under test and rubric."""

    @classmethod
    def of(cls, found: Iterable[Figures], **scope: object) -> StatsDocument:
        """The stats of `found`, over the scope given (channel, days, since, model)."""
        return cls.model_validate({**scope, "figures": [ModelFigures.of(figures) for figures in found]})


class JudgeSpend(Document):
    """What one judge cost on one rubric."""

    rubric: str
    """The rubric's name."""
    judge_model: str
    """The judge model."""
    usd: float
    """USD billed, at the prices recorded with each judgment."""
    unpriced_judgments: int
    """Judgments of this judge whose price is unknown (not in usd)."""


class Spending(Document):
    """What judging cost over a time, per rubric and judge (a row judged again counts every time it was)."""

    usd: float
    """USD billed in all."""
    unpriced_judgments: int
    """Judgments whose judge's price is unknown."""
    by_judge: list[JudgeSpend]
    """Per rubric and judge, dearest first."""

    @classmethod
    def of(cls, spent: Spend) -> Spending:
        """A spend of the history."""
        return cls(usd=spent.usd, unpriced_judgments=spent.unpriced, by_judge=[
            JudgeSpend(rubric=rubric, judge_model=judge, usd=usd, unpriced_judgments=unpriced)
            for rubric, judge, usd, unpriced in spent.by_judge])


class BudgetDocument(Document):
    """`judgebot budget --json`: what the terminal's judging spent this month, against its limits."""

    month_start: UtcTime
    """The start of this calendar month (UTC)."""
    spent_usd: float
    """USD spent this month: the terminal's runs and the checks together."""
    monthly_budget_usd: float | None
    """JUDGE_MONTHLY_BUDGET; null when unset."""
    left_usd: float | None
    """What is left of it this month (0 when spent); null without a budget."""
    runs: Spending
    """The terminal's runs."""
    checks: Spending
    """Calibration checks, judge comparisons, alignments and pairwise runs: out of every channel's figures, in the
    budget."""
    confirm_above_usd: float
    """CONFIRM_ABOVE_USD: a run estimated above it asks before it starts."""
    confirm_above_requests: int
    """CONFIRM_ABOVE_REQUESTS: a run sending more requests than this to judges of unknown price asks first."""
