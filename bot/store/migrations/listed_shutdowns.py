"""The schema version of the shutdown dates the judge endpoints' model lists give, read once a day by any process
(32)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v32_listed_shutdowns(op: Operations) -> None:
    # When each endpoint's model list was last read (whatever it gave), and the shutdown dates it gave then: shared
    # by the replicas, kept across restarts, so that the list is read once a day per endpoint.
    op.create_table(
        "model_list_read",
        sa.Column("endpoint", sa.String(255), primary_key=True),
        sa.Column("read_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "listed_shutdown",
        sa.Column("endpoint", sa.String(255), primary_key=True),
        sa.Column("model", sa.String(128), primary_key=True),
        sa.Column("shutdown_date", sa.Date, nullable=False),
        sa.Column("read_at", sa.DateTime, nullable=False),
    )
