"""The Core twins of the table models and the records read over them (bot.store.tables.core), held to the models:
written from them, each column the model's with its type, nullability and defaults, so that the two cannot drift."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy.dialects import postgresql, sqlite

import bot.store.tables.as_read
import bot.store.tables.core
from tests.support.core_twins import TWINNED, model_of, record_name, written


def test_the_core_twins_and_records_are_written_from_todays_models() -> None:
    for path, text in written().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run `python -m tests.support.core_twins`"


@pytest.mark.parametrize(("module", "name"), TWINNED, ids=[name for _, name in TWINNED])
def test_each_twin_has_the_models_columns(module: str, name: str) -> None:
    table = model_of(module, name).__table__
    core = bot.store.tables.core.CORE.tables[table.name]
    assert list(core.columns.keys()) == list(table.columns.keys())
    for column in core.columns:
        theirs = table.columns[column.name]
        for dialect in (sqlite.dialect(), postgresql.dialect()):  # the same SQL type on either database
            assert column.type.compile(dialect) == theirs.type.compile(dialect), column.name
        assert (column.nullable, column.primary_key) == (theirs.nullable, theirs.primary_key), column.name
        assert (column.default is None) == (theirs.default is None), column.name
        if column.default is not None:
            assert column.default.arg == theirs.default.arg or column.default.arg.__name__ == "utcnow", column.name
        assert str(getattr(column.server_default, "arg", None)) == str(getattr(theirs.server_default, "arg", None))


def test_a_record_holds_every_field_of_its_model() -> None:
    from dataclasses import fields

    for module, name in TWINNED:
        record = getattr(bot.store.tables.as_read, record_name(name), None)
        if record is not None:
            model = model_of(module, name)
            assert [field.name for field in fields(record)] == list(model.model_fields)
            assert list(model.model_fields) == list(model.__table__.columns.keys())  # `of` reads the columns in order


def test_the_core_lists_read_what_the_model_queries_read(tmp_path, rubrics) -> None:
    from dataclasses import asdict, fields

    from bot.records import ANY_TEAM
    from bot.store import (
        ListedJudgment,
        ListedRun,
        Store,
        WaitingCase,
        latest_in_channel,
        listed_runs,
        open_cases,
        recent_in_channel,
        recent_runs,
        utcnow,
        waiting_cases,
    )
    from bot.trust.review import send_to_review
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
    for run in recent_runs(store, 10):
        assert send_to_review(store, run, rate=1).total
    case_fields = [field.name for field in fields(WaitingCase)]
    for team, channel in ((None, None), (ANY_TEAM, "C1"), (None, "C1"), (ANY_TEAM, "C2")):
        for limit in (1, 100):
            models = open_cases(store, team_id=team, channel_id=channel, limit=limit)
            listed_cases = waiting_cases(store, team_id=team, channel_id=channel, limit=limit)
            assert [(asdict(case), asdict(row)) for case, row in listed_cases] == [
                ({name: getattr(case, name) for name in case_fields},
                 {name: getattr(row, name) for name in judgment_fields}) for case, row in models]
    assert waiting_cases(store, team_id=ANY_TEAM, channel_id="C1")  # some listed
    runs = listed_runs(store, 10, utcnow())
    assert len(runs) == 2
    assert [asdict(run) for run in runs] == [{name: getattr(model, name) for name in run_fields}
                                             for model in recent_runs(store, 10)]
    store.engine.dispose()


@pytest.mark.parametrize("module", ["trust", "background", "chat", "processes"])
def test_a_table_module_alone_brings_the_tables_its_foreign_keys_name(module: str) -> None:
    # Nothing else loads the run and judgment table models now (the judging path reads and writes over the twins):
    # a row of these tables could not be saved if the tables its foreign keys name were not in the metadata.
    check = (f"import bot.store.tables.{module}, sqlmodel\n"
             "for table in sqlmodel.SQLModel.metadata.tables.values():\n"
             "    for key in table.foreign_keys:\n"
             "        assert key.column is not None\n"  # raises NoReferencedTableError when the table is missing
             "print('resolved')")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "resolved", done.stderr[-2000:]
