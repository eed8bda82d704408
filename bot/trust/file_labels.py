"""The labels a judged file holds: its human_ columns saved as labels of their rows, and the judge measured against
them for that run."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.records import RowState
from bot.rubric import Rubric
from bot.store import Run, Store
from bot.store.labels import forget_earlier_file_labels, save_label
from bot.trust.calibration import Calibration, LabeledVerdict, calibrate
from bot.trust.labels import (
    complete,
    label_columns,
    numbers_at,
    numeric_paths,
    read_label,
    repeated_columns,
    tag_order,
)

FILE_LABELER = "file"  # the user id of labels read from a file: one per row, replaced when the run is summarised again
PROBLEMS_KEPT = 20


@dataclass
class FileLabels:
    """What a run's label columns gave: the figures of the judge against them, cells that could not be read, and
    human_ columns that name no field of the rubric."""

    columns: list[str] = field(default_factory=list)
    calibration: Calibration | None = None
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # the first PROBLEMS_KEPT
    unknown: list[str] = field(default_factory=list)
    repeated: list[tuple[str, str]] = field(default_factory=list)  # (a column not read, the one read for its label)
    unreadable: int = 0  # rows whose label could not be read, all of them

    @property
    def any(self) -> bool:
        """Whether the file had label columns at all."""
        return bool(self.columns or self.unknown)


def save_file_labels(store: Store, run: Run, rubric: Rubric) -> FileLabels:
    """Save the labels in a run's human_ columns for its scored rows, and compare the judge with them."""
    columns, unknown = label_columns(run.columns or [], rubric)
    found = FileLabels(columns=list(columns), unknown=unknown, repeated=repeated_columns(run.columns or [], rubric))
    if not columns:
        return found
    forget_earlier_file_labels(store, run_id=run.id, user_id=FILE_LABELER)
    numeric = numeric_paths(rubric)
    labeled: list[LabeledVerdict] = []
    for row in store.iter_judgments(run.id):
        if row.status != RowState.SCORED:
            continue
        try:
            human = read_label(row.cells or {}, columns, rubric)
        except ValueError as err:
            found.unreadable += 1
            if len(found.problems) < PROBLEMS_KEPT:
                found.problems.append((row.row_number, str(err)))
            continue
        if human.empty:
            continue
        label = complete(human, row.output, rubric)
        save_label(store, judgment=row, user_id=FILE_LABELER, source="file", values=label.values, passed=label.passed,
                   tag=label.tag, headline=label.headline, note=None)
        labeled.append(LabeledVerdict(
            judge_passed=row.passed, judge_tag=row.tag, judge_values=numbers_at(row.output, numeric),
            human_passed=label.passed, human_tag=label.tag, human_values=numbers_at(label.values, numeric, dotted=True),
            labeled_at=row.judged_at or row.created_at, judge_model=row.judge_model, rubric_hash=row.rubric_hash))
    found.calibration = calibrate(labeled, tags=tag_order(rubric), criteria=numeric)
    return found
