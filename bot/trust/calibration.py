"""How far the judge agrees with people: agreement, kappa, a confusion matrix and score gaps, from labeled verdicts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

from bot.figures import iso_week

Z95 = 1.959963984540054  # the standard normal quantile of 0.975
NAME_WIDTH = 13  # as wide as the corner "judge \ human"; longer class names are cut
TABLE_WIDTH = 60  # four classes fit this, so the table reads in a narrow Slack message
GAP = "  "
CORNER = "judge \\ human"
TOTAL = "total"
Class = TypeVar("Class", bound=Hashable)  # what a rater's answers are: pass/fail, or a tag
KAPPA_BANDS = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))  # Landis & Koch


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `successes` out of `n` (95 % by default), or None when n == 0."""
    if n == 0:
        return None
    p = successes / n
    spread = z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / n + spread / (4 * n)) / (1 + spread)
    # At 0 or n the bound is exactly 0 or 1; rounding would leave it a hair off.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of (judge, human) pairs over the classes either used; may be negative.

    None when there are no pairs, or when either rater used one class only (a judge that passes everything): kappa
    then says nothing of agreement (0/0 when both used the same class, 0 whatever the agreement otherwise), and is
    shown as "n/a (one class only)". Perfect agreement over two or more classes is 1.0.
    """
    return counted_kappa(Counter(pairs))


def counted_kappa(counts: Mapping[tuple[Class, Class], int]) -> float | None:
    """Cohen's kappa (as `cohen_kappa`) of (judge, human) pairs given as how many times each pair occurs."""
    n = sum(counts.values())
    if n == 0:
        return None
    judge: Counter[Class] = Counter()
    human: Counter[Class] = Counter()
    for (first, second), count in counts.items():
        judge[first] += count
        human[second] += count
    if len(+judge) < 2 or len(+human) < 2:
        return None
    agreed = sum(count for (first, second), count in counts.items() if first == second)
    # In whole numbers times n²: with two classes or more on each side, the expected agreement is below 1.
    expected = sum(count * human[label] for label, count in judge.items())
    return (n * agreed - expected) / (n * n - expected)


def kappa_interval(counts: Mapping[tuple[Class, Class], int], z: float = Z95) -> tuple[float, float] | None:
    """The 95 % interval of Cohen's kappa (as `counted_kappa`) from its large-sample standard error (Fleiss, Cohen
    and Everitt 1969, as statsmodels' cohens_kappa gives it); None where kappa is undefined."""
    kappa = counted_kappa(counts)
    if kappa is None:
        return None
    n = sum(counts.values())
    share = {pair: count / n for pair, count in counts.items()}
    judge: Counter[Class] = Counter()
    human: Counter[Class] = Counter()
    for (first, second), value in share.items():
        judge[first] += value  # type: ignore[assignment]
        human[second] += value  # type: ignore[assignment]
    expected = sum(value * human[label] for label, value in judge.items())
    same = sum(value * (1 - (judge[first] + human[first]) * (1 - kappa)) ** 2
               for (first, second), value in share.items() if first == second)
    other = (1 - kappa) ** 2 * sum(value * (human[first] + judge[second]) ** 2
                                   for (first, second), value in share.items() if first != second)
    variance = max(0.0, (same + other - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2))
    half = z * math.sqrt(variance)
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def mean_abs_diff(pairs: Sequence[tuple[float, float]]) -> float | None:
    """The mean absolute difference of (judge, human) values, or None when there are none."""
    if not pairs:
        return None
    return sum(abs(first - second) for first, second in pairs) / len(pairs)


def kappa_text(kappa: float | None, n: int) -> str:
    """Kappa with its Landis & Koch band, such as "0.62 (substantial)", or why there is none."""
    if n == 0:
        return "n/a (no labels)"
    if kappa is None:
        return "n/a (one class only)"
    shown = round(kappa, 2) + 0.0  # the band follows the digits shown; + 0.0 turns -0.0 into 0.0
    return f"{shown:.2f} ({_band(shown)})"


