"""The review queue as a file: its open cases written as a CSV with empty human_ columns for people to fill in, and
a filled-in file's labels matched back to the open cases they name and saved (closing them), with the rows that
match none said."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.csvfiles.columns import names_role
from bot.csvfiles.reading import open_csv
from bot.csvfiles.results import neutralise, restore
from bot.csvfiles.rows import MalformedRow
from bot.figures import plural
from bot.records import context_text
from bot.store import ANY_TEAM, Judgment, ReviewCase, Store, open_cases, review_setup
from bot.trust.file_labels import LABELED_BY, NOTE, labeler_of, note_of
from bot.trust.labeling import FILE, label_case
from bot.trust.labels import PASS, PREFIX, label_columns, read_label, spelled
from bot.trust.review import REASONS

if TYPE_CHECKING:
    from bot.rubric import Rubric

OPEN_AT_MOST = 100_000  # open cases a file holds: a queue is people's work, far fewer
RUBRIC, WHY, JUDGMENT_ID = "rubric", "why", "judgment_id"
JUDGE_SAID = ("judge_pass", "judge_tag")  # left out of a file of a channel that reviews blind
PROBLEMS_KEPT = 20


def queue_cases(store: Store, channel_id: str | None) -> list[tuple[ReviewCase, Judgment]]:
    """The open cases of a channel's queue (in whichever workspace), or of the terminal's (None), oldest first."""
    return list(open_cases(store, team_id=ANY_TEAM if channel_id else None, channel_id=channel_id,
                           limit=OPEN_AT_MOST))


def is_blind(store: Store, case: ReviewCase) -> bool:
    """Whether the case's channel reviews blind (the terminal's queue never does)."""
    return case.channel_id is not None and review_setup(store, team_id=case.team_id or "",
                                                        channel_id=case.channel_id).blind


@dataclass(frozen=True)
class Written:
    """What a queue file holds: its cases, and the pairs left out (a pair's label is a winner, given case by case)."""

    cases: int
    pairs_left_out: int


def write_queue(out: TextIO, cases: Sequence[tuple[ReviewCase, Judgment]], rubric: Rubric, *,
                blind: Callable[[ReviewCase], bool]) -> Written:
    """The open cases of one rubric as a CSV a person fills in: the rubric and the texts (a context column of each
    case's passages as a JSON list, for a rubric that reads context), empty human_pass, human_<tag field> and note
    columns, why each was queued, the judge's verdict (unless every case is `blind`: a blind case's cells are left
    empty) and the judgment's id. Judged again with its labels, or read by `labels import`, it closes the cases it
    labels. Cells a spreadsheet would run as formulas are written safe (and read back as they were)."""
    mine = [(case, judgment) for case, judgment in cases if case.rubric_name == rubric.name]
    single = [(case, judgment) for case, judgment in mine if judgment.answer_b is None]
    shown = [not blind(case) for case, _ in single]
    tag = rubric.headline.tag
    header = [RUBRIC, "question", "reference", "answer", "model", *(("context",) if rubric.uses_context else ()),
              PREFIX + PASS, *((PREFIX + tag,) if tag else ()), NOTE, WHY, *(JUDGE_SAID if any(shown) else ()),
              JUDGMENT_ID]
    writer = csv.writer(out)
    writer.writerow(header)
    for (case, judgment), seen in zip(single, shown, strict=True):
        said = ((_cell(judgment.passed) if seen else "", judgment.tag or "" if seen else "") if any(shown) else ())
        cells = [rubric.name, judgment.question, judgment.reference, judgment.answer, judgment.model_name or "",
                 *((judgment.context or "[]",) if rubric.uses_context else ()), "", *(("",) if tag else ()), "",
                 REASONS.get(case.reason, case.reason), *said, str(judgment.id)]
        writer.writerow([neutralise(cell) for cell in cells])
    return Written(len(single), len(mine) - len(single))


def _cell(passed: bool | None) -> str:
    return "" if passed is None else "true" if passed else "false"


@dataclass
class Imported:
    """What a labeled queue file did: cases closed (and labels that replaced the person's earlier one), rows without
    a label, and the rows that could not be matched to an open case or read, each with its line and why."""

    labeled: int = 0
    replaced: int = 0
    unlabeled: int = 0
    unmatched: list[tuple[int, str]] = field(default_factory=list)  # the first PROBLEMS_KEPT
    unmatched_count: int = 0
    rubrics: set[str] = field(default_factory=set)  # the rubrics of the cases labeled

    def miss(self, line: int, why: str) -> None:
        """A row that labels no case."""
        self.unmatched_count += 1
        if len(self.unmatched) < PROBLEMS_KEPT:
            self.unmatched.append((line, why))

    def text(self, where: str) -> str:
        """"3 cases of the terminal's queue labeled and closed; 1 row matched no open case ..." as one sentence."""
        parts = [f"{self.labeled:,} {plural(self.labeled, 'case')} of {where} labeled and closed"
                 + (f" ({self.replaced:,} replacing an earlier label of the same person)" if self.replaced else "")]
        if self.unlabeled:
            parts.append(f"{self.unlabeled:,} {plural(self.unlabeled, 'row')} without a label left out")
        if self.unmatched_count:
            parts.append(f"{self.unmatched_count:,} labeled {plural(self.unmatched_count, 'row')} matched no open case")
        return "; ".join(parts) + "."


Texts = tuple[str, str, str, str, str | None]  # rubric, question, reference, answer, context as the history keeps it


def import_labels(store: Store, path: Path, channel_id: str | None, *,
                  rubric_of: Callable[[Judgment], Rubric | None], rubric_named: Callable[[str], Rubric | None],
                  default_rubric: Rubric | None = None, labeler: str | None = None) -> Imported:
    """Save the labels of a filled-in queue file as labels of the open cases of a channel's queue (None: the
    terminal's) that its rows name, by their rubric (its cell, else `default_rubric`) and texts; each case is labeled
    by the person its labeled_by cell names, else `labeler`, else FILE_LABELER, as a judged file's are. A row that
    names no open case (labeled already, never queued, its texts changed, its rubric changed since it was judged) is
    said, not saved. CsvError when the file cannot be read."""
    found = Imported()
    waiting: dict[Texts, tuple[ReviewCase, Judgment]] = {}
    for case, judgment in queue_cases(store, channel_id):
        if judgment.answer_b is None:
            waiting.setdefault(_texts(judgment.rubric_name, judgment.question, judgment.reference, judgment.answer,
                                      judgment.context), (case, judgment))
    first = open_csv(path, reference=False)
    source = open_csv(path, reference=False, context=any(names_role(header, "context") for header in first.headers))
    by_column = next((header for header in source.headers if spelled(header) in (LABELED_BY, "labelled_by")), None)
    note_column = next((header for header in source.headers if spelled(header) == NOTE), None)
    rubric_column = next((header for header in source.headers if spelled(header) == RUBRIC), None)
    for row in source:
        if isinstance(row, MalformedRow):
            found.miss(row.line, row.reason)
            continue
        cells = {header: restore(cell) for header, cell in row.cells.items()}
        name = (cells.get(rubric_column) or "").strip() if rubric_column else ""
        rubric = rubric_named(name) if name else default_rubric
        if rubric is None:
            if _any_label(cells):
                found.miss(row.line, f"no rubric called {name!r} is loaded" if name else
                           "it names no rubric (a rubric column, or --rubric)")
            else:
                found.unlabeled += 1
            continue
        columns, _ = label_columns(source.headers, rubric)
        try:
            human = read_label(cells, columns, rubric)
            who = labeler_of(cells, by_column, labeler)
        except ValueError as err:
            found.miss(row.line, str(err))
            continue
        if human.empty:
            found.unlabeled += 1
            continue
        passages = None if row.context is None else [restore(passage) for passage in row.context]
        key = _texts(rubric.name, restore(row.question), restore(row.reference), restore(row.answer),
                     context_text(passages) if rubric.uses_context else None)
        held = waiting.pop(key, None)
        if held is None:
            found.miss(row.line, "no open case of the queue has these texts (labeled already, or never queued)")
            continue
        judged_with = rubric_of(held[1])
        if judged_with is None:
            found.miss(row.line, f"its case was judged with another version of {rubric.name} than the one loaded")
            continue
        _, replaced = label_case(store, held[1], judged_with, human, user_id=who, source=FILE,
                                 note=note_of(cells, note_column))
        found.labeled += 1
        found.replaced += replaced
        found.rubrics.add(rubric.name)
    return found


def _texts(rubric: str, question: str, reference: str, answer: str, context: str | None) -> Texts:
    return rubric, question, reference, answer, context


def _any_label(cells: dict[str, str]) -> bool:
    return any(spelled(header).startswith(PREFIX) and str(cell).strip() for header, cell in cells.items())
