"""Writing one row whatever is there already: updated when it exists, inserted when not, two writers at once
included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel, select

if TYPE_CHECKING:
    from bot.store.database import Store


def upsert(store: Store, table: type[SQLModel], keys: dict[str, Any], values: dict[str, Any]) -> Any:
    """Update the row of `table` matching `keys`, or insert it; return a copy of the row as it was, if any."""
    for attempt in range(2):  # two writers at once: the loser of the insert race updates instead
        try:
            with store.session() as session:
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
