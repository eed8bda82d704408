"""A history's schema as the store tests check it: what autogenerate would still change, and the versions applied."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel


def schema_diffs(engine: sa.Engine) -> list[Any]:
    """What autogenerate would change to make the database match the models (schema_version is not a model)."""
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        diffs = compare_metadata(context, SQLModel.metadata)
    return [d for d in diffs if not (isinstance(d, tuple) and d[0] == "remove_table" and d[1].name == "schema_version")]


def schema_versions(engine: sa.Engine) -> list[tuple[int, Any]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text("SELECT version, applied_at FROM schema_version ORDER BY version"))]
