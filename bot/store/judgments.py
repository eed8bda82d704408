"""The history and the rows of its runs: saved before judging, verdicts recorded once, read back in order (the runs
themselves: bot.store.run_records)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, update
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import SQLModel, col, select

from bot.errors import RunBusy, StoreUnavailable
from bot.records import JUDGED_FIELDS, VERDICT_FIELDS, RowState, RunState, Triple, Verdict
from bot.store.billing import bill_judgments
from bot.store.case_keys import case_key, texts_removed
from bot.store.counting import counted_case, lock_cases, restack
from bot.store.engine import (
    CANNOT_OPEN,
    check_sqlite_file,
    first_line,
    history_name,
    make_engine,
    one_at_a_time,
    quick_check,
)
from bot.store.models import BilledTally, Feedback, Judgment, JudgmentSample, JudgmentTally, Run, table_of, utcnow
from bot.store.run_records import LOAD_LOST, RunRecords
from bot.store.schema import set_up
from bot.store.tallies import add_judgments, question_key, tally_upsert

VERDICT_COLUMNS = [*VERDICT_FIELDS, "cache_key", "cached_from", "judged_at"]
INSERT_BATCH = 1_000
ID_CHUNK = 500  # ids in one IN (...): under every database's limit of bound parameters


def id_chunks(ids: list[int]) -> list[list[int]]:
    """`ids` in runs of at most ID_CHUNK, one query each."""
    return [ids[start:start + ID_CHUNK] for start in range(0, len(ids), ID_CHUNK)]


@dataclass(frozen=True)
class RowVerdict:
    """A verdict to record on a pending row, with the key it is found under again and the row it was reused from."""

    judgment_id: int
    verdict: Verdict
    cache_key: str
    cached_from: int | None = None


def _pending_texts(run_id: int) -> Any:
    """The id and texts of a run's pending rows."""
    table = table_of(Judgment)
    texts = (table.c.id, table.c.question, table.c.reference, table.c.answer, table.c.answer_b, table.c.swapped)
    return table.select().with_only_columns(*texts).where(table.c.run_id == run_id, table.c.status == RowState.PENDING)


def case_of(row: dict[str, Any]) -> str:
    """The case a new judgment row is counted under (bot.store.counting)."""
    label_case = case_key(row.get("team_id"), row.get("channel_id"), row["rubric_name"], row["question"],
                          row["reference"], row["answer"], row.get("answer_b"))
    return counted_case(label_case, row.get("model_name"), row.get("model_b"), row.get("swapped"))


def triple_of(row: Any) -> Triple:
    """The texts a row is judged on, as the judge is shown them: a pair's answers in the order it is shown (B first
    when the row is the pair swapped)."""
    if row.answer_b is None:
        return Triple(question=row.question, reference=row.reference, answer=row.answer)
    first, second = (row.answer_b, row.answer) if row.swapped else (row.answer, row.answer_b)
    return Triple(question=row.question, reference=row.reference, answer=first, answer_b=second)


