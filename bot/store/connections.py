"""The database engine (SQLite with WAL and immediate write transactions), its URL checked, its failures as sentences."""

from __future__ import annotations

import atexit
import logging
import sqlite3
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on POSIX: processes are not kept from setting up a history at the same moment
    fcntl = None  # type: ignore[assignment]

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from bot.errors import SetupError, StoreUnavailable

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000
URL_FORM = ("write it like postgresql+psycopg://user:password@host:5432/dbname, or leave DATABASE_URL unset to keep "
            "the history in the SQLite file JUDGEBOT_DB")
POSTGRES_DRIVER = "psycopg"  # what the extra judgebot[postgres] installs
SAVED_ROWS_SAFE = "Every row saved before is kept: `judgebot resume` finishes an unfinished run once this is fixed."
DAMAGED = ("is damaged ({reason}), so judgebot writes nothing more to it. Restore it from a backup, recover what it "
           "holds with `sqlite3 {name} .recover`, or point JUDGEBOT_DB at a new file.")
# What is wrong with an SQLite history, by the name of SQLite's error (extended names start with these).
SQLITE_PROBLEMS = {
    "SQLITE_READONLY": "is read-only, so nothing more can be saved in it: make the file and its folder writable. "
                       + SAVED_ROWS_SAFE,
    "SQLITE_FULL": "cannot grow: the disk is full (or the file reached its size limit); free some space. "
                   + SAVED_ROWS_SAFE,
    "SQLITE_IOERR": "could not be read or written ({reason}); check the disk it is on. " + SAVED_ROWS_SAFE,
    "SQLITE_BUSY": f"is locked: another process has held its write lock for longer than {BUSY_TIMEOUT_MS // 1000} s. "
                   "Every row saved before is kept; try again once that process is done.",
    "SQLITE_CORRUPT": DAMAGED,
    "SQLITE_NOTADB": DAMAGED,
}
CANNOT_OPEN = "cannot open the history database {name}: {reason}. Check JUDGEBOT_DB or DATABASE_URL."
SQLITE_HEADER = b"SQLite format 3\x00"


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error's message (without a closing period: a sentence of ours goes on after
    it), or the error's type name when the message is empty."""
    for line in str(error).splitlines():
        if line.strip():
            return line.strip().rstrip(".")
    return type(error).__name__


def configure_sqlite(dbapi_connection: Any, _record: Any = None) -> None:
    """Set up a new SQLite connection: WAL, busy timeout, foreign keys, sorts in two threads, and no transactions of
    the driver's own."""
    dbapi_connection.isolation_level = None  # the driver must not open transactions itself: we do
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA threads=2")  # a large sort (a digest's two weeks grouped by question) may use a helper
    cursor.close()