def _band(kappa: float) -> str:
    if kappa < 0:
        return "poor"
    return next((name for top, name in KAPPA_BANDS if kappa <= top), "almost perfect")


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


class Confusion(BaseModel):
    """Counts of (judge class, human class): rows are the judge's classes, columns the human's, in `classes` order."""

    model_config = ConfigDict(frozen=True)
    classes: list[str]
    counts: list[list[int]]

    @model_validator(mode="after")
    def _square(self) -> Confusion:
        size = len(self.classes)
        if len(self.counts) != size or any(len(row) != size for row in self.counts):
            raise ValueError(f"counts must be {size} rows of {size}")
        return self

    @classmethod
    def build(cls, pairs: Iterable[tuple[str, str]], order: Sequence[str] = ()) -> Confusion:
        """The matrix of (judge, human) pairs: the classes of `order` first, then any others seen, sorted."""
        counted = list(pairs)
        seen = {label for pair in counted for label in pair}
        classes = list(dict.fromkeys(order)) + sorted(seen - set(order))
        index = {label: position for position, label in enumerate(classes)}
        counts = [[0] * len(classes) for _ in classes]
        for judge, human in counted:
            counts[index[judge]][index[human]] += 1
        return cls(classes=classes, counts=counts)

    @property
    def total(self) -> int:
        """Every pair counted."""
        return sum(map(sum, self.counts))

    @property
    def diagonal(self) -> int:
        """Pairs where the judge and the person gave the same class."""
        return sum(self.counts[i][i] for i in range(len(self.classes)))

    def row_totals(self) -> list[int]:
        """Pairs per judge class."""
        return [sum(row) for row in self.counts]

    def column_totals(self) -> list[int]:
        """Pairs per human class."""
        return [sum(column) for column in zip(*self.counts)]

    def table(self) -> list[str]:
        """The matrix as lines of monospace text, with row and column totals."""
        total_width = max(len(TOTAL), len(str(self.total)))
        widths = self._column_widths(total_width)
        header = [_cut(name, width).rjust(width) for name, width in zip(self.classes, widths)]
        lines = [self._line(CORNER, header, TOTAL.rjust(total_width))]
        for name, row, row_total in zip(self.classes, self.counts, self.row_totals()):
            cells = [str(count).rjust(width) for count, width in zip(row, widths)]
            lines.append(self._line(_cut(name, NAME_WIDTH), cells, str(row_total).rjust(total_width)))
        cells = [str(count).rjust(width) for count, width in zip(self.column_totals(), widths)]
        lines.append(self._line(TOTAL, cells, str(self.total).rjust(total_width)))
        return lines

    def _column_widths(self, total_width: int) -> list[int]:
        # Headers share what the row names and the total column leave of the line; a count never gets cut.
        room = TABLE_WIDTH - NAME_WIDTH - len(GAP) - total_width
        cap = max(3, min(NAME_WIDTH, room // max(1, len(self.classes)) - len(GAP)))
        return [max(min(len(name), cap), *(len(str(count)) for count in column))
                for name, column in zip(self.classes, zip(*self.counts))]

    @staticmethod
    def _line(name: str, cells: list[str], total: str) -> str:
        return GAP.join([name.ljust(NAME_WIDTH), *cells, total])


class LabeledVerdict(BaseModel):
    """What calibration needs of one labeled verdict: the judge's side, the person's side, and when and by what.

    A side's missing value (None, or a path absent from its values) leaves that label out of that figure only.
    """

    judge_passed: bool | None = None
    judge_tag: str | None = None
    judge_values: dict[str, float] = {}
    human_passed: bool | None = None
    human_tag: str | None = None
    human_values: dict[str, float] = {}
    labeled_at: datetime
    judge_model: str
    rubric_hash: str


class Agreement(BaseModel):
    """How far the judge and people agree on pass/fail: over `n` labels, the `pass_n` with pass/fail on both sides,
    of which `pass_agree` alike."""

    n: int
    pass_n: int
    pass_agree: int
    agreement: float | None
    interval: tuple[float, float] | None
    kappa_pass: float | None
    kappa_pass_interval: tuple[float, float] | None = None  # 95 %, where kappa is defined

    @classmethod
    def counted(cls, n: int, passes: Mapping[tuple[bool, bool], int]) -> Agreement:
        """The figures of `n` labels, whose (judge, human) pass/fail pairs occur as often as `passes` counts."""
        pass_n = sum(passes.values())
        agreed = sum(count for (judge, human), count in passes.items() if judge == human)
        return cls(n=n, pass_n=pass_n, pass_agree=agreed, agreement=agreed / pass_n if pass_n else None,
                   interval=wilson(agreed, pass_n), kappa_pass=counted_kappa(passes),
                   kappa_pass_interval=kappa_interval(passes))


class Calibration(Agreement):
    """The calibration figures of a set of labels (see `calibrate`): pass/fail agreement, and the rest."""

    tag_n: int
    kappa_tag: float | None
    confusion: Confusion | None
    mad: dict[str, tuple[int, float]]
    by_week: list[tuple[str, int, float | None]]
    judge_models: dict[str, int]
    rubric_hashes: dict[str, int]


def calibrate(
    labels: Iterable[LabeledVerdict], *, tags: Sequence[str] = (), criteria: Sequence[str] = ()
) -> Calibration:
    """The calibration figures of `labels`.

    `tags` is the rubric's tag order (empty: the rubric has no tag, and there is no tag kappa or matrix). `mad` holds
    each of `criteria` that some label has on both sides. Weeks are the ISO weeks of `labeled_at` in its own time
    zone. Judge models and rubric hashes come most labels first.
    """
    given = list(labels)
    tag_pairs = _tag_pairs(given) if tags else []
    return Calibration(
        **dict(Agreement.counted(len(given), Counter(_pass_pairs(given)))),
        tag_n=len(tag_pairs),
        kappa_tag=cohen_kappa(tag_pairs),
        confusion=Confusion.build(tag_pairs, order=tags) if tag_pairs else None,
        mad=_mad(given, criteria),
        by_week=_by_week(given),
        judge_models=most_first((label.judge_model, 1) for label in given),
        rubric_hashes=most_first((label.rubric_hash, 1) for label in given),
    )


def _pass_pairs(labels: Sequence[LabeledVerdict]) -> list[tuple[bool, bool]]:
    return [(label.judge_passed, label.human_passed) for label in labels
            if label.judge_passed is not None and label.human_passed is not None]


def _tag_pairs(labels: Sequence[LabeledVerdict]) -> list[tuple[str, str]]:
    return [(label.judge_tag, label.human_tag) for label in labels
            if label.judge_tag is not None and label.human_tag is not None]


def _mad(labels: Sequence[LabeledVerdict], criteria: Sequence[str]) -> dict[str, tuple[int, float]]:
    figures: dict[str, tuple[int, float]] = {}
    for path in criteria:
        pairs = [(label.judge_values[path], label.human_values[path]) for label in labels
                 if path in label.judge_values and path in label.human_values]
        if (gap := mean_abs_diff(pairs)) is not None:
            figures[path] = (len(pairs), gap)
    return figures


def _by_week(labels: Sequence[LabeledVerdict]) -> list[tuple[str, int, float | None]]:
    weeks: dict[str, list[LabeledVerdict]] = {}
    for label in labels:
        weeks.setdefault(iso_week(label.labeled_at), []).append(label)
    rows: list[tuple[str, int, float | None]] = []
    for week in sorted(weeks):  # "YYYY-Www" sorts in time order
        passes = _pass_pairs(weeks[week])
        agreed = sum(judge == human for judge, human in passes)
        rows.append((week, len(weeks[week]), agreed / len(passes) if passes else None))
    return rows


def most_first(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(name, count) pairs added up by name: the most first, then by name."""
    totals: Counter[str] = Counter()
    for name, count in counts:
        totals[name] += count
    return dict(sorted(totals.items(), key=_by_count_then_name))


def _by_count_then_name(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]
