"""The open history: one database engine, its sessions, its name and its health; every query is a function of the
store's sub-packages that takes it."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from bot.errors import StoreUnavailable
from bot.store.connections import (
    CANNOT_OPEN,
    check_sqlite_file,
    first_line,
    history_name,
    make_engine,
    one_at_a_time,
    quick_check,
)
from bot.store.migrations.upgrade import set_up

if TYPE_CHECKING:
    from sqlmodel import Session


class Store:
    """The history over one engine.

    On SQLite every transaction takes the write lock when it begins, so never hold two
    sessions open in one thread: the second would wait for the first until the busy timeout.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.created = False  # whether `open` created this history, new and empty

    @classmethod
    def open(cls, url: str) -> Store:
        """Connect to `url`, check it holds a judgebot history (or nothing) and bring its schema up to date.

        Raises:
            SetupError: `url` cannot be used (unparsable, an unknown database, its driver not installed).
            StoreUnavailable: the database cannot be opened, is not a judgebot history, or is damaged.
        """
        from bot.store.runs.abandoned_loads import fail_abandoned_loads

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
        fail_abandoned_loads(store)
        return store

    @property
    def name(self) -> str:
        """How messages name the history: its file, or its URL without the password."""
        return history_name(self.engine)

    def session(self) -> Session:
        """A new session; use it as a context manager."""
        from sqlmodel import Session  # the ORM: loaded by the first query that uses it, not by opening the history

        return Session(self.engine, expire_on_commit=False)

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
