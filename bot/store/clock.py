"""Now as the history stores it: UTC without tzinfo, the same value on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now in UTC, without tzinfo: SQLite and PostgreSQL then store and return the same value."""
    return datetime.now(UTC).replace(tzinfo=None)
