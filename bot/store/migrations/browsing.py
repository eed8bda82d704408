"""The schema versions of the web view: the index a run's rows are filtered, counted and sorted from (35)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v35_run_rows_index(op: Operations) -> None:
    # A run's rows counted per model, status and outcome (the list of runs), and filtered by them and sorted by
    # headline (a run's page of rows), read from the index alone: a run of 20,000 rows never read whole for a page.
    op.create_index("ix_judgment_run_browse", "judgment", ["run_id", "model_name", "status", "passed", "tag", "headline"])
