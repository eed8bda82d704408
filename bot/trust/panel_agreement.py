"""How far a run's panel agrees beyond chance: Krippendorff's alpha among a jury's judges (each by its own verdict) or
among one judge's samples, on the outcome and on the headline, per rubric."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.judge.samples import chosen
from bot.records import RowState
from bot.store import JudgmentSample
from bot.trust.calibration_texts import alpha_text
from bot.trust.stats.alpha import AlphaTally


def member_samples(samples: Sequence[JudgmentSample]) -> dict[str, JudgmentSample]:
    """Each jury member's own verdict on a row, by model: the sample chosen among its scored ones as the row's is
    among all (the medoid; in an even split the lower headline), so its headline and tag are one sample's."""
    found: dict[str, JudgmentSample] = {}
    for model in dict.fromkeys(sample.judge_model for sample in samples):
        scored = sorted((s for s in samples if s.judge_model == model and s.status == RowState.SCORED),
                        key=lambda sample: sample.sample)
        if scored:
            found[model] = scored[chosen(scored)]
    return found


@dataclass
class JudgesAlpha:
    """How far the judges of a set of rows agree beyond chance: Krippendorff's alpha on the outcome (the tag, or
    pass/fail for a rubric without one) and on the headline, among a jury's members (each by its own verdict) or one
    judge's samples."""

    jury: bool = False
    outcome: AlphaTally = field(default_factory=lambda: AlphaTally("nominal"))
    headline: AlphaTally = field(default_factory=lambda: AlphaTally("interval"))

    def add(self, samples: Sequence[JudgmentSample], *, tagged: bool = True) -> None:
        """Count the samples behind one row: a jury's members each by its own verdict (`member_samples`), one judge's
        samples each by itself; on the tag (`tagged`), else pass/fail."""
        coders = list(member_samples(samples).values()) if self.jury else \
            [sample for sample in samples if sample.status == RowState.SCORED]
        self.outcome.add(sample.tag if tagged else sample.passed for sample in coders)
        self.headline.add(sample.headline for sample in coders)

    def text(self, tagged: bool) -> str:
        """"among the judges: tag 0.55 (45 rows), headline 0.71 (45 rows)"."""
        coders = "the judges" if self.jury else "the samples"
        outcome = "tag" if tagged else "pass/fail"
        return (f"among {coders}: {outcome} {alpha_text(self.outcome.alpha, self.outcome.units)}, "
                f"headline {alpha_text(self.headline.alpha, self.headline.units)}")


def alphas_by_rubric(sampled: Iterable[tuple[str, Sequence[JudgmentSample]]]) -> list[tuple[str, JudgesAlpha, bool]]:
    """Krippendorff's alpha among the judges of each rubric's rows (rows of a jury apart from rows of one judge's
    samples): (rubric, alphas, whether its outcome is a tag, else pass/fail), by rubric name."""
    found: dict[tuple[str, bool], tuple[JudgesAlpha, bool]] = {}
    for rubric_name, samples in sampled:
        jury = len({sample.judge_model for sample in samples}) > 1
        tagged = any(sample.tag is not None for sample in samples)
        alphas, _ = found.setdefault((rubric_name, jury), (JudgesAlpha(jury=jury), tagged))
        alphas.add(samples, tagged=tagged)
    return [(name, alphas, tagged) for (name, _), (alphas, tagged) in sorted(found.items(), key=lambda item: item[0])
            if alphas.headline.units]
