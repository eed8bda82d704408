"""Tests for bot.store.counts.counting: the chain of a case's judgments, kept as verdicts are saved and rows judged again,
by writers one after the other and at once (SQLite and PostgreSQL), always equal to the chain worked out afresh."""

from __future__ import annotations

import random
import threading
from datetime import datetime, timedelta

import sqlalchemy as sa

from bot.store import (
    Feedback,
    JudgmentTally,
    Link,
    RowVerdict,
    Store,
    add_judgments,
    add_rows,
    create_run,
    iter_judgments,
    replacements,
    reset_rows,
    save_verdicts,
)
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support.store_rows import COMMON, make_verdict, row

T0 = datetime(2026, 11, 16, 9, 0)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_score_is_replaced_by_the_next_score_and_a_failure_by_whatever_comes_next() -> None:
    links = [Link(1, at(0), False), Link(2, at(1), True), Link(3, at(2), False), Link(4, at(3), True),
             Link(5, at(4), False)]
    assert replacements(links) == {1: at(1), 2: at(3), 3: at(2), 4: None, 5: at(4)}
    # failures alone: each stands until the next
    assert replacements([Link(2, at(1), False), Link(1, at(0), False)]) == {1: at(1), 2: None}
    # two judgments at the same moment: the later id stands
    assert replacements([Link(7, at(0), True), Link(6, at(0), True)]) == {6: at(0), 7: None}
    assert replacements([]) == {}


def afresh(store: Store) -> dict[int, datetime | None]:
    """Every judged row's replaced_at as the chains give it from nothing."""
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(JudgmentTable.id, JudgmentTable.case_hash, JudgmentTable.judged_at, JudgmentTable.status)
                            .where(JudgmentTable.status.in_(("scored", "invalid", "error")))).all()
    chains: dict[str, list[Link]] = {}
    for id_, case, judged_at, status in rows:
        chains.setdefault(case, []).append(Link(id_, judged_at, status == "scored"))
    found: dict[int, datetime | None] = {}
    for links in chains.values():
        found.update(replacements(links))
    return found


def kept(store: Store) -> dict[int, datetime | None]:
    with store.engine.connect() as conn:
        return dict(conn.execute(sa.select(JudgmentTable.id, JudgmentTable.replaced_at)
                                 .where(JudgmentTable.status.in_(("scored", "invalid", "error")))).all())


def tallies(store: Store, *, recount: bool = False) -> list[tuple]:
    table = JudgmentTally.__table__
    with store.engine.connect() as conn:
        transaction = conn.begin()
        if recount:
            conn.execute(table.delete())
            add_judgments(conn, JudgmentTable.__table__, table, sa.true(), feedback=Feedback.__table__)
        found = sorted(tuple(round(v, 6) if isinstance(v, float) else v for v in r)  # sums in another order
                       for r in conn.execute(sa.select(*[c for c in table.c if c.name != "id"])))
        transaction.rollback()
    return found


def test_saves_and_rows_judged_again_keep_every_chain_and_the_tally_as_counted_afresh(store: Store) -> None:
    rng = random.Random(11)
    run = create_run(store, **COMMON)
    # 60 rows of 6 cases (the same texts repeated), judged one group after another in a shuffled order
    add_rows(store, [row(run.id, n, question=f"q{n % 6}", reference="r", answer="a") for n in range(60)])
    ids = [j.id for j in iter_judgments(store, run.id)]
    rng.shuffle(ids)
    for start in range(0, 60, 7):
        group = [RowVerdict(i, make_verdict(status=rng.choice(("scored", "scored", "error")),
                                            headline=rng.random()), "k") for i in ids[start:start + 7]]
        assert all(save_verdicts(store, group))
        assert kept(store) == afresh(store)
        assert tallies(store) == tallies(store, recount=True)
    standing = [i for i, replaced in kept(store).items() if replaced is None]
    assert len(standing) == 6  # one a case
    assert reset_rows(store, run.id, ("error",)) > 0  # failures judged again: the chains close over the gap
    assert kept(store) == afresh(store) and tallies(store) == tallies(store, recount=True)
    assert reset_rows(store, run.id, ("scored",)) > 0
    assert kept(store) == afresh(store) == {} and tallies(store) == tallies(store, recount=True) == []


def test_writers_at_once_leave_one_standing_verdict_a_case(store: Store) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, n, question=f"q{n % 3}", reference="r", answer="a") for n in range(48)])
    ids = [j.id for j in iter_judgments(store, run.id)]
    errors: list[BaseException] = []

    def write(mine: list[int]) -> None:
        try:
            for start in range(0, len(mine), 2):
                save_verdicts(store, [RowVerdict(i, make_verdict(), "k") for i in mine[start:start + 2]])
        except BaseException as err:  # reported by the test
            errors.append(err)

    writers = [threading.Thread(target=write, args=(ids[n::6],)) for n in range(6)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert errors == []
    assert kept(store) == afresh(store)
    assert sum(replaced is None for replaced in kept(store).values()) == 3
    assert tallies(store) == tallies(store, recount=True)
