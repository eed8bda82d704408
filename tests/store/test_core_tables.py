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
