"""Tests for bot.store's engine: writers in many processes against one database (`python -m tests.support.store_writer
...`), SQLite's settings, database URLs, and the problems a history names (locked, failed, damaged)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError

from bot.errors import StoreUnavailable
from bot.store import BUSY_TIMEOUT_MS, LATEST, Store, add_rows, create_run, get_run, make_engine, status_counts, store_problem
from tests.support import store_writer
from tests.support.store_rows import COMMON, row
from tests.support.store_schema import schema_diffs, schema_versions

REPO = Path(__file__).resolve().parents[2]


# --- many processes --------------------------------------------------------------------------------------------


def run_processes(argvs: list[list[str]], timeout: float = 120) -> tuple[list[dict[str, Any]], float]:
    """Start `python -m tests.support.store_writer ARGV` for each, release them together, return their reports and the seconds
    between the release and the last exit."""
    procs = [subprocess.Popen([sys.executable, "-m", "tests.support.store_writer", *argv], cwd=REPO, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for argv in argvs]
    watchdog = threading.Timer(timeout, lambda: [p.kill() for p in procs if p.poll() is None])
    watchdog.start()
    try:
        for proc in procs:
            line = proc.stdout.readline()
            if line.strip() != "ready":
                proc.kill()
                pytest.fail(f"a writer did not start: {line!r} {proc.stderr.read()[-3000:]}")
        released = time.monotonic()
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, err = proc.communicate()
            assert proc.returncode == 0, f"writer exited with {proc.returncode}: {err[-3000:]}"
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports, time.monotonic() - released
    finally:
        watchdog.cancel()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


WRITERS = 6
ROUNDS = 22  # x 7 write transactions (two of them read first) = 154 per process


@pytest.mark.slow
def test_concurrent_writers_never_see_database_is_locked(db_url: str) -> None:
    Store.open(db_url).engine.dispose()
    reports, seconds = run_processes([["write", db_url, str(ROUNDS), str(w)] for w in range(WRITERS)])

    for report in reports:
        assert report["locked"] == 0, reports
        assert report["other"] == [] and report["wrong"] == [], reports
        assert (report["rows"], report["saved"], report["not_saved"]) == (ROUNDS * 3, ROUNDS * 3, 0)
    # No writer waited out the busy timeout (it would have counted as locked); on a loaded machine the whole takes
    # from 10 s to about a minute, so only a hang is caught by time.
    assert seconds < 180, f"{seconds:.1f} s: writers stalled"

    run_ids = [rid for report in reports for rid in report["runs"]]
    assert len(run_ids) == len(set(run_ids)) == WRITERS * ROUNDS
    store = Store(make_engine(db_url))
    try:
        with store.engine.connect() as conn:
            runs = conn.execute(sa.text("SELECT status, total_rows, COUNT(*) FROM run GROUP BY status, total_rows")).all()
            judgments = conn.execute(sa.text("SELECT status, COUNT(*), COUNT(DISTINCT cache_key) FROM judgment "
                                             "GROUP BY status")).all()
            per_run = conn.execute(sa.text("SELECT COUNT(*) FROM (SELECT run_id FROM judgment GROUP BY run_id "
                                           "HAVING COUNT(*) = 3) AS complete")).scalar()
        assert [tuple(r) for r in runs] == [("done", 3, WRITERS * ROUNDS)]
        assert [tuple(r) for r in judgments] == [("scored", WRITERS * ROUNDS * 3, WRITERS * ROUNDS * 3)]
        assert per_run == WRITERS * ROUNDS
        assert status_counts(store, run_ids[0]) == {"scored": 3}
    finally:
        store.engine.dispose()


@pytest.mark.slow
def test_control_deferred_begin_does_hit_database_is_locked(tmp_path: Path) -> None:
    """The same load over an engine that differs from make_engine only in a deferred BEGIN fails: so the test above
    can fail, and BEGIN IMMEDIATE is what makes it pass. (Measured: ~100 of the 132 rounds fail, every time.)"""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    Store.open(url).engine.dispose()
    reports, _ = run_processes([["control", url, str(ROUNDS), str(w)] for w in range(WRITERS)])
    assert all(report["other"] == [] for report in reports), reports
    assert sum(report["locked"] for report in reports) > 0, reports


def test_read_then_write_transactions_deterministically(tmp_path: Path) -> None:
    """The mechanism behind both tests above, in one process, step by step."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    store = Store.open(url)
    deferred = store_writer.deferred_engine(url)
    try:
        create_run(store, **COMMON)
        # deferred: read, someone else commits a write, then our write fails at once despite the 30 s busy timeout
        with deferred.connect() as reader:
            reader.begin()
            assert reader.execute(sa.text("SELECT COUNT(*) FROM run")).scalar() == 1
            create_run(store, **COMMON)
            started = time.monotonic()
            with pytest.raises(OperationalError, match="database is locked"):
                reader.execute(sa.text("UPDATE run SET total_rows = 1"))
            assert time.monotonic() - started < 5
            reader.rollback()

        # immediate: the transaction holds the write lock from its first read, so the other writer waits instead
        other = sqlite3.connect(tmp_path / "history.db", timeout=0.2, isolation_level=None)
        try:
            with store.engine.connect() as conn:
                conn.begin()
                assert conn.execute(sa.text("SELECT COUNT(*) FROM run")).scalar() == 2
                with pytest.raises(sqlite3.OperationalError, match="database is locked"):
                    other.execute("INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, "
                                  "judge_model, source, fresh, total_rows) VALUES "
                                  "(CURRENT_TIMESTAMP, 'x', 'r', '1', 'h', 'm', 'cli', 0, 0)")
                conn.execute(sa.text("UPDATE run SET total_rows = 5"))
                conn.commit()
            other.execute("UPDATE run SET total_rows = total_rows + 1")  # free again once committed
            assert other.execute("SELECT SUM(total_rows) FROM run").fetchone() == (12,)
        finally:
            other.close()
    finally:
        deferred.dispose()
        store.engine.dispose()