class Store(RunRecords):
    """Runs and judgments, over one engine; every method is its own transaction.

    On SQLite every transaction takes the write lock when it begins, so never hold two
    sessions open in one thread: the second would wait for the first until the busy timeout.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.created = False  # whether `open` created this history, new and empty
        table = table_of(Judgment)
        ids = table.c.id.in_(bindparam("ids", expanding=True))
        # The statements of the hot path are built once; Core rather than the ORM keeps them cheap.
        self._cases_of = select(table.c.case_hash).where(ids).distinct()
        self._still_pending = select(table.c.id).where(ids, table.c.status == RowState.PENDING).with_for_update()
        self._save = (
            table.update()
            .where(table.c.id == bindparam("judgment_id"), table.c.status == RowState.PENDING)
            .values({name: bindparam(name) for name in VERDICT_COLUMNS})
        )
        self._count = tally_upsert(engine.dialect.name, table, table_of(JudgmentTally), ids, feedback=table_of(Feedback))
        self._bill = bill_judgments(engine.dialect.name, table, table_of(BilledTally), ids)
        scored = (table.c.cache_key.in_(bindparam("keys", expanding=True)), table.c.status == RowState.SCORED)
        self._cached = {scoped: table.select().where(table.c.id.in_(
            select(func.min(table.c.id)).where(*scored, *((table.c.run_id == bindparam("run_id"),) if scoped else ()))
            .group_by(table.c.cache_key).scalar_subquery())) for scoped in (False, True)}

    @classmethod
    def open(cls, url: str) -> Store:
        """Connect to `url`, check it holds a judgebot history (or nothing) and bring its schema up to date.

        Raises:
            SetupError: `url` cannot be used (unparsable, an unknown database, its driver not installed).
            StoreUnavailable: the database cannot be opened, is not a judgebot history, or is damaged.
        """
        engine = make_engine(url)
        try:
            with one_at_a_time(engine):
                check_sqlite_file(engine)
                created = set_up(engine)
        except Exception as err:
            # The driver's own errors too: psycopg's connection refusal comes through unwrapped.
            driver = getattr(getattr(engine.dialect, "loaded_dbapi", None), "Error", None)
            known = (SQLAlchemyError, OSError, sqlite3.Error, *((driver,) if isinstance(driver, type) else ()))
            if not isinstance(err, known):
                raise
            reason = first_line(getattr(err, "orig", None) or err)
            raise StoreUnavailable(CANNOT_OPEN.format(name=history_name(engine), reason=reason)) from None
        store = cls(engine)
        store.created = created
        store.fail_abandoned_loads()
        return store

    @property
    def name(self) -> str:
        """How messages name the history: its file, or its URL without the password."""
        return history_name(self.engine)

    def check_integrity(self) -> None:
        """Run SQLite's quick check over the whole history (a no-op elsewhere).

        Raises:
            StoreUnavailable: the history is damaged; the message names the first problem and how to recover.
        """
        quick_check(self.engine)

    def ping(self) -> None:
        """Ask the database one trivial question; raises when it cannot answer (a health check)."""
        with self.engine.connect() as conn:
            conn.execute(select(1))

    def reset_rows(self, run_id: int, statuses: tuple[str, ...]) -> int:
        """Make rows of these statuses pending again, to be judged anew; return how many."""
        cleared = dict.fromkeys([*JUDGED_FIELDS, "judged_at", "cached_from"])
        # A row whose texts were removed (bot.store.retention) has nothing left to judge: it keeps its verdict.
        kept = texts_removed(col(Judgment.question), col(Judgment.reference))
        chosen = (col(Judgment.run_id) == run_id) & col(Judgment.status).in_(statuses) & ~kept
        with self.engine.begin() as conn:
            cases = conn.execute(select(col(Judgment.case_hash)).where(chosen).distinct()).scalars().all()
            lock_cases(conn, cases)  # before any row: a writer of the same cases waits here, never in between
            conn.execute(select(Judgment.id).where(chosen).with_for_update())  # no verdict lands in between
            add_judgments(conn, table_of(Judgment), table_of(JudgmentTally), chosen, sign=-1, feedback=table_of(Feedback))
            result = conn.execute(update(Judgment).where(chosen).values(
                status=RowState.PENDING, tokens_in=0, tokens_out=0, tokens_cached=0, cost_usd=None, latency_ms=0,
                attempts=0, claimed_by=None, claimed_at=None, replaced_at=None, **cleared))
            self._restack(conn, cases)  # what they had replaced stands again
            # Their samples that failed are asked again; those that scored were paid for and stay.
            rows = select(Judgment.id).where(col(Judgment.run_id) == run_id, col(Judgment.status) == RowState.PENDING)
            conn.execute(delete(JudgmentSample).where(col(JudgmentSample.judgment_id).in_(rows),
                                                      col(JudgmentSample.status) != RowState.SCORED))
            return result.rowcount

    def add_rows(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert judgment rows (pending or malformed) in batches; return how many."""
        count = 0
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= INSERT_BATCH:
                count += self._insert(batch)
                batch = []
        if batch:
            count += self._insert(batch)
        return count

    def _insert(self, batch: list[dict[str, Any]]) -> int:
        now = utcnow()
        loading = {row["run_id"] for row in batch}
        with self.session() as session:
            session.execute(insert(Judgment), [
                {"created_at": now, "question_key": question_key(row.get("model_name"), row["rubric_name"],
                                                                 row["question"]),
                 "case_hash": case_of(row), **row} for row in batch])
            # The process loading the run shows it is alive, so another host never takes it for abandoned.
            session.execute(update(Run).where(col(Run.id).in_(loading), col(Run.status) == RunState.LOADING)
                            .values(heartbeat_at=now))
            failed = session.exec(select(Run.id).where(col(Run.id).in_(loading), Run.status == RunState.FAILED)).all()
            if failed:  # another process gave the run up meanwhile and dropped its rows: these are not kept either
                session.rollback()
                raise RunBusy(LOAD_LOST.format(run_id=", ".join(map(str, sorted(failed)))))
            session.commit()
        return len(batch)

    def pending(self, run_id: int, *, after_id: int = 0, limit: int = 500) -> list[Judgment]:
        """The next pending rows of a run, in row order, after `after_id`."""
        with self.session() as session:
            statement = (
                select(Judgment)
                .where(Judgment.run_id == run_id, Judgment.status == RowState.PENDING, Judgment.id > after_id)
                .order_by(col(Judgment.id))
                .limit(limit)
            )
            return list(session.exec(statement))

    def pending_texts(self, run_id: int, *, page: int = 5_000) -> Iterator[Triple]:
        """The texts of every pending row of a run, in row order, read a page at a time (as columns, not entities)."""
        return (triple_of(row) for row in self._paged(_pending_texts(run_id), page))

    def find_cached(self, cache_key: str, *, run_id: int | None = None) -> Judgment | None:
        """An earlier successful judgment under `cache_key` (within one run when given), to reuse instead of billing."""
        return self.find_cached_many([cache_key], run_id=run_id).get(cache_key)

    def find_cached_many(self, cache_keys: Sequence[str], *, run_id: int | None = None) -> dict[str, Judgment]:
        """The earliest successful judgment under each of `cache_keys` that has one (within one run when given), in
        one query."""
        if not cache_keys:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(self._cached[run_id is not None], {"keys": list(cache_keys), "run_id": run_id})
            return {row["cache_key"]: Judgment.model_construct(**row) for row in rows.mappings()}

    def save_verdict(self, judgment_id: int, verdict: Verdict, *, cache_key: str, cached_from: int | None = None) -> bool:
        """Record a verdict on a pending row and count it; False when the row was no longer pending (never twice)."""
        return self.save_verdicts([RowVerdict(judgment_id, verdict, cache_key, cached_from)])[0]

    def save_verdicts(self, verdicts: Sequence[RowVerdict]) -> list[bool]:
        """Record verdicts on pending rows and count them, all in one transaction; for each, False when its row was no
        longer pending (a verdict is never recorded twice, nor two on one row)."""
        if not verdicts:
            return []
        judged_at = utcnow()
        asked = {"ids": [v.judgment_id for v in verdicts]}
        with self.engine.begin() as conn:
            cases = conn.execute(self._cases_of, asked).scalars().all()
            lock_cases(conn, cases)  # the chains of their cases first, then the rows: two writers never cross
            # Locked until the commit (SQLite's write lock is taken at BEGIN): no other writer lands in between.
            free = set(conn.execute(self._still_pending, asked).scalars())
            taken = []
            for item in verdicts:
                taken.append(item.judgment_id in free)
                free.discard(item.judgment_id)
            chosen = [item for item, ok in zip(verdicts, taken, strict=True) if ok]
            if chosen:
                conn.execute(self._save, [
                    {**item.verdict.model_dump(), "cache_key": item.cache_key, "cached_from": item.cached_from,
                     "judged_at": judged_at, "judgment_id": item.judgment_id} for item in chosen])
                saved = {"ids": [item.judgment_id for item in chosen]}
                conn.execute(self._count, saved)
                conn.execute(self._bill, saved)
                self._restack(conn, cases)
        return taken

    def _restack(self, conn: Connection, cases: Sequence[str | None]) -> None:
        """Chain the judged rows of these cases again (bot.store.counting), the tally following."""
        restack(conn, table_of(Judgment), table_of(JudgmentTally), table_of(Feedback),
                [case for case in cases if case is not None])

    def unsure_count(self, run_id: int) -> int:
        """How many rows of a run have a verdict whose samples split."""
        with self.session() as session:
            statement = select(func.count()).where(Judgment.run_id == run_id, col(Judgment.unsure).is_(True))
            return int(session.execute(statement).scalar_one())

    def status_counts(self, run_id: int) -> dict[str, int]:
        """How many rows of a run are in each status."""
        with self.session() as session:
            statement = select(Judgment.status, func.count()).where(Judgment.run_id == run_id).group_by(Judgment.status)
            return {status: count for status, count in session.execute(statement)}

    def iter_judgments(self, run_id: int, *, page: int = 1_000) -> Iterator[Judgment]:
        """Every row of a run in row order, fetched a page at a time so memory stays flat."""
        after = 0
        while True:
            with self.session() as session:
                statement = (
                    select(Judgment).where(Judgment.run_id == run_id, Judgment.id > after).order_by(col(Judgment.id)).limit(page)
                )
                rows = list(session.exec(statement))
            if not rows:
                return
            yield from rows
            after = rows[-1].id

    def iter_columns(self, run_id: int, *, page: int = 1_000) -> Iterator[Row[Any]]:
        """Every row of a run in row order, as rows of the judgment's columns read a page at a time: named as a
        Judgment's attributes, without the cost of building entities (a results file reads every row)."""
        table = table_of(Judgment)
        return self._paged(table.select().where(table.c.run_id == run_id), page)

    def _paged(self, statement: Any, page: int) -> Iterator[Row[Any]]:
        """The rows of `statement` over judgments (its first column their id), in id order, `page` at a time, each
        page read after the last id of the one before."""
        table = table_of(Judgment)
        after = 0
        while True:
            with self.engine.connect() as conn:
                rows = conn.execute(statement.where(table.c.id > after).order_by(table.c.id).limit(page)).all()
            if not rows:
                return
            yield from rows
            after = rows[-1][0]

    def get_judgment(self, judgment_id: int) -> Judgment | None:
        """The judgment with `judgment_id`, if any."""
        with self.session() as session:
            return session.get(Judgment, judgment_id)

    def first_judgment(self, run_id: int) -> Judgment | None:
        """The first row of a run (the only one, for a run of one triple)."""
        with self.session() as session:
            return session.exec(select(Judgment).where(Judgment.run_id == run_id).order_by(col(Judgment.id))).first()

    def set_message(self, run_id: int, message_ts: str) -> None:
        """Remember the chat message that shows the judgments of a run, so lists can link to it."""
        with self.session() as session:
            session.execute(update(Judgment).where(col(Judgment.run_id) == run_id).values(message_ts=message_ts))
            session.commit()

    def upsert(self, table: type[SQLModel], keys: dict[str, Any], values: dict[str, Any]) -> Any:
        """Update the row of `table` matching `keys`, or insert it; return a copy of the row as it was, if any."""
        for attempt in range(2):  # two writers at once: the loser of the insert race updates instead
            try:
                with self.session() as session:
                    found = session.exec(select(table).filter_by(**keys)).first()
                    before = found.model_copy() if found is not None else None
                    row = found if found is not None else table(**keys)
                    for name, value in values.items():
                        setattr(row, name, value)
                    session.add(row)
                    session.commit()
                    return before
            except IntegrityError:
                if attempt:
                    raise
        return None  # pragma: no cover - the loop returns or raises
