"""Leases: which process handles a run, a shared file or a digest claim, and when another may take it over.

An owner is named host:pid:incarnation. On the same host a dead pid frees its leases at once; a process on
another host is taken to be gone once it has been quiet (no heartbeat) for longer than the lease's staleness.
"""

from __future__ import annotations

import functools
import os
import socket
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, update
from sqlalchemy.engine import Connection, CursorResult

if TYPE_CHECKING:
    from sqlmodel import Session


@functools.cache
def _incarnation() -> str:
    return uuid.uuid4().hex[:8]


def process_name() -> str:
    """host:pid:incarnation of this process, as a run's owner.

    The incarnation tells this process from an earlier one with the same host and pid, such as the
    pid 1 of a container that was restarted.
    """
    return f"{socket.gethostname()}:{os.getpid()}:{_incarnation()}"


def owner_gone(owner: str | None, last_seen: Any, now: Any, stale_after: float) -> bool:
    """Whether the process named `owner` is gone: on this host, its pid is dead; elsewhere, it went quiet."""
    host, pid, incarnation = [*(owner or "").split(":"), "", ""][:3]
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) == os.getpid():  # this very pid: this process, or an earlier life of it
            return bool(incarnation) and incarnation != _incarnation()
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, but another user's
            return False
        return False
    return last_seen is None or (now - last_seen).total_seconds() > stale_after


def take_over(conn: Connection | Session, table: Table, row: Any, *, seen: str, stale_after: float, now: datetime,
              owner: str | None = None, held: bool = True, where: tuple[Any, ...] = (), **values: Any) -> bool:
    """Make `owner` (this process) the owner of `row` as read just before, unless a live process holds it.

    `seen` names the column that tells when the owner last showed life (a heartbeat, a claim, an update);
    it is set to `now`. `held=False`: the row is free whoever is named in it (a run no longer running).
    The row must be unchanged since it was read (same owner, and `where`), so of two processes taking it
    at once, one wins. `table` is the row's Core table; the caller commits; True if the row was taken.
    """
    if held and row.owner and not owner_gone(row.owner, getattr(row, seen), now, stale_after):
        return False
    statement = (update(table).where(table.c.id == row.id, table.c.owner.is_not_distinct_from(row.owner), *where)
                 .values(owner=owner or process_name(), **{seen: now}, **values))
    result = cast(CursorResult[Any], conn.execute(statement))
    return result.rowcount == 1
