"""The Core tables that opening the history and the reading commands read (bot.store.tables.core), held to the table
models: each column there is the model's, with its type and nullability, so that the two cannot drift apart."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from bot.store.tables.core import JUDGMENT, RUN
from bot.store.tables.history import Judgment, Run, table_of


@pytest.mark.parametrize(("core", "model"), [(RUN, Run), (JUDGMENT, Judgment)], ids=["run", "judgment"])
def test_each_core_column_is_the_models_column(core: sa.Table, model: type) -> None:
    table = table_of(model)
    assert core.name == table.name
    for column in core.columns:
        assert column.name in table.columns, column.name
        theirs = table.columns[column.name]
        for dialect in (sqlite.dialect(), postgresql.dialect()):  # the same SQL type on either database
            assert column.type.compile(dialect) == theirs.type.compile(dialect), column.name
        assert column.nullable == theirs.nullable, column.name
        assert column.primary_key == theirs.primary_key, column.name


def test_the_core_lists_read_what_the_model_queries_read(tmp_path, rubrics) -> None:
    from dataclasses import asdict, fields

    from bot.store import ListedJudgment, ListedRun, Store, latest_in_channel, listed_runs, recent_in_channel, recent_runs, utcnow
    from tests.support.history_rows import Row, add

    judgment_fields = [field.name for field in fields(ListedJudgment)]
    run_fields = [field.name for field in fields(ListedRun)]
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    for channel in ("C1", None):
        add(store, rubrics.get("eth"), [Row("m1", "scored", 90, True, "Correct"), Row("m2", "error"),
                                        Row("m1", "scored", 10, False, "Generic")], channel=channel, user="U1")
    for channel in ("C1", None, "C2"):
        for limit in (1, 10):
            models = recent_in_channel(store, channel_id=channel, limit=limit)
            listed = latest_in_channel(store, channel_id=channel, limit=limit)
            assert [asdict(row) for row in listed] == [{name: getattr(model, name) for name in judgment_fields}
                                                      for model in models]
    runs = listed_runs(store, 10, utcnow())
    assert len(runs) == 2
    assert [asdict(run) for run in runs] == [{name: getattr(model, name) for name in run_fields}
                                             for model in recent_runs(store, 10)]
    store.engine.dispose()
