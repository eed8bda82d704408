"""People's labels and votes as calibration last read them, kept per store with the judge's side of each (the
judgment's scope, verdict and numbers): a label or vote whose row reads as it did, on a scored judgment, is taken as
it was, without looking its judgment up or reading it again."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa

from bot.records import RowState
from bot.store.runs.rows import id_chunks
from bot.store.tables.core import JUDGMENT

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from bot.store.database import Store


class Side(NamedTuple):
    """What calibration reads of the judgment a label or vote is about: what tells whether it counts (`place`, in
    the order of `Scope.counts`), the judge's pass/fail and tag, its numbers at the paths asked, judge and rubric
    text."""

    place: tuple[str, str, str, str | None, str | None]  # status, rubric, judge, channel, workspace
    passed: bool | None
    tag: str | None
    numbers: tuple[float | None, ...]
    judge_model: str
    rubric_hash: str


class Read:
    """A label's or vote's row as read (every column calibration reads of it), its judgment's side, and what was
    made of them (by whoever reads them: one slot per way of reading)."""

    __slots__ = ("made", "row", "side")

    def __init__(self, row: tuple[Any, ...], side: Side) -> None:
        self.row, self.side = row, side
        self.made: list[Any] = [None, None]


# (whether a vote, its id): a row of the labels' or the votes' table
RowId = tuple[bool, int]
_kept: weakref.WeakKeyDictionary[Store, dict[tuple[str, ...], dict[RowId, Read]]] = weakref.WeakKeyDictionary()
_keeping = threading.Lock()
SLACK = 1_000  # rows kept beyond those of a reading of every label and vote, before the others are dropped


def judged_rows(store: Store, conn: Connection, paths: Sequence[str], labels: Sequence[Any], votes: Sequence[Any], *,
                numbers_at: Callable[[Any], Any], numbers: Callable[[str | None], tuple[float | None, ...]],
                every_row: bool) -> tuple[list[Read | None], list[Read | None]]:
    """Each of the `labels` and `votes` read on `conn` (rows starting with their id and judgment id) with its
    judgment's side, the numbers at `paths` (`numbers_at` the SQL expression of an output's numbers, `numbers` what
    reads it); None where the judgment is gone.

    A row that reads as it did before on a scored judgment is the one kept then: a scored verdict never changes (a
    judgment is judged again only from a judge error or an invalid reply), and a row changed in any column read
    (turned, relabeled, moved to another judgment), or made anew, is looked up again. With `every_row` the rows are
    every label and vote that can count, and those kept of rows no longer among them are dropped."""
    with _keeping:
        kept = _kept.setdefault(store, {}).setdefault(tuple(paths), {})
    found: list[Read | None] = []
    missing: list[tuple[int, RowId, tuple[Any, ...]]] = []
    for vote, rows in ((False, labels), (True, votes)):
        for row in map(tuple, rows):  # plain tuples: compared as they are, column by column
            read = kept.get((vote, row[0]))
            if read is not None and read.row == row:
                found.append(read)
            else:
                missing.append((len(found), (vote, row[0]), row))
                found.append(None)
    if missing:
        sides = _sides(conn, sorted({row[1] for _, _, row in missing}), numbers_at, numbers)
        new: dict[RowId, Read] = {}
        for place, key, row in missing:
            side = sides.get(row[1])
            if side is not None:
                read = found[place] = Read(row, side)
                if side.place[0] == RowState.SCORED:
                    new[key] = read
        with _keeping:
            kept.update(new)
    if every_row and len(kept) > len(found) + SLACK:
        with _keeping:
            _kept[store][tuple(paths)] = {(place >= len(labels), read.row[0]): read
                                          for place, read in enumerate(found)
                                          if read is not None and read.side.place[0] == RowState.SCORED}
    return found[:len(labels)], found[len(labels):]


def _sides(conn: Connection, ids: list[int], numbers_at: Callable[[Any], Any],
           numbers: Callable[[str | None], tuple[float | None, ...]]) -> dict[int, Side]:
    """The sides of the judgments of `ids` that are there, by id."""
    judgment = JUDGMENT
    output = numbers_at(judgment.c.output)
    sides: dict[int, Side] = {}
    alike: dict[Side, Side] = {}  # judgments alike in all a side holds share one (kept for thousands of rows)
    for chunk in id_chunks(ids):
        for number, status, name, judge, channel, team, passed, tag, out, rubric_hash in conn.execute(
                sa.select(judgment.c.id, judgment.c.status, judgment.c.rubric_name, judgment.c.judge_model,
                          judgment.c.channel_id, judgment.c.team_id, judgment.c.passed, judgment.c.tag, output,
                          judgment.c.rubric_hash).where(judgment.c.id.in_(chunk))):
            side = Side((status, name, judge, channel, team), passed, tag, numbers(out), judge, rubric_hash)
            sides[number] = alike.setdefault(side, side)
    return sides
