"""`judgebot calibration` and `calibration check` as `--json` documents: how far the judge agrees with people's labels
of a rubric, and how far today's judge does when it judges the labeled cases again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.json_output import Document, UtcTime
from bot.cli.json_output.agreement import CalibrationFigures, DoubtFigures, JudgeNow, PassFailAgreement

if TYPE_CHECKING:
    from bot.trust.calibration import Calibration
    from bot.trust.drift import Gate
    from bot.trust.report import RubricTrust


class CalibrationDocument(Document):
    """`judgebot calibration --json`: the judge against people's labels of one rubric."""

    rubric: str
    """The rubric's name."""
    channel: str | None
    """Only the labels of this Slack channel; null: every channel and the terminal."""
    judge_model: str | None
    """Only the labels of this judge's verdicts (--judge-model); null: every judge."""
    since: UtcTime | None
    """Labels of judgments from this moment on; null: all time."""
    labels: int
    """Labels found."""
    figures: CalibrationFigures | None
    """Every figure of the judge against them; null without labels."""
    at_random: PassFailAgreement | None
    """Pass/fail agreement on the cases picked at random for review (nobody chose them): the estimate to report;
    null when there is no such case."""
    judge_in_use: JudgeNow | None
    """What the figures are held against: the judge this terminal judges with, and the rubric file loaded."""
    doubts: list[DoubtFigures]
    """Why the figures may not say much of the judge in use."""

    @classmethod
    def of(cls, report: RubricTrust, **scope: object) -> CalibrationDocument:
        """The document of a rubric's trust report, over the scope given (rubric, channel, judge_model, since)."""
        figures = report.figures
        return cls.model_validate({
            **scope, "labels": figures.n, "figures": CalibrationFigures.of(figures) if figures.n else None,
            "at_random": None if report.random is None else PassFailAgreement.of(report.random),
            "judge_in_use": None if report.now is None else JudgeNow.of(report.now),
            "doubts": [DoubtFigures.of(doubt) for doubt in report.doubts]})


class GateCondition(Document):
    """One condition of a check's gate, with what was found."""

    asked: str
    """What the gate asks, naming the option that sets it."""
    found: str
    """The figure found."""
    met: bool
    """Whether the figure meets it."""


class GateFigures(Document):
    """What a check holds today's judge to, and whether it passes."""

    min_agreement: float
    """--min-agreement: the share of agreement on pass/fail to reach, from 0 to 1 (by the 95 % interval's lower bound,
    unless `point`)."""
    min_labels: int
    """--min-labels: the distinct labeled cases with pass/fail on both sides it takes."""
    min_kappa: float | None
    """--min-kappa: the kappa on pass/fail its 95 % interval's lower bound must reach; null: not asked."""
    point: bool
    """--point: agreement itself is held to min_agreement, not its interval's lower bound."""
    conditions: list[GateCondition]
    """Each condition, in the order the terminal prints them."""
    passed: bool
    """Whether every condition is met: the command then exits 0, else 1."""


class CalibrationCheckDocument(Document):
    """`judgebot calibration check --json`: people's labeled cases judged again by today's judge, its agreement with
    the labels beside that of the judges that gave the labeled verdicts, and the gate (exit 1 when it fails)."""

    rubric: str
    """The rubric's name."""
    rubric_version: str
    """The rubric's version."""
    labels_from: str
    """The labels file's name, or the Slack channel id."""
    run: int
    """The check's run id (its verdicts are kept apart from every channel's figures)."""
    judges: str
    """Today's judges, as the check names them: a model, or a jury, with the samples each gives a row."""
    cases: int
    """Labeled rows judged again."""
    unscored_cases: int
    """Of them, rows today's judge gave no verdict (a judge error or an invalid reply): left out of the figures."""
    today: CalibrationFigures | None
    """Today's judge against the labels; null when no row got a verdict."""
    labeled_verdicts: CalibrationFigures | None
    """The judges that gave the labeled verdicts against the same labels; null when the labels do not say what they
    gave (no judge_pass or judge_tag column)."""
    gate: GateFigures
    """What today's judge is held to, and whether it passes."""

    @classmethod
    def of(cls, current: Calibration, original: Calibration | None, gate: Gate, *, cases: int,
           **scope: object) -> CalibrationCheckDocument:
        """The document of a check's figures under `gate`, over the scope given (rubric, rubric_version,
        labels_from, run, judges)."""
        conditions = [GateCondition(asked=found.asked, found=found.found, met=found.met)
                      for found in gate.conditions(current)]
        return cls.model_validate({
            **scope, "cases": cases, "unscored_cases": cases - current.n,
            "today": CalibrationFigures.of(current) if current.n else None,
            "labeled_verdicts": CalibrationFigures.of(original) if original is not None and original.n else None,
            "gate": GateFigures(min_agreement=gate.min_agreement, min_labels=gate.min_labels, min_kappa=gate.min_kappa,
                                point=gate.point, conditions=conditions, passed=gate.passes(current))})