@pytest.mark.slow
def test_concurrent_migrations_apply_each_version_once(db_url: str) -> None:
    reports, _ = run_processes([["migrate", db_url] for _ in range(4)])
    assert reports == [{"version": LATEST, "error": None}] * 4
    engine = make_engine(db_url)
    try:
        assert [v for v, _ in schema_versions(engine)] == list(range(1, LATEST + 1))
        assert schema_diffs(engine) == []
    finally:
        engine.dispose()


# --- make_engine on SQLite -------------------------------------------------------------------------------------


def test_make_engine_sqlite_settings_and_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "history.db"
    assert not path.parent.exists()
    engine = make_engine(f"sqlite:///{path}")
    try:
        assert path.parent.is_dir()
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_TIMEOUT_MS == 30_000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert path.is_file()
    finally:
        engine.dispose()
    # every new connection is set up, not only the first
    engine = make_engine(f"sqlite:///{path}")
    try:
        # raw DBAPI connections: two SQLAlchemy connections in one thread would each BEGIN IMMEDIATE, and the second
        # would wait out the busy timeout for the first
        a, b = engine.raw_connection(), engine.raw_connection()
        try:
            assert a.dbapi_connection is not b.dbapi_connection
            for pragma, expected in (("foreign_keys", 1), ("busy_timeout", 30_000), ("journal_mode", "wal")):
                assert [c.cursor().execute(f"PRAGMA {pragma}").fetchone()[0] for c in (a, b)] == [expected, expected]
            assert a.dbapi_connection.isolation_level is None  # the driver opens no transactions of its own
        finally:
            a.close()
            b.close()
    finally:
        engine.dispose()


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_a_history_opened_again_in_a_process_keeps_its_first_connections_reading_what_others_write(
        tmp_path: Path) -> None:
    # Opening a store checks the file is a history; had it read the file's bytes itself, closing that file would drop
    # the locks the first store's connections hold, and another process's writer, closing last, would fold the
    # write-ahead log back under them: they would read an old state, then find the history damaged.
    url = f"sqlite:///{tmp_path / 'history.db'}"
    first = Store.open(url)
    run = create_run(first, **COMMON)
    add_rows(first, [row(run.id, 1)])
    write = ("import sys\nfrom bot.store import Store, add_rows, get_run\nfrom tests.support.store_rows import row\n"
             "store = Store.open(sys.argv[1])\nadd_rows(store, [row(int(sys.argv[2]), int(sys.argv[3]))])\n"
             "store.engine.dispose()\n")
    try:
        for number in range(2, 5):
            with first.engine.connect() as conn:  # the first store's connection, open and idle in its pool
                conn.exec_driver_sql("SELECT count(*) FROM judgment").scalar()
            Store.open(url).engine.dispose()  # the history opened again in this process
            subprocess.run([sys.executable, "-c", write, url, str(run.id), str(number)], check=True, cwd=REPO,
                           timeout=120)
            assert status_counts(first, run.id) == {"pending": number}
        with first.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA quick_check").scalar() == "ok"
    finally:
        first.engine.dispose()


