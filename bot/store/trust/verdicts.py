"""Calibration's labeled verdicts read by the database: each label, and each vote that stands, on the scored judgments
of a scope, with the judge's verdict and the numbers both sides hold at the rubric's numeric paths (the labels and
votes in one query each, their judgments looked up by id where not kept from an earlier reading, never scanned)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa
from sqlmodel import col

from bot.store.tables.history import Feedback
from bot.store.tables.trust import Label
from bot.store.trust.kept_rows import judged_rows
from bot.store.trust.labels import Scope, standing_vote

if TYPE_CHECKING:
    from bot.store.database import Store

FULL = "="  # what starts a JSON document SQLite cannot read (NaN in it): read whole, by Python's reader


class LabeledItem(NamedTuple):
    """A label, or a vote that stands, as calibration reads it: when it was given, on which case, what the person
    said (a label's pass/fail, tag and numbers; a vote's Agree as `said`), and the judge's pass/fail, tag, numbers,
    judge and rubric text. Numbers are by path, each None where the value there is no number; a judge's numbers are
    read where there is something to compare them with (a label with numbers, an Agree)."""

    vote: bool
    at: datetime
    case_key: str | None
    said: bool | None
    said_tag: str | None
    said_numbers: tuple[float | None, ...]
    judge_passed: bool | None
    judge_tag: str | None
    judge_numbers: tuple[float | None, ...]
    judge_model: str
    rubric_hash: str


def labeled_items(store: Store, scope: Scope, since: datetime | None, paths: Sequence[str], *,
                  compared_only: bool = True) -> list[LabeledItem]:
    """The labels and the votes that stand (`standing_vote`) given since `since` on the judgments in `scope`: the
    labels in the order given, then the votes; with the numbers at `paths` (dotted: nested in the judge's output,
    flat keys of a label's values), the judge's only where compared (`compared_only`) or everywhere. The same as
    reading each label, vote and judgment and their values in Python (bot.trust.labels.numbers_at).

    The labels and votes are read whole (people's clicks, few: one query each, the person's numbers read out of the
    JSON there); the judgment each is about is looked up only where it was not read before for the row as it is now
    (`judged_rows`: a scored verdict never changes), so that after a label or vote only that one is looked up, and a
    row that reads as it did is the item made of it before."""
    dialect = store.engine.dialect.name
    labels = (sa.select(col(Label.id), col(Label.judgment_id), col(Label.updated_at), col(Label.case_key),
                        col(Label.passed), col(Label.tag), _numbers_at(dialect, col(Label.values), paths, nested=False))
              .where(*([col(Label.updated_at) >= since] if since else [])).order_by(col(Label.id)))
    votes = (sa.select(col(Feedback.id), col(Feedback.judgment_id), col(Feedback.updated_at), col(Feedback.case_key),
                       col(Feedback.agree))
             .where(*([col(Feedback.updated_at) >= since] if since else []), standing_vote())
             .order_by(col(Feedback.id)))
    with store.engine.connect() as conn:
        label_rows, vote_rows = judged_rows(
            store, conn, paths, conn.execute(labels).all(), conn.execute(votes).all(), every_row=since is None,
            numbers_at=lambda output: _numbers_at(dialect, output, paths, nested=True),
            numbers=lambda found: _numbers(found, paths, nested=True))
    made = 1 if compared_only else 0  # the slot of what is made of a row, for each way of reading
    counted: dict[tuple[Any, ...], bool] = {}  # the places the scope holds

    def held(place: tuple[Any, ...]) -> bool:
        """Whether the scope holds a judgment in this place (its status, rubric, judge, channel, workspace)."""
        holds = counted.get(place)
        if holds is None:
            holds = counted[place] = scope.counts(*place)
        return holds

    found: list[LabeledItem] = []
    add = found.append
    none = (None,) * len(paths)
    for read in label_rows:
        if read is None or not held(read.side.place):
            continue
        side = read.side
        item = read.made[made]
        if item is None:
            _, _, at, case, said, said_tag, said_values = read.row
            said_numbers = _numbers(said_values, paths, nested=False)
            compared = not compared_only or said_numbers != none
            item = read.made[made] = LabeledItem(False, at, case, said, said_tag, said_numbers, side.passed, side.tag,
                                                 side.numbers if compared else (), side.judge_model, side.rubric_hash)
        add(item)
    for read in vote_rows:
        if read is None or not held(read.side.place):
            continue
        side = read.side
        item = read.made[made]
        if item is None:
            _, _, at, case, agree = read.row
            item = read.made[made] = LabeledItem(True, at, case, agree, None, (), side.passed, side.tag,
                                                 side.numbers if agree or not compared_only else (), side.judge_model,
                                                 side.rubric_hash)
        add(item)
    return found


def _numbers_at(dialect: str, column: Any, paths: Sequence[str], *, nested: bool) -> Any:
    """The JSON values at `paths` of a JSON column, as the text of a JSON array (None for no document): the values
    only, not the document, and each as its JSON text (so a number reads as Python's JSON reader reads it). A path is
    dotted: nested objects (`nested`), else one key holding dots. SQLite cannot read a document holding NaN: that one
    comes whole, after FULL."""
    if not paths:
        return sa.null()
    keys = [path.split(".") if nested else [path] for path in paths]
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import ARRAY

        parts = [column.op("#>")(sa.literal(key, ARRAY(sa.Text))) for key in keys]
        return sa.cast(sa.func.json_build_array(*parts), sa.Text)
    if any('"' in part for key in keys for part in key):  # no SQLite path names such a key: read the document
        return sa.literal(FULL) + sa.cast(column, sa.Text)
    texts = ["$" + "".join(f'."{part}"' for part in key) for key in keys]
    text = sa.type_coerce(column, sa.Text)
    return sa.case((sa.func.json_valid(text), sa.func.json_extract(text, *texts, *texts[:1] * (len(texts) == 1))),
                   else_=sa.literal(FULL) + text)


def _numbers(found: str | None, paths: Sequence[str], *, nested: bool) -> tuple[float | None, ...]:
    """The numbers at `paths` of what `_numbers_at` read: each as a float, None where there is no number (a
    boolean is none)."""
    if found is None or not paths:
        return (None,) * len(paths)
    if found.startswith(FULL):
        document = json.loads(found[len(FULL):])
        values = [_at(document, path) if nested else (document.get(path) if isinstance(document, dict) else None)
                  for path in paths]
    else:
        values = json.loads(found)
    return tuple(float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
                 for value in values[:len(paths)])


def _at(document: Any, path: str) -> Any:
    """The value at a dotted path of nested objects, or None where any part is missing."""
    for part in path.split("."):
        if not isinstance(document, dict):
            return None
        document = document.get(part)
    return document
