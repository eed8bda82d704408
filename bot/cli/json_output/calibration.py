"""`judgebot calibration` as a `--json` document: how far the judge agrees with people's labels of a rubric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.json_output import Document, UtcTime
from bot.cli.json_output.agreement import CalibrationFigures, DoubtFigures, JudgeNow, PassFailAgreement

if TYPE_CHECKING:
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
