"""New history databases for the tests, made cheaply: a SQLite file copied from one set up once per process, and
PostgreSQL schemas set up by replaying recorded statements, then emptied after a test and handed to the next.

Setting up a history compiles and sends every table's statements: about 25 ms on SQLite and 130 ms of a PostgreSQL
server's time, for each of hundreds of tests. Where a history's creation is itself tested (the migrations, a first
run saying where its history is, a command's own new file) the test opens an empty database of its own.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from bot.store import make_engine, migrate

POSTGRES_URL = os.environ.get("JUDGEBOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
POSTGRES_HELP = (
    f"PostgreSQL is not reachable at {POSTGRES_URL}. Start a server (trust auth, a database named test) or set "
    "JUDGEBOT_TEST_POSTGRES_URL to one, to run the store tests on PostgreSQL too."
)


# -- SQLite ---------------------------------------------------------------------------------------------------

_SQLITE_NEW: list[Path] = []  # a new SQLite history, set up once per process


def new_sqlite_history(path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Put at `path` the file a new history is: set up once per process by `Store.open`, then copied."""
    from bot.store import Store

    if not _SQLITE_NEW:
        made = tmp_path_factory.mktemp("new_history") / "history.db"
        Store.open(f"sqlite:///{made}").engine.dispose()
        _SQLITE_NEW.append(made)
    shutil.copyfile(_SQLITE_NEW[0], path)


# -- PostgreSQL -----------------------------------------------------------------------------------------------

_ADMIN: list[sa.Engine] = []  # one connection pool to the test database for the whole process
_MIGRATION: list[tuple[str, Any]] = []  # what migrating an empty schema sends, recorded once per process
_SHAPES: dict[str, str] = {}  # each set-up schema of this process: what its tables, columns and version read as
_FREE: list[str] = []  # set-up schemas emptied after their test, waiting for the next

# A schema's structure (tables, columns with their types and defaults, constraints, indexes, triggers, functions,
# sequences, types) and its schema_version rows, as one text: a test that altered any leaves a schema that is
# dropped, not handed on.
SHAPE = sa.text("""
    SELECT concat_ws(' | ',
        (SELECT string_agg(concat_ws(':', c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod),
                                     a.attnotnull, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY c.relname, a.attnum)
         FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
         WHERE c.relnamespace = CAST(:schema AS regnamespace)),
        (SELECT string_agg(concat_ws(':', conname, pg_get_constraintdef(oid)), ',' ORDER BY conname)
         FROM pg_constraint WHERE connamespace = CAST(:schema AS regnamespace)),
        (SELECT string_agg(pg_get_indexdef(i.indexrelid), ',' ORDER BY 1)
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = CAST(:schema AS regnamespace)),
        (SELECT string_agg(pg_get_triggerdef(t.oid), ',' ORDER BY 1)
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace = CAST(:schema AS regnamespace) AND NOT t.tgisinternal),
        (SELECT string_agg(concat_ws(':', CAST(oid AS regprocedure), md5(prosrc)), ',' ORDER BY 1)
         FROM pg_proc WHERE pronamespace = CAST(:schema AS regnamespace)),
        (SELECT string_agg(concat_ws(':', c.relname, s.seqtypid, s.seqstart, s.seqincrement, s.seqmax, s.seqmin,
                                     s.seqcache, s.seqcycle), ',' ORDER BY c.relname)
         FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = CAST(:schema AS regnamespace)),
        (SELECT string_agg(concat_ws(':', typname, typtype), ',' ORDER BY typname)
         FROM pg_type WHERE typnamespace = CAST(:schema AS regnamespace)))
""")
# Locks another connection holds on the schema's tables: a test left it open, and it is not handed on.
HELD = sa.text("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
               "WHERE c.relnamespace = CAST(:schema AS regnamespace) AND l.pid <> pg_backend_pid()")
TABLES = sa.text("SELECT tablename FROM pg_tables WHERE schemaname = :schema ORDER BY tablename")
RESTART_SEQUENCES = sa.text("SELECT setval(oid, 1, false) FROM pg_class "
                            "WHERE relkind = 'S' AND relnamespace = CAST(:schema AS regnamespace)")


def _admin() -> sa.Engine:
    if not _ADMIN:
        try:
            admin = sa.create_engine(POSTGRES_URL)
            with admin.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except Exception:
            if os.environ.get("JUDGEBOT_REQUIRE_POSTGRES") == "1":
                pytest.fail(POSTGRES_HELP)
            pytest.skip(POSTGRES_HELP)
        _ADMIN.append(admin)
    return _ADMIN[0]


def _url(schema: str) -> str:
    separator = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"


