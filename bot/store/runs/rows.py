"""The rows of runs: saved before judging, verdicts recorded once (each counted and billed as it is saved), read back
in order. Each function is its own transaction."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import groupby
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row

from bot.errors import RunBusy
from bot.records import JUDGED_FIELDS, VERDICT_FIELDS, RowState, RunState, Triple, Verdict, context_of
from bot.store.clock import utcnow
from bot.store.counts.billing import bill_judgments
from bot.store.counts.case_keys import case_key, texts_removed
from bot.store.counts.counting import counted_case, lock_cases, restack
from bot.store.counts.tallies import add_judgments, question_key, tally_upsert
from bot.store.runs.records import LOAD_LOST
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import BILLED_TALLY, FEEDBACK, JUDGMENT, JUDGMENT_SAMPLE, JUDGMENT_TALLY, RUN

if TYPE_CHECKING:
    from bot.store.database import Store

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
    table = JUDGMENT
    texts = (table.c.id, table.c.question, table.c.reference, table.c.answer, table.c.answer_b, table.c.swapped,
             table.c.context)
    return table.select().with_only_columns(*texts).where(table.c.run_id == run_id, table.c.status == RowState.PENDING)


def row_case(row: dict[str, Any]) -> str:
    """The case a new judgment row is counted under (bot.store.counts.counting)."""
    label_case = case_key(row.get("team_id"), row.get("channel_id"), row["rubric_name"], row["question"],
                          row["reference"], row["answer"], row.get("answer_b"), row.get("context"))
    return counted_case(label_case, row.get("model_name"), row.get("model_b"), row.get("swapped"))


def triple_of(row: Any) -> Triple:
    """The texts a row is judged on, as the judge is shown them: a pair's answers in the order it is shown (B first
    when the row is the pair swapped), with the passages retrieved for it."""
    context = context_of(row.context)
    if row.answer_b is None:
        triple = Triple(question=row.question, reference=row.reference, answer=row.answer, context=context)
    else:
        first, second = (row.answer_b, row.answer) if row.swapped else (row.answer, row.answer_b)
        triple = Triple(question=row.question, reference=row.reference, answer=first, answer_b=second, context=context)
    return triple.keep_context_json(row.context)  # its keys read the text kept, not the passages written again


@dataclass(frozen=True)
class _HotPath:
    """The statements of the judging path, built once per database dialect: Core rather than the ORM keeps them
    cheap."""

    cases_of: Any
    still_pending: Any
    save: Any
    count: Any
    bill: Any
    cached: dict[bool, Any]


@cache
def _statements(dialect: str) -> _HotPath:
    table = JUDGMENT
    ids = table.c.id.in_(bindparam("ids", expanding=True))
    scored = (table.c.cache_key.in_(bindparam("keys", expanding=True)), table.c.status == RowState.SCORED)
    return _HotPath(
        cases_of=select(table.c.case_hash).where(ids).distinct(),
        still_pending=select(table.c.id).where(ids, table.c.status == RowState.PENDING).with_for_update(),
        save=(table.update()
              .where(table.c.id == bindparam("judgment_id"), table.c.status == RowState.PENDING)
              .values({name: bindparam(name) for name in VERDICT_COLUMNS})),
        count=tally_upsert(dialect, table, JUDGMENT_TALLY, ids, feedback=FEEDBACK),
        bill=bill_judgments(dialect, table, BILLED_TALLY, ids),
        cached={scoped: table.select().where(table.c.id.in_(
            select(func.min(table.c.id)).where(*scored, *((table.c.run_id == bindparam("run_id"),) if scoped else ()))
            .group_by(table.c.cache_key).scalar_subquery())) for scoped in (False, True)},
    )


def _hot_path(store: Store) -> _HotPath:
    return _statements(store.engine.dialect.name)


def reset_rows(store: Store, run_id: int, statuses: tuple[str, ...]) -> int:
    """Make rows of these statuses pending again, to be judged anew; return how many."""
    cleared = dict.fromkeys([*JUDGED_FIELDS, "judged_at", "cached_from"])
    # A row whose texts were removed (bot.store.retention.texts) has nothing left to judge: it keeps its verdict.
    table, samples = JUDGMENT.c, JUDGMENT_SAMPLE.c
    kept = texts_removed(table.question, table.reference)
    chosen = (table.run_id == run_id) & table.status.in_(statuses) & ~kept
    with store.engine.begin() as conn:
        cases = conn.execute(select(table.case_hash).where(chosen).distinct()).scalars().all()
        lock_cases(conn, cases)  # before any row: a writer of the same cases waits here, never in between
        conn.execute(select(table.id).where(chosen).with_for_update())  # no verdict lands in between
        add_judgments(conn, JUDGMENT, JUDGMENT_TALLY, chosen, sign=-1, feedback=FEEDBACK)
        result = conn.execute(update(JUDGMENT).where(chosen).values(
            status=RowState.PENDING, tokens_in=0, tokens_out=0, tokens_cached=0, cost_usd=None, latency_ms=0,
            attempts=0, claimed_by=None, claimed_at=None, replaced_at=None, **cleared))
        _restack(conn, cases)  # what they had replaced stands again
        # Their samples that failed are asked again; those that scored were paid for and stay.
        rows = select(table.id).where(table.run_id == run_id, table.status == RowState.PENDING)
        conn.execute(delete(JUDGMENT_SAMPLE).where(samples.judgment_id.in_(rows), samples.status != RowState.SCORED))
        return result.rowcount

def add_rows(store: Store, rows: Iterable[dict[str, Any]]) -> int:
    """Insert judgment rows (pending or malformed) in batches; return how many."""
    count = 0
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= INSERT_BATCH:
            count += _insert(store, batch)
            batch = []
    if batch:
        count += _insert(store, batch)
    return count

def _insert(store: Store, batch: list[dict[str, Any]]) -> int:
    now = utcnow()
    loading = {row["run_id"] for row in batch}
    full = [{"created_at": now, "question_key": question_key(row.get("model_name"), row["rubric_name"], row["question"]),
             "case_hash": row_case(row), **row} for row in batch]
    runs = RUN.c
    with store.engine.begin() as conn:
        # One INSERT per run of rows with the same fields, in order: an insert of many rows takes its columns from
        # the first, and a field the others lack would be required of them (or one only they have, dropped).
        for _fields, same in groupby(full, key=lambda row: row.keys()):
            conn.execute(insert(JUDGMENT), list(same))
        # The process loading the run shows it is alive, so another host never takes it for abandoned.
        conn.execute(update(RUN).where(runs.id.in_(loading), runs.status == RunState.LOADING).values(heartbeat_at=now))
        failed = conn.execute(select(runs.id).where(runs.id.in_(loading), runs.status == RunState.FAILED)).scalars().all()
        if failed:  # another process gave the run up meanwhile and dropped its rows: these are not kept either
            raise RunBusy(LOAD_LOST.format(run_id=", ".join(map(str, sorted(failed)))))  # rolls the batch back
    return len(batch)

def next_pending(store: Store, run_id: int, *, after_id: int = 0, limit: int = 500) -> list[Judgment]:
    """The next pending rows of a run, in row order, after `after_id`."""
    j = JUDGMENT.c
    statement = (select(JUDGMENT).where(j.run_id == run_id, j.status == RowState.PENDING, j.id > after_id)
                 .order_by(j.id).limit(limit))
    with store.engine.connect() as conn:
        return [Judgment.read(row) for row in conn.execute(statement)]

def pending_texts(store: Store, run_id: int, *, page: int = 5_000) -> Iterator[tuple[int, Triple]]:
    """The id and texts of every pending row of a run, in row order, read a page at a time (as columns, not
    entities)."""
    return ((row.id, triple_of(row)) for row in _paged(store, _pending_texts(run_id), page))

def find_cached(store: Store, cache_key: str, *, run_id: int | None = None) -> Judgment | None:
    """An earlier successful judgment under `cache_key` (within one run when given), to reuse instead of billing."""
    return find_cached_many(store, [cache_key], run_id=run_id).get(cache_key)

def find_cached_many(store: Store, cache_keys: Sequence[str], *, run_id: int | None = None) -> dict[str, Judgment]:
    """The earliest successful judgment under each of `cache_keys` that has one (within one run when given), in
    one query."""
    if not cache_keys:
        return {}
    with store.engine.connect() as conn:
        rows = conn.execute(_hot_path(store).cached[run_id is not None], {"keys": list(cache_keys), "run_id": run_id})
        return {row.cache_key: Judgment.read(row) for row in rows}

def save_verdict(store: Store, judgment_id: int, verdict: Verdict, *, cache_key: str, cached_from: int | None = None) -> bool:
    """Record a verdict on a pending row and count it; False when the row was no longer pending (never twice)."""
    return save_verdicts(store, [RowVerdict(judgment_id, verdict, cache_key, cached_from)])[0]

def save_verdicts(store: Store, verdicts: Sequence[RowVerdict]) -> list[bool]:
    """Record verdicts on pending rows and count them, all in one transaction; for each, False when its row was no
    longer pending (a verdict is never recorded twice, nor two on one row)."""
    if not verdicts:
        return []
    judged_at = utcnow()
    hot = _hot_path(store)
    asked = {"ids": [v.judgment_id for v in verdicts]}
    with store.engine.begin() as conn:
        cases = conn.execute(hot.cases_of, asked).scalars().all()
        lock_cases(conn, cases)  # the chains of their cases first, then the rows: two writers never cross
        # Locked until the commit (SQLite's write lock is taken at BEGIN): no other writer lands in between.
        free = set(conn.execute(hot.still_pending, asked).scalars())
        taken = []
        for item in verdicts:
            taken.append(item.judgment_id in free)
            free.discard(item.judgment_id)
        chosen = [item for item, ok in zip(verdicts, taken, strict=True) if ok]
        if chosen:
            conn.execute(hot.save, [
                {**item.verdict.model_dump(), "cache_key": item.cache_key, "cached_from": item.cached_from,
                 "judged_at": judged_at, "judgment_id": item.judgment_id} for item in chosen])
            saved = {"ids": [item.judgment_id for item in chosen]}
            conn.execute(hot.count, saved)
            conn.execute(hot.bill, saved)
            _restack(conn, cases)
    return taken

def _restack(conn: Connection, cases: Sequence[str | None]) -> None:
    """Chain the judged rows of these cases again (bot.store.counts.counting), the tally following."""
    restack(conn, JUDGMENT, JUDGMENT_TALLY, FEEDBACK, [case for case in cases if case is not None])

def unsure_count(store: Store, run_id: int) -> int:
    """How many rows of a run have a verdict whose samples split."""
    table = JUDGMENT.c
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).where(table.run_id == run_id, table.unsure.is_(True))).scalar_one())

def status_counts(store: Store, run_id: int) -> dict[str, int]:
    """How many rows of a run are in each status."""
    table = JUDGMENT.c
    with store.engine.connect() as conn:
        statement = select(table.status, func.count()).where(table.run_id == run_id).group_by(table.status)
        return {status: count for status, count in conn.execute(statement)}

def iter_judgments(store: Store, run_id: int, *, page: int = 1_000) -> Iterator[Judgment]:
    """Every row of a run in row order, fetched a page at a time so memory stays flat."""
    j = JUDGMENT.c
    after = 0
    while True:
        with store.engine.connect() as conn:
            statement = select(JUDGMENT).where(j.run_id == run_id, j.id > after).order_by(j.id).limit(page)
            rows = [Judgment.read(row) for row in conn.execute(statement)]
        if not rows:
            return
        yield from rows
        after = rows[-1].id

def iter_columns(store: Store, run_id: int, *, page: int = 1_000) -> Iterator[Row[Any]]:
    """Every row of a run in row order, as rows of the judgment's columns read a page at a time: named as a
    Judgment's attributes, without the cost of building entities (a results file reads every row)."""
    table = JUDGMENT
    return _paged(store, table.select().where(table.c.run_id == run_id), page)

