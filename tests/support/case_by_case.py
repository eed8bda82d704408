"""Calibration's figures built case by case, as `calibrate` built them before it counted each figure's cases in one
pass: each figure's cases made one by one (`by_case`), then their distinct tables. Kept to hold the counted figures
to, to the bit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from bot.figures import iso_week
from bot.trust.calibration import (
    Agreement,
    Calibration,
    Confusion,
    Gap,
    Kappa,
    Verdict,
    by_case,
    most_first,
)
from bot.trust.stats.intervals import score_interval


def calibrated_case_by_case(labels: Iterable[Verdict], *, tags: Sequence[str] = (), criteria: Sequence[str] = (),
                            scales: Mapping[str, Sequence[int]] | None = None) -> Calibration:
    """`calibrate`'s figures, each figure's cases built one by one."""
    given = list(labels)
    tag_items = _tag_items(given) if tags else []
    tag_cases = by_case((case, judge, human, 1) for case, judge, human in tag_items)
    tag_shares = [_share(counts, lambda judge, human: judge == human) for counts in tag_cases]
    return Calibration(
        **dict(_agreement(given)),
        kappa_tag=Kappa.of(tag_cases) if tag_items else Kappa(),
        tag_agree=sum(judge == human for _, judge, human in tag_items),
        tag_agreement=sum(tag_shares) / len(tag_shares) if tag_shares else None,
        tag_interval=score_interval(tag_shares),
        confusion=Confusion.build([(judge, human) for _, judge, human in tag_items], order=tags) if tag_items else None,
        gaps=_gaps(given, criteria, scales or {}),
        by_week=_by_week(given),
        judge_models=most_first((label.judge_model, 1) for label in given),
        rubric_hashes=most_first((label.rubric_hash, 1) for label in given),
    )


def _share(counts: Mapping[tuple[object, object], int], said: Callable[[object, object], bool]) -> float:
    return sum(count for (judge, human), count in counts.items() if said(judge, human)) / sum(counts.values())


def _agreement(labels: Sequence[Verdict]) -> Agreement:
    passes = [(label.case, label.judge_passed, label.human_passed) for label in labels
              if label.judge_passed is not None and label.human_passed is not None]
    return Agreement.counted(len(labels), Counter((judge, human) for _, judge, human in passes),
                             by_case((case, judge, human, 1) for case, judge, human in passes))


def _tag_items(labels: Sequence[Verdict]) -> list[tuple[str | None, str, str]]:
    return [(label.case, label.judge_tag, label.human_tag) for label in labels
            if label.judge_tag is not None and label.human_tag is not None]


def _gaps(labels: Sequence[Verdict], criteria: Sequence[str], scales: Mapping[str, Sequence[int]]) -> dict[str, Gap]:
    figures: dict[str, Gap] = {}
    for path in criteria:
        items = [(label.case, label.judge_values[path], label.human_values[path]) for label in labels
                 if path in label.judge_values and path in label.human_values]
        if not items:
            continue
        cases = by_case((case, judge, human, 1) for case, judge, human in items)
        kappa = None
        if path in scales:
            scale = sorted({float(value) for value in scales[path]} | {value for _, *pair in items for value in pair})
            kappa = Kappa.of(cases, scale=scale, names={value: f"{value:g}" for value in scale})
        figures[path] = Gap(n=len(items), cases=len(cases),
                            mean_abs=_case_mean(cases, lambda judge, human: abs(judge - human)),
                            mean_signed=_case_mean(cases, lambda judge, human: judge - human), kappa=kappa)
    return figures


def _case_mean(cases: Sequence[Mapping[tuple[float, float], int]], of: Callable[[float, float], float]) -> float:
    return sum(sum(count * of(*pair) for pair, count in counts.items()) / sum(counts.values())
               for counts in cases) / len(cases)


def _by_week(labels: Sequence[Verdict]) -> list[tuple[str, int, int, float | None]]:
    weeks: dict[str, list[Verdict]] = {}
    for label in labels:
        weeks.setdefault(iso_week(label.labeled_at), []).append(label)
    rows: list[tuple[str, int, int, float | None]] = []
    for week in sorted(weeks):
        figures = _agreement(weeks[week])
        rows.append((week, len(weeks[week]), figures.pass_cases, figures.agreement))
    return rows
