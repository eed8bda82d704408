"""The judge's side of people's labels and votes (the judgment's scope, verdict and numbers), kept per store once read:
a label or vote whose row is as it was, on a scored judgment, reads what it read before without looking it up."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa
from sqlmodel import col

from bot.records import RowState
from bot.store.runs.rows import id_chunks
from bot.store.tables.history import Judgment, table_of

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from bot.store.database import Store


class Side(NamedTuple):
    """What calibration reads of the judgment a label or vote is about: what tells whether it counts (in the order
    of `Scope.counts`), the judge's pass/fail and tag, its numbers at the paths asked (as `numbers` reads them),
    judge and rubric text."""

    status: str
    rubric_name: str
    judge_model: str
    channel_id: str | None
    team_id: str | None
    passed: bool | None
    tag: str | None
    numbers: tuple[float | None, ...]
    rubric_hash: str


# A label's or vote's row as it was read: (whether a vote, its id, its judgment's id, when it was last changed). A
# row changed (turned, relabeled, moved to another judgment) or made anew (its id taken again after a deletion) comes
# under another key, and its judgment is looked up again.
RowKey = tuple[bool, int, int, datetime]

_kept: weakref.WeakKeyDictionary[Store, dict[tuple[str, ...], dict[RowKey, Side]]] = weakref.WeakKeyDictionary()
_keeping = threading.Lock()
SLACK = 1_000  # rows kept beyond those read by a reading of every label and vote, before the others are dropped


def judged_sides(store: Store, conn: Connection, paths: Sequence[str], rows: Sequence[RowKey], *,
                 numbers_at: Callable[[Any], Any], numbers: Callable[[str | None], tuple[float | None, ...]],
                 every_row: bool) -> list[Side | None]:
    """The judgment's side of each of `rows` (labels and votes read on `conn`), with its numbers at `paths`
    (`numbers_at` the SQL expression of an output's numbers, `numbers` what reads it): kept from an earlier reading
    where the row is as it was then and its judgment was scored (a scored verdict is never changed: a judgment is
    judged again only from a judge error or an invalid reply); the others read by id. None where the judgment is
    gone. With `every_row` the rows are every label and vote that can count, and those kept of rows no longer among
    them are dropped."""
    with _keeping:
        kept = _kept.setdefault(store, {}).setdefault(tuple(paths), {})
    found: list[Side | None] = [kept.get(key) for key in rows]
    missing = sorted({key[2] for key, side in zip(rows, found) if side is None})
    if missing:
        read: dict[int, Side] = {}
        judgment = table_of(Judgment)
        output = numbers_at(col(Judgment.output))
        for chunk in id_chunks(missing):
            for row in conn.execute(sa.select(judgment.c.id, judgment.c.status, judgment.c.rubric_name,
                                              judgment.c.judge_model, judgment.c.channel_id, judgment.c.team_id,
                                              judgment.c.passed, judgment.c.tag, output, judgment.c.rubric_hash)
                                    .where(judgment.c.id.in_(chunk))):
                number, status, name, judge, channel, team, passed, tag, out, rubric_hash = row
                read[number] = Side(status, name, judge, channel, team, passed, tag, numbers(out), rubric_hash)
        new: dict[RowKey, Side] = {}
        for place, (key, side) in enumerate(zip(rows, found)):
            if side is None:
                side = found[place] = read.get(key[2])
                if side is not None and side.status == RowState.SCORED:
                    new[key] = side
        with _keeping:
            kept.update(new)
    if every_row and len(kept) > len(rows) + SLACK:
        with _keeping:
            _kept[store][tuple(paths)] = {key: side for key, side in zip(rows, found)
                                          if side is not None and side.status == RowState.SCORED}
    return found