def _paged(store: Store, statement: Any, page: int) -> Iterator[Row[Any]]:
    """The rows of `statement` over judgments (its first column their id), in id order, `page` at a time, each
    page read after the last id of the one before."""
    table = JUDGMENT
    after = 0
    while True:
        with store.engine.connect() as conn:
            rows = conn.execute(statement.where(table.c.id > after).order_by(table.c.id).limit(page)).all()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]

def get_judgment(store: Store, judgment_id: int) -> Judgment | None:
    """The judgment with `judgment_id`, if any."""
    with store.engine.connect() as conn:
        row = conn.execute(select(JUDGMENT).where(JUDGMENT.c.id == judgment_id)).first()
    return Judgment.read(row) if row is not None else None

def first_judgment(store: Store, run_id: int) -> Judgment | None:
    """The first row of a run (the only one, for a run of one triple)."""
    statement = select(JUDGMENT).where(JUDGMENT.c.run_id == run_id).order_by(JUDGMENT.c.id).limit(1)
    with store.engine.connect() as conn:
        row = conn.execute(statement).first()
    return Judgment.read(row) if row is not None else None

def set_run_message(store: Store, run_id: int, message_ts: str) -> None:
    """Remember the chat message that shows the judgments of a run, so lists can link to it."""
    with store.engine.begin() as conn:
        conn.execute(update(JUDGMENT).where(JUDGMENT.c.run_id == run_id).values(message_ts=message_ts))
