"""How far the judge agrees with people (or with another judge), as `--json` documents give it: kappa, pass/fail
agreement, every calibration figure, and what to doubt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bot.cli.json_output import Document, Interval

if TYPE_CHECKING:
    from bot.trust.calibration import Agreement, Calibration, Gap
    from bot.trust.report import Doubt, JudgeInUse
    from bot.trust.stats.kappa import Kappa


class KappaFigures(Document):
    """Cohen's kappa beyond chance, or why there is none."""

    value: float | None
    """Kappa, from -1 to 1; null where it is undefined (no labels, or a side that used one class only)."""
    interval: Interval | None
    """Its 95 % interval [low, high]; null under the cases an interval needs."""
    labels: int
    """The (judge, person) pairs it is computed over."""
    cases: int
    """The distinct cases those pairs are of (each case weighs one)."""
    judge_one_class: str | None
    """The one class the judge used, where it used one only (then kappa is undefined)."""
    people_one_class: str | None
    """The one class people used, where they used one only."""

    @classmethod
    def of(cls, kappa: Kappa) -> KappaFigures:
        """The figures of a kappa."""
        return cls(value=kappa.value, interval=kappa.interval, labels=kappa.n, cases=kappa.cases,
                   judge_one_class=kappa.judge_only, people_one_class=kappa.human_only)


class PassFailAgreement(Document):
    """The judge's pass/fail against people's, each labeled case weighing one (its labels as shares of it)."""

    labels: int
    """Every label counted (some may give no pass/fail)."""
    pass_fail_labels: int
    """Labels with pass/fail on both sides."""
    agreeing_labels: int
    """Of them, labels where the judge and the person said the same."""
    cases: int
    """The distinct cases of those labels (a second person's label of a case is not another case)."""
    agreement: float | None
    """Share of cases where the judge and people agree, from 0 to 1; null without labels."""
    interval: Interval | None
    """Its 95 % interval [low, high]."""
    judge_pass_rate: float | None
    """Share of the cases the judge passes."""
    people_pass_rate: float | None
    """Share of the cases people pass."""
    judge_only_passed_cases: int
    """Cases the judge passes and most of their labels fail."""
    people_only_passed_cases: int
    """Cases most labels pass and the judge fails."""
    split_cases: int
    """Cases people split evenly on: left out of McNemar's test."""
    mcnemar_p: float | None
    """McNemar's exact p over the cases only one side passes; null when there are none."""
    kappa: KappaFigures
    """Cohen's kappa on pass/fail."""

    @classmethod
    def of(cls, agreement: Agreement) -> PassFailAgreement:
        """The pass/fail figures of a calibration or of the stats' people."""
        return cls(labels=agreement.n, pass_fail_labels=agreement.pass_n, agreeing_labels=agreement.pass_agree,
                   cases=agreement.pass_cases, agreement=agreement.agreement, interval=agreement.interval,
                   judge_pass_rate=agreement.judge_pass_rate, people_pass_rate=agreement.human_pass_rate,
                   judge_only_passed_cases=agreement.judge_only, people_only_passed_cases=agreement.human_only,
                   split_cases=agreement.split, mcnemar_p=agreement.mcnemar_p,
                   kappa=KappaFigures.of(agreement.kappa_pass))


class TagAgreement(Document):
    """The judge's tag against people's."""

    labels: int
    """Labels with a tag on both sides."""
    agreeing_labels: int
    """Of them, labels with the same tag on both sides."""
    agreement: float | None
    """Share of cases with the same tag, each case weighing one."""
    interval: Interval | None
    """Its 95 % interval [low, high]."""
    kappa: KappaFigures
    """Cohen's kappa on the tag."""


class Confusion(Document):
    """The judge's tags (rows) against people's (columns)."""

    classes: list[str]
    """The tags, in the rubric's order, then any other seen."""
    labels: list[list[int]]
    """labels[i][j]: labels where the judge said classes[i] and the person classes[j]."""


