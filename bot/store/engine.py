"""The database engine: SQLite with WAL, a busy timeout and immediate write transactions; any other URL as given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import create_engine

BUSY_TIMEOUT_MS = 30_000


def configure_sqlite(dbapi_connection: Any, _record: Any = None) -> None:
    """Set up a new SQLite connection: WAL, busy timeout, foreign keys, and no transactions of the driver's own."""
    dbapi_connection.isolation_level = None  # the driver must not open transactions itself: we do
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and BEGIN IMMEDIATE on every transaction.

    A deferred SQLite transaction that reads and then writes fails at once with "database is
    locked" when another process wrote in between; an immediate one waits for the lock instead.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})
    event.listen(engine, "connect", configure_sqlite)

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine
