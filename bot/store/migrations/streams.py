"""The schema versions of Slack's newer surfaces: the stream that shows a file run's progress (20)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v20_progress_streams(op: Operations) -> None:
    # The streamed message showing a run's progress, so that a process taking the run over can end a stream an earlier
    # process left open.
    op.add_column("shared_file", sa.Column("stream_ts", sa.String(32)))
