"""Labeled cases from the history: every label and vote on a rubric's scored judgments, as the (judge, person) pairs
calibration compares, and as the cases `labels export` writes (in a CSV a drift check reads back)."""

from __future__ import annotations

import csv
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TextIO

from bot.csvfiles.results import neutralise
from bot.store import Judgment, LabeledItem, Scope, Store, labeled_items, labeled_judgments, was_removed
from bot.trust.calibration import LabeledVerdict, VerdictRow
from bot.trust.labels import PASS, PREFIX, HumanValues, labelable, value_at, vote_as_label

if TYPE_CHECKING:
    from bot.rubric import Rubric

TEXT_COLUMNS = ["question", "reference", "answer", "model"]
JUDGE_COLUMNS = ["judge_pass", "judge_tag", "judge_model", "rubric_version", "labeled_by", "labeled_at", "judgment_id"]
SOURCE_COLUMN = "label_source"  # where human_pass came from: given, rule, or a vote; empty when pass/fail is not given
AGREE_VOTE, DISAGREE_VOTE = "vote: agree", "vote: disagree"
SLACK = 1_000  # rows made kept beyond those of a reading of every label and vote, before the others are dropped
LIMIT = 200_000  # rows made kept, whatever was read, before those of other readings are dropped
# per store, by numeric paths and `compared_only`: the row made of each item `labeled_items` read, by the item's id
_made: weakref.WeakKeyDictionary[Store, dict[tuple[Any, ...], dict[int, tuple[LabeledItem, VerdictRow]]]] = (
    weakref.WeakKeyDictionary())
_keeping = threading.Lock()


def labeled_verdicts(store: Store, *, rubric_name: str, judge_model: str | None = None, channel_id: str | None = None,
                     team_id: str | None = None, since: datetime | None = None, numeric: Sequence[str] = (),
                     everywhere: bool = False) -> list[LabeledVerdict]:
    """Every label and vote on scored judgments of a rubric as (judge, person) pairs, the oldest first.

    `channel_id` None means the judgments made in a terminal, unless `everywhere`. A vote is read as a label by
    `vote_as_label`. `numeric` names the dotted paths whose values are compared; the judgments' outputs are read only
    when there are some.
    """
    rows = verdict_rows(store, rubric_name=rubric_name, judge_model=judge_model, channel_id=channel_id,
                        team_id=team_id, since=since, numeric=numeric, everywhere=everywhere, compared_only=False)
    return [LabeledVerdict.model_construct(**{**row._asdict(), "judge_values": dict(row.judge_values),
                                              "human_values": dict(row.human_values)}) for row in rows]


def verdict_rows(store: Store, *, rubric_name: str, judge_model: str | None = None, channel_id: str | None = None,
                 team_id: str | None = None, since: datetime | None = None, numeric: Sequence[str] = (),
                 everywhere: bool = False, compared_only: bool = True) -> list[VerdictRow]:
    """`labeled_verdicts` as plain rows, the oldest first: what calibration reads. With `compared_only`, the judge's
    values are read only where the person's side has values to compare them with (a label with numbers of its own,
    or an Agree, which says the judge's): calibration's figures are the same, and most outputs are left unread.
    Rows of the same numbers share one dict of them (read, never changed); the row made of an item the store kept
    from an earlier reading (`labeled_items`: the label or vote and its judgment as they were) is the one made then."""
    scope = Scope(rubric_name, judge_model, channel_id, team_id, everywhere)
    items = labeled_items(store, scope, since, numeric, compared_only=compared_only)
    with _keeping:
        made = _made.setdefault(store, {}).setdefault((tuple(numeric), compared_only), {})
    by_path: dict[tuple[float | None, ...], dict[str, float]] = {}  # rows alike share one dict, read and never changed
    votes: dict[tuple[Any, ...], tuple[bool | None, str | None, dict[str, float]]] = {}  # votes alike read alike

    def values_of(numbers: tuple[float | None, ...]) -> dict[str, float]:
        found = by_path.get(numbers)
        if found is None:
            found = by_path[numbers] = {path: number for path, number in zip(numeric, numbers, strict=False)
                                        if number is not None}
        return found

    rows: list[VerdictRow] = []
    add = rows.append
    new: dict[int, tuple[LabeledItem, VerdictRow]] = {}
    for item in items:
        kept = made.get(id(item))
        if kept is not None and kept[0] is item:
            add(kept[1])
            continue
        vote, at, case, said, said_tag, said_numbers, passed, tag, judge_numbers, judge_model, rubric_hash = item
        values = by_path.get(judge_numbers) or values_of(judge_numbers)
        if vote:
            key = (said, passed, tag, judge_numbers)
            read = votes.get(key)
            if read is None:
                label = vote_as_label(bool(said), passed=passed, tag=tag, values=values)
                read = votes[key] = (label.passed, label.tag, values_of(tuple(label.values.get(path) for path in numeric))
                                     if label.values else values_of(()))
            row = VerdictRow(passed, tag, values, *read, at, judge_model, rubric_hash, case)
        else:
            row = VerdictRow(passed, tag, values, said, said_tag, by_path.get(said_numbers) or values_of(said_numbers),
                             at, judge_model, rubric_hash, case)
        new[id(item)] = (item, row)
        add(row)
    with _keeping:
        made.update(new)
        whole = since is None and channel_id is None and everywhere and team_id is None and judge_model is None
        if len(made) > len(items) + SLACK and (whole or len(made) > LIMIT):  # those no longer read are dropped
            _made[store][tuple(numeric), compared_only] = {id(item): (item, row) for item, row in zip(items, rows)}
    return sorted(rows, key=itemgetter(6))  # by labeled_at