def _shape(conn: sa.Connection, schema: str) -> str:
    versions = (f"SELECT string_agg(concat_ws(':', version, applied_at), ',' ORDER BY version) "
                f'FROM "{schema}".schema_version')
    version = conn.exec_driver_sql(versions).scalar()
    return f"{conn.execute(SHAPE, {'schema': schema}).scalar()} | {version}"


def _set_up(url: str) -> None:
    """Set up a new history at `url`: the first time by migrating it (the statements recorded), then by replaying
    them (the DDL in one round trip; what looked the database over and the lock need no replaying; the versions
    written in order). `schema_diffs` and `structure` check the schema where it is itself tested."""
    engine = make_engine(url)
    try:
        if _MIGRATION:
            ddl = ";\n".join(statement for statement, parameters in _MIGRATION if not parameters)
            with engine.begin() as conn:
                conn.exec_driver_sql(ddl)
                for statement, parameters in _MIGRATION:
                    if parameters and not statement.lstrip().upper().startswith("SELECT"):
                        conn.exec_driver_sql(statement, parameters)
        else:
            def record(conn, cursor, statement, parameters, context, executemany) -> None:
                _MIGRATION.append((statement, parameters))

            sa.event.listen(engine, "before_cursor_execute", record)
            migrate(engine)
            sa.event.remove(engine, "before_cursor_execute", record)
    finally:
        engine.dispose()


def _emptied(admin: sa.Engine, schema: str) -> bool:
    """Empty a set-up schema after its test (every row but the version's, the sequences back at 1), if its shape is
    still that of a new history; False when it is not, or cannot be emptied now."""
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
            if conn.execute(HELD, {"schema": schema}).scalar_one() or _shape(conn, schema) != _SHAPES[schema]:
                return False
            tables = [name for name in conn.execute(TABLES, {"schema": schema}).scalars() if name != "schema_version"]
            conn.exec_driver_sql("SET LOCAL session_replication_role = replica")  # rows in any order of their keys
            conn.exec_driver_sql(";\n".join(f'DELETE FROM "{schema}"."{table}"' for table in tables))
            conn.execute(RESTART_SEQUENCES, {"schema": schema})
        return True
    except sa.exc.SQLAlchemyError:
        return False


def postgres_schema_url(set_up: bool) -> Iterator[str]:
    """The URL of a PostgreSQL schema of this test's own: empty, or (`set_up`) a new history's; dropped after the
    test, or, set up and still shaped as one, emptied for the next."""
    admin = _admin()
    if set_up and _FREE:
        schema = _FREE.pop()
    else:
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        if set_up:
            _set_up(_url(schema))
            with admin.connect() as conn:
                _SHAPES[schema] = _shape(conn, schema)
    try:
        yield _url(schema)
    finally:
        if set_up and _emptied(admin, schema):
            _FREE.append(schema)
        else:
            _SHAPES.pop(schema, None)
            _drop(admin, schema)


# The catalogs every schema of the tests adds rows to. A server with autovacuum off (as test servers often are) never
# reclaims the rows of the schemas dropped: after some thousands, each statement that reads the catalogs scans them.
CATALOGS = ("pg_class", "pg_attribute", "pg_attrdef", "pg_constraint", "pg_depend", "pg_index", "pg_type",
            "pg_sequence", "pg_namespace")
BLOATED = 16 * 2**20  # pg_attribute of a test database holds under 1 MB live


def reclaim_catalogs() -> None:
    """Before the tests: rewrite the test database's catalogs when earlier runs have left them bloated. Quietly
    nothing when PostgreSQL cannot be reached or the catalogs may not be rewritten by this user."""
    try:
        engine = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
        try:
            with engine.connect() as conn:
                if conn.exec_driver_sql("SELECT pg_relation_size('pg_attribute')").scalar_one() > BLOATED:
                    # never long: a catalog another session holds is left as it is
                    conn.exec_driver_sql("SET lock_timeout = '5s'")
                    conn.exec_driver_sql("SET statement_timeout = '60s'")
                    conn.exec_driver_sql(f"VACUUM FULL {', '.join(CATALOGS)}")
        finally:
            engine.dispose()
    except (sa.exc.SQLAlchemyError, ImportError):
        pass


def _drop(admin: sa.Engine, schema: str) -> None:
    """Drop a schema; a connection a test left open on it fails the test's teardown (a lock timeout) rather than
    hanging the run."""
    with admin.begin() as conn:
        conn.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


def drop_free_schemas() -> None:
    """At the end of the session: drop the schemas waiting for a test."""
    while _FREE:
        _drop(_admin(), _FREE.pop())
