"""Krippendorff's alpha: how far several judges (or samples) agree beyond chance, over rows each judged several times."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.judge.samples import chosen
from bot.records import RowState
from bot.store import JudgmentSample
from bot.trust.texts import alpha_text

Metric = Literal["nominal", "interval"]


@dataclass
class AlphaTally:
    """Krippendorff's alpha built a unit (a row) at a time, from the coincidence matrix's sums only: nominal (a tag,
    pass/fail) or interval (a headline). Units with fewer than two values cannot be paired and are left out."""

    metric: Metric
    units: int = 0
    observed: float = 0.0  # sum over units of their disagreeing pairs' distance, over (values in the unit - 1)
    counts: Counter[Hashable] = field(default_factory=Counter)  # n_c: how often each value was paired

    def add(self, values: Iterable[Hashable | None]) -> None:
        """Count one unit: the values its coders gave (None: no value)."""
        given = [value for value in values if value is not None]
        if len(given) < 2:
            return
        self.units += 1
        unit = Counter(given)
        self.observed += _disagreement(unit, self.metric) / (len(given) - 1)
        self.counts.update(unit)

    @property
    def pairable(self) -> int:
        """Values in units of two or more (the n of the coincidence matrix)."""
        return sum(self.counts.values())

    @property
    def alpha(self) -> float | None:
        """1 - observed / expected disagreement; None when no unit was paired or every value is the same."""
        expected = _disagreement(self.counts, self.metric)
        if not self.units or expected == 0:
            return None
        return 1 - (self.pairable - 1) * self.observed / expected


def _disagreement(counts: Counter[Hashable], metric: Metric) -> float:
    """The sum of distances over every ordered pair of the counted values (a value is not paired with itself)."""
    n = sum(counts.values())
    if metric == "nominal":
        return float(n * n - sum(count * count for count in counts.values()))
    total = squares = 0.0
    for value, count in counts.items():
        number = float(value)  # type: ignore[arg-type]  # the interval metric is given numbers
        total += count * number
        squares += count * number * number
    return 2 * (n * squares - total * total)


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]], metric: Metric) -> tuple[float | None, int]:
    """Krippendorff's alpha of `units` (each the values its coders gave, None where one gave none) and how many
    units had two values or more."""
    tally = AlphaTally(metric)
    for unit in units:
        tally.add(unit)
    return tally.alpha, tally.units


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
