"""Bringing a database's schema up to date: reading its recorded version, creating a new history at the latest
version, and applying the missing migrations to an existing one, once, under a lock, in one transaction."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from bot.errors import SchemaTooNew
from bot.store.migrations.latest import LATEST

LOCK_ID = 7_311_924  # a PostgreSQL advisory lock that serialises migrating processes


def current_version(conn: Connection) -> int:
    """The schema version recorded in the database (0 for an empty one)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    return conn.execute(sa.text("SELECT MAX(version) FROM schema_version")).scalar() or 0


def _version_unlocked(engine: Engine) -> int | None:
    """The recorded schema version read without a transaction (so without SQLite's write lock); None when it cannot
    be read so (no history yet)."""
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        try:
            cursor.execute("SELECT MAX(version) FROM schema_version")
            row = cursor.fetchone()
        finally:
            cursor.close()
    except Exception:  # no schema_version table: a new history, migrated under the lock below
        return None
    finally:
        raw.close()
    return int(row[0]) if row and row[0] is not None else None


def _lock(conn: Connection) -> None:
    """On PostgreSQL, wait for the lock that serialises processes setting up or migrating a history (SQLite's write
    transaction is one already)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": LOCK_ID})


def set_up(engine: Engine) -> bool:
    """Bring the history up to date (see `migrate`); True when this call created it, new and empty."""
    if _version_unlocked(engine) == LATEST:
        return False
    if _created(engine):
        return True
    migrate(engine)
    return False


def migrate(engine: Engine, target: int = LATEST) -> int:
    """Bring the database up to `target`, in one transaction that other processes wait for; return the version.

    A history already at `target` is left alone without taking the write lock or importing Alembic (with Mako and
    Pygments, about 60 ms of every start); Alembic is imported before the lock, never while others wait for it.
    """
    if _version_unlocked(engine) == target:
        return target
    if target == LATEST and _created(engine):
        return LATEST
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    from bot.store.migrations.versions import MIGRATIONS  # every migration (and the tables some read): only to migrate

    with engine.begin() as conn:
        _lock(conn)
        version = current_version(conn)
        if version > LATEST:
            raise SchemaTooNew(
                f"the database is at schema version {version}, newer than this judgebot knows ({LATEST}); "
                "upgrade judgebot or point DATABASE_URL at another database"
            )
        if version == 0:
            conn.execute(sa.text("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP)"))
        if version >= target:
            return version
        op = Operations(MigrationContext.configure(conn))
        for number in range(version + 1, target + 1):
            MIGRATIONS[number - 1](op)
            conn.execute(
                sa.text("INSERT INTO schema_version (version, applied_at) VALUES (:v, CURRENT_TIMESTAMP)"), {"v": number}
            )
        return max(version, target)


def _created(engine: Engine) -> bool:
    """Create a new, empty history at the latest version straight from the models, under the same lock as a
    migration, and record every version as applied; False (nothing done) when the database holds tables already.

    Going through every migration, and importing Alembic, cost a first run about a third of a second; the tests hold
    the models and the migrated schema to the same tables, columns, types, defaults, indexes and constraints.
    """
    from sqlmodel import SQLModel

    from bot.store.tables import (  # noqa: F401  (every table, and slack_sdk's)
        background,
        chat,
        history,
        oauth,
        processes,
        trust,
    )

    with engine.begin() as conn:
        _lock(conn)
        if sa.inspect(conn).get_table_names():  # an existing history, or one another process has just created
            return False
        SQLModel.metadata.create_all(conn)
        conn.execute(sa.text("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP)"))
        conn.execute(sa.text("INSERT INTO schema_version (version, applied_at) VALUES (:v, CURRENT_TIMESTAMP)"),
                     [{"v": number} for number in range(1, LATEST + 1)])
    return True