class ScoreGap(Document):
    """How the judge's scores on one numeric criterion differ from people's."""

    labels: int
    """Labels with the criterion on both sides."""
    cases: int
    """The distinct cases of those labels."""
    mean_abs_difference: float
    """Mean absolute difference, each case weighing one."""
    mean_signed_difference: float
    """Mean of the judge's score less the person's: above 0, the judge scores higher."""
    weighted_kappa: KappaFigures | None
    """Linearly weighted kappa, for an ordinal integer scale; null otherwise."""

    @classmethod
    def of(cls, gap: Gap) -> ScoreGap:
        """The figures of one criterion's gap."""
        return cls(labels=gap.n, cases=gap.cases, mean_abs_difference=gap.mean_abs,
                   mean_signed_difference=gap.mean_signed,
                   weighted_kappa=None if gap.kappa is None else KappaFigures.of(gap.kappa))


class LabelWeek(Document):
    """The labels given in one ISO week."""

    week: str
    """The ISO week, such as 2026-W46."""
    labels: int
    """Labels given that week."""
    cases: int
    """The distinct cases they are of."""
    agreement: float | None
    """Share of those cases where the judge and people agree on pass/fail."""


class CalibrationFigures(Document):
    """Every figure of the judge against a set of people's labels."""

    pass_fail: PassFailAgreement
    """Agreement on pass/fail, both sides' pass rates, McNemar's test and kappa."""
    tag: TagAgreement | None
    """Agreement on the tag; null for a rubric without one, or with no tag on both sides."""
    confusion: Confusion | None
    """The confusion matrix of tags; null without one."""
    score_gaps: dict[str, ScoreGap]
    """Per numeric criterion (by its path), the judge's scores against people's."""
    weeks: list[LabelWeek]
    """The labels per ISO week, oldest first."""
    labels_by_judge_model: dict[str, int]
    """Labels per judge model of the verdict they were given on, most first."""
    labels_by_rubric_hash: dict[str, int]
    """Labels per text of the rubric (its hash) they were given under, most first."""

    @classmethod
    def of(cls, figures: Calibration) -> CalibrationFigures:
        """The figures of a calibration."""
        tag = None if not figures.tag_n else TagAgreement(
            labels=figures.tag_n, agreeing_labels=figures.tag_agree, agreement=figures.tag_agreement,
            interval=figures.tag_interval, kappa=KappaFigures.of(figures.kappa_tag))
        confusion = None if figures.confusion is None else Confusion(classes=figures.confusion.classes,
                                                                     labels=figures.confusion.counts)
        return cls(pass_fail=PassFailAgreement.of(figures), tag=tag, confusion=confusion,
                   score_gaps={path: ScoreGap.of(gap) for path, gap in figures.gaps.items()},
                   weeks=[LabelWeek(week=week, labels=labels, cases=cases, agreement=agreement)
                          for week, labels, cases, agreement in figures.by_week],
                   labels_by_judge_model=figures.judge_models, labels_by_rubric_hash=figures.rubric_hashes)


class JudgeNow(Document):
    """What judges the rubric now."""

    judge_model: str
    """The judge model (or the jury's name)."""
    rubric_version: str
    """The rubric's version."""
    rubric_hash: str
    """The hash of the rubric's text."""

    @classmethod
    def of(cls, now: JudgeInUse) -> JudgeNow:
        """The judge in use."""
        return cls(judge_model=now.judge_model, rubric_version=now.rubric_version, rubric_hash=now.rubric_hash)


class DoubtFigures(Document):
    """A reason the figures may not say much of the judge in use."""

    kind: Literal["low_agreement", "other_judge", "other_rubric_text"]
    """low_agreement: agreement under CALIBRATION_MIN_AGREEMENT over enough cases; other_judge: most labels were
    given on another judge model; other_rubric_text: most labels were given under another text of the rubric."""
    text: str
    """The sentence Slack and the digest show."""

    @classmethod
    def of(cls, doubt: Doubt) -> DoubtFigures:
        """A doubt of a trust report."""
        from bot.trust.report import LowAgreement, OtherJudge

        kind: Literal["low_agreement", "other_judge", "other_rubric_text"] = (
            "low_agreement" if isinstance(doubt, LowAgreement) else
            "other_judge" if isinstance(doubt, OtherJudge) else "other_rubric_text")
        return cls(kind=kind, text=str(doubt))