# --- database URLs, and the problems a history names --------------------------------------------------------------


def test_a_plain_postgresql_url_uses_the_driver_of_the_postgres_extra(db_url: str) -> None:
    if not db_url.startswith("postgresql+psycopg://"):
        pytest.skip("a PostgreSQL URL")
    for plain in ("postgresql://", "postgres://"):
        store = Store.open(db_url.replace("postgresql+psycopg://", plain))
        try:
            assert store.engine.url.drivername == "postgresql+psycopg"
            assert get_run(store, create_run(store, **COMMON).id) is not None
        finally:
            store.engine.dispose()


def test_store_problem_of_a_locked_sqlite_history_says_to_try_again_not_to_check_a_server(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    engine = make_engine(f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    waiter = sqlite3.connect(path, timeout=0.1)
    try:
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN EXCLUSIVE")  # another process holding the write lock past the busy wait
        with pytest.raises(sqlite3.OperationalError) as caught:
            waiter.execute("INSERT INTO t VALUES (1)")
        holder.execute("ROLLBACK")
    finally:
        waiter.close()
        holder.close()
    assert caught.value.sqlite_errorname == "SQLITE_BUSY"
    said = str(store_problem(engine, OperationalError("INSERT INTO t VALUES (1)", {}, caught.value)))
    assert said.startswith(f"the history {path} is locked: another process has held its write lock for longer "
                           "than 30 s. Every row saved before is kept; try again"), said
    assert "DATABASE_URL" not in said and "server" not in said
    engine.dispose()


def test_store_problem_of_an_error_without_a_message_names_its_type(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'history.db'}")
    blank = sqlite3.OperationalError()
    assert str(blank) == ""
    said = str(store_problem(engine, OperationalError("SELECT 1", {}, blank)))
    assert f"the history database {tmp_path / 'history.db'} failed: OperationalError." in said, said
    assert store_problem(engine, RuntimeError("")) is None
    engine.dispose()


def test_check_integrity_refuses_a_history_damaged_in_the_middle_of_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    store = Store.open(f"sqlite:///{path}")
    run = create_run(store, **COMMON)
    padding = "lorem ipsum dolor sit amet " * 20
    add_rows(store, (row(run.id, n, question=f"question {n} {padding}") for n in range(1, 3_001)))
    store.check_integrity()  # a sound history passes
    store.engine.dispose()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with path.open("r+b") as file:  # one page in the middle of the rows overwritten with junk; the header is intact
        pages = file.seek(0, 2) // page_size
        file.seek(page_size * (pages // 2))
        file.write(bytes(range(256)) * (page_size // 256))

    damaged = Store.open(f"sqlite:///{path}")  # the header and schema checks at open do not see it
    try:
        with pytest.raises(StoreUnavailable) as caught:
            damaged.check_integrity()
    finally:
        damaged.engine.dispose()
    said = str(caught.value)
    assert said.startswith(f"the history {path} is damaged ("), said
    assert f"sqlite3 {path} .recover" in said