def database_url(url: str) -> URL:
    """`url` parsed, with a dialect and a driver that are installed; SetupError saying what is wrong (never its password).

    A plain postgresql:// (or postgres://) URL gets psycopg, the driver that `judgebot[postgres]` installs.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise SetupError(f"DATABASE_URL cannot be read as a database URL: {URL_FORM}.") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername=f"postgresql+{POSTGRES_DRIVER}")
    shown = parsed.render_as_string(hide_password=True)
    try:
        dialect = parsed.get_dialect()
    except NoSuchModuleError:
        raise SetupError(f"DATABASE_URL {shown} names a kind of database judgebot does not know "
                         f"({parsed.drivername}): {URL_FORM}.") from None
    try:
        dialect.import_dbapi()
    except ImportError as err:
        raise SetupError(f"the driver {err.name or parsed.drivername} that DATABASE_URL {shown} needs is not installed. "
                         f"For PostgreSQL, `pip install 'judgebot[postgres]'` installs {POSTGRES_DRIVER}; then "
                         f"{URL_FORM}.") from None
    return parsed


def history_name(engine: Engine) -> str:
    """How messages name the history: its file, or its URL without the password."""
    if engine.dialect.name == "sqlite" and engine.url.database:
        return engine.url.database
    return engine.url.render_as_string(hide_password=True)


def store_problem(engine: Engine, error: BaseException) -> StoreUnavailable | None:
    """The sentence for a failure of the history itself (read-only, full, damaged, gone), or None for other errors."""
    name = history_name(engine)
    original = getattr(error, "orig", None) or error  # the driver's own error, or the error itself
    reason = first_line(original)
    errorname = getattr(original, "sqlite_errorname", "")
    for code, problem in SQLITE_PROBLEMS.items():
        if errorname.startswith(code):
            return StoreUnavailable(f"the history {name} {problem.format(name=name, reason=reason)}")
    if errorname.startswith("SQLITE_CANTOPEN"):
        return StoreUnavailable(CANNOT_OPEN.format(name=name, reason=reason))
    if isinstance(error, OperationalError):  # the database is gone, full or refuses us: a sentence, not SQL
        return StoreUnavailable(f"the history database {name} failed: {reason}. Check DATABASE_URL and the database "
                                f"server. {SAVED_ROWS_SAFE}")
    return None


@contextmanager
def one_at_a_time(engine: Engine) -> Iterator[None]:
    """For an SQLite file: an exclusive lock on a file beside it (`<history>.lock`) while the history is checked and
    migrated. Processes that start at once on a new history would otherwise race to create it, and SQLite's switch
    of a new file to WAL can lock them against each other for the whole busy timeout."""
    name = engine.url.database if engine.dialect.name == "sqlite" else None
    if not name or name == ":memory:" or fcntl is None:
        yield
        return
    path = Path(name).expanduser()
    try:
        guard = path.with_name(path.name + ".lock").open("a")
    except OSError:  # a folder that cannot be written: there is nothing to set up there either
        yield
        return
    with guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)


def check_sqlite_file(engine: Engine) -> None:
    """Refuse a file at the history's path that is not a judgebot history, before anything is written to it.

    An empty file (or an SQLite database without tables) becomes a new history; a file that is not SQLite, or an
    SQLite database with tables but no schema version, belongs to something else.
    """
    if engine.dialect.name != "sqlite" or not engine.url.database or engine.url.database == ":memory:":
        return
    path = Path(engine.url.database).expanduser()
    if not path.is_file():
        return
    if path.stat().st_size == 0:  # made beforehand, or by another process starting at the same moment: taken
        log.warning("%s was an empty file; it is now a new judgebot history", path)
        return
    reader = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        tables = sorted(name for (name,) in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    except sqlite3.Error as err:
        # Only now is the file read as bytes: closing a file of the history, opened but not by SQLite, would drop the
        # locks this process's connections to it hold, and another process could then fold the write-ahead log back
        # under them (reads of an old state, then a damaged history).
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
        if header and header != SQLITE_HEADER:
            raise StoreUnavailable(f"{path} is not a judgebot history: it is not an SQLite database, and judgebot "
                                   "never writes over it. Point JUDGEBOT_DB at another file, or move that one "
                                   "away.") from None
        raise store_problem(engine, err) or StoreUnavailable(CANNOT_OPEN.format(name=path, reason=first_line(err))) from None
    finally:
        reader.close()
    if tables and "schema_version" not in tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreUnavailable(f"{path} is not a judgebot history: it is an SQLite database of something else (tables "
                               f"{shown}), and judgebot never writes into it. Point JUDGEBOT_DB at another file.")


def quick_check(engine: Engine) -> None:
    """Run SQLite's `PRAGMA quick_check` on an SQLite history; StoreUnavailable naming the first problem if damaged."""
    if engine.dialect.name != "sqlite" or not engine.url.database or engine.url.database == ":memory:":
        return
    name = history_name(engine)
    with engine.connect() as conn:
        found = [str(line) for (line,) in conn.exec_driver_sql("PRAGMA quick_check").fetchall()]
    if found and found != ["ok"]:
        raise StoreUnavailable(f"the history {name} {DAMAGED.format(name=name, reason=found[0])}")


def _plain_error(context: ExceptionContext) -> None:
    """Raise a failure of the history itself as a sentence naming the file, instead of SQL and a traceback."""
    error = context.sqlalchemy_exception or context.original_exception
    found = store_problem(context.engine, error) if context.engine else None
    if found is not None:
        raise found from None


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and BEGIN IMMEDIATE on every transaction.

    A deferred SQLite transaction that reads and then writes fails at once with "database is
    locked" when another process wrote in between; an immediate one waits for the lock instead.
    A failure of the database itself (read-only, disk full, damaged) is raised as StoreUnavailable;
    a URL that cannot be used, as SetupError.
    """
    parsed = database_url(url)
    if parsed.get_backend_name() != "sqlite":
        engine = create_engine(parsed, pool_pre_ping=True)
        event.listen(engine, "handle_error", _plain_error)
        return closed_at_exit(engine)
    if parsed.database and parsed.database != ":memory:":
        folder = Path(parsed.database).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            reason = f"its folder {folder} cannot be made ({err.strerror or first_line(err)})"
            raise StoreUnavailable(CANNOT_OPEN.format(name=parsed.database, reason=reason)) from None
    engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})
    event.listen(engine, "connect", configure_sqlite)
    event.listen(engine, "handle_error", _plain_error)

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return closed_at_exit(engine)


_open_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


def closed_at_exit(engine: Engine) -> Engine:
    """`engine`, its connections closed when the process ends.

    judgebot keeps the collector from its last passes at exit (bot.__main__.main), which would otherwise close them:
    SQLite folds its write-ahead log back into the history file when the last connection closes, so that the file
    alone (a backup, a copy) holds everything.
    """
    _close_engines_at_exit()
    _open_engines.add(engine)
    return engine


@cache
def _close_engines_at_exit() -> None:
    atexit.register(_close_engines)


def _close_engines() -> None:
    for engine in list(_open_engines):
        try:
            engine.dispose()
        except Exception:  # the process is ending: one engine that cannot close keeps none of the others open
            log.debug("could not close the connections of %s", engine.url, exc_info=True)


def conflict_insert(dialect: str) -> Any:
    """The INSERT of this database that takes ON CONFLICT DO UPDATE (PostgreSQL's, else SQLite's)."""
    if dialect == "postgresql":  # its dialect loads every PostgreSQL driver's module: only where it is used
        from sqlalchemy.dialects import postgresql

        return postgresql.insert
    from sqlalchemy.dialects import sqlite

    return sqlite.insert