@dataclass
class LabeledCase:
    """One label or vote in the history, with the judgment it is about and what the person says as field values."""

    judgment: Judgment
    labeled_by: str
    labeled_at: datetime
    human: HumanValues
    source: str | None  # GIVEN or RULE for a label's pass/fail, AGREE_VOTE or DISAGREE_VOTE for a vote's
    note: str | None = None  # what the person wrote with a correction


def labeled_cases(store: Store, rubric: Rubric, channel_id: str | None) -> list[LabeledCase]:
    """Every label and vote on scored judgments of the rubric (in one channel, or everywhere), the oldest first.

    A vote is read as a label by `vote_as_label`, as calibration's figures read it. Judgments whose texts were
    removed (RETENTION_DAYS) are left out: they cannot be exported or judged again (calibration still counts them).
    """
    labels, votes = labeled_judgments(store, rubric_name=rubric.name, channel_id=channel_id,
                                      everywhere=channel_id is None)
    labels = [(label, judgment) for label, judgment in labels if not was_removed(judgment)]
    votes = [(vote, judgment) for vote, judgment in votes if not was_removed(judgment)]
    cases = [LabeledCase(judgment, label.user_id, label.updated_at, label_values(label.values, label.passed, rubric),
                         label.pass_from if label.passed is not None else None, label.note) for label, judgment in labels]
    cases += [LabeledCase(judgment, vote.user_id, vote.updated_at, vote_values(vote.agree, judgment, rubric),
                          AGREE_VOTE if vote.agree else DISAGREE_VOTE) for vote, judgment in votes]
    return sorted(cases, key=lambda case: (case.labeled_at, case.judgment.id))


def label_values(values: dict[str, Any], passed: bool | None, rubric: Rubric) -> HumanValues:
    """A saved label as a person's values: only the fields of the rubric a person can label."""
    fields = labelable(rubric)
    return HumanValues(values={path: value for path, value in values.items() if path in fields}, passed=passed)


def vote_values(agree: bool, judgment: Judgment, rubric: Rubric) -> HumanValues:
    """A vote as a person's values, read by `vote_as_label` against the judge's labelable values."""
    found = {path: value_at(judgment.output, path) for path in labelable(rubric)}
    said = vote_as_label(agree, passed=judgment.passed,
                         values={path: value for path, value in found.items() if value is not None})
    return HumanValues(values=said.values, passed=said.passed)


def write_labels(out: TextIO, cases: list[LabeledCase], paths: list[str], *, context: bool = False) -> None:
    """The labels as CSV: the texts (with a context column of each case's passages as a JSON list, for a rubric that
    reads context), the person's values and where their pass/fail came from (SOURCE_COLUMN: as
    they gave it, by the pass rule on their own values, or a vote on the judge's verdict, whose values an Agree
    confirms), then the judge's verdict and who labeled it when."""
    writer = csv.writer(out)
    texts = [*TEXT_COLUMNS, *(("context",) if context else ())]
    writer.writerow([*texts, PREFIX + PASS, *(PREFIX + path for path in paths), SOURCE_COLUMN, *JUDGE_COLUMNS])
    for case in cases:
        judgment = case.judgment
        cells = [judgment.question, judgment.reference, judgment.answer, judgment.model_name,
                 *((judgment.context or "[]",) if context else ()),
                 case.human.passed, *(case.human.values.get(path) for path in paths), case.source,
                 judgment.passed, judgment.tag, judgment.judge_model, judgment.rubric_version, case.labeled_by,
                 case.labeled_at.isoformat(timespec="seconds"), judgment.id]
        writer.writerow([neutralise(cell_text(cell)) for cell in cells])


def cell_text(value: object) -> str:
    """A value as a CSV cell: booleans as true/false, nothing as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
