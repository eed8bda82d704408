"""The labels a judged file holds: its human_ columns saved as labels of their rows, and the judge measured against
them for that run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.records import RowState
from bot.rubric import Rubric
from bot.store import Run, Store, iter_judgments, judgment_case
from bot.trust.calibration import Calibration, LabeledVerdict, calibrate
from bot.trust.labeling import FILE, label_case
from bot.trust.labels import (
    ambiguous_columns,
    label_columns,
    meant_labels,
    numbers_at,
    numeric_paths,
    ordinal_scales,
    read_label,
    repeated_columns,
    spelled,
    tag_order,
)

FILE_LABELER = "file"  # who labeled a file judged in a terminal, unless its labeled_by column says
LABELED_BY = "labeled_by"
NOTE = "note"  # a row's note beside its label (a file `judgebot review --out` writes has the column)
NOTE_LENGTH = 3000  # a note longer than this is cut: what Slack's Correct it form takes
SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,}")  # a Slack member id: only that member can give their labels
LABELER_LENGTH = 32
PROBLEMS_KEPT = 20


@dataclass
class FileLabels:
    """What a run's label columns gave: the figures of the judge against them, cells that could not be read, and
    human_ columns that name no field of the rubric or could name several."""

    columns: list[str] = field(default_factory=list)
    calibration: Calibration | None = None
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # the first PROBLEMS_KEPT
    unknown: list[str] = field(default_factory=list)
    meant: dict[str, str] = field(default_factory=dict)  # {an unknown column: the label column it nearly spells}
    repeated: list[tuple[str, str]] = field(default_factory=list)  # (a column not read, the one read for its label)
    ambiguous: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (a column not read, fields it fits)
    unreadable: int = 0  # rows whose label could not be read, all of them

    @property
    def any(self) -> bool:
        """Whether the file had label columns at all."""
        return bool(self.columns or self.unknown or self.ambiguous)


def save_file_labels(store: Store, run: Run, rubric: Rubric) -> FileLabels:
    """Save the labels in a run's human_ columns for its scored rows, and compare the judge with them."""
    columns, unknown = label_columns(run.columns or [], rubric)
    found = FileLabels(columns=list(columns), unknown=unknown, meant=meant_labels(unknown, rubric),
                       repeated=repeated_columns(run.columns or [], rubric),
                       ambiguous=ambiguous_columns(run.columns or [], rubric))
    if not columns:
        return found
    by_column = next((header for header in run.columns or [] if spelled(header) in (LABELED_BY, "labelled_by")), None)
    note_column = next((header for header in run.columns or [] if spelled(header) == NOTE), None)
    numeric = numeric_paths(rubric)
    labeled: dict[tuple[str, str], LabeledVerdict] = {}  # one per case and person: a later row replaces an earlier
    for row in iter_judgments(store, run.id):
        if row.status != RowState.SCORED:
            continue
        try:
            human = read_label(row.cells or {}, columns, rubric)
            labeler = labeler_of(row.cells or {}, by_column, run.user_id)
        except ValueError as err:
            found.unreadable += 1
            if len(found.problems) < PROBLEMS_KEPT:
                found.problems.append((row.row_number, str(err)))
            continue
        if human.empty:
            continue
        label, _ = label_case(store, row, rubric, human, user_id=labeler, source=FILE,
                              note=note_of(row.cells or {}, note_column))
        case = judgment_case(row)
        labeled.pop((case, labeler), None)
        labeled[case, labeler] = LabeledVerdict(
            judge_passed=row.passed, judge_tag=row.tag, judge_values=numbers_at(row.output, numeric),
            human_passed=label.passed, human_tag=label.tag, human_values=numbers_at(label.values, numeric, dotted=True),
            labeled_at=row.judged_at or row.created_at, judge_model=row.judge_model, rubric_hash=row.rubric_hash,
            case=case)
    found.calibration = calibrate(labeled.values(), tags=tag_order(rubric), criteria=numeric,
                                  scales=ordinal_scales(rubric))
    return found


def note_of(cells: dict[str, str], column: str | None) -> str | None:
    """A row's note (its note cell, cut at NOTE_LENGTH), or None when it has none."""
    text = str(cells.get(column) or "").strip() if column else ""
    return text[:NOTE_LENGTH] or None


def labeler_of(cells: dict[str, str], column: str | None, uploader: str | None) -> str:
    """Who gave a file row's label: its labeled_by cell, else who shared the file in Slack, else FILE_LABELER.
    ValueError when the cell names another Slack member than the uploader (a file cannot give someone else's
    labels, nor replace them) or is too long to keep."""
    named = str(cells.get(column) or "").strip() if column else ""
    if not named:
        return uploader or FILE_LABELER
    if len(named) > LABELER_LENGTH:
        raise ValueError(f"{column} is longer than {LABELER_LENGTH} characters")
    if uploader is not None and named != uploader and SLACK_USER.fullmatch(named):
        raise ValueError(f"{column} {named} is another member of the workspace: only they can give their labels "
                         "(leave it empty to label as yourself, or name someone outside Slack)")
    return named
