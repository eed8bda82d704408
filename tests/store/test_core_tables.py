"""The Core tables that opening the history and the reading commands read (bot.store.tables.core), held to the table
models: each column there is the model's, with its type and nullability, so that the two cannot drift apart."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from bot.store.tables.core import FEEDBACK, JUDGMENT, JUDGMENT_TALLY, LABEL, REVIEW_CASE, RUN
from bot.store.tables.history import Feedback, Judgment, JudgmentTally, Run, table_of
from bot.store.tables.trust import Label, ReviewCase


@pytest.mark.parametrize(("core", "model"), [(RUN, Run), (JUDGMENT, Judgment), (REVIEW_CASE, ReviewCase),
                                             (JUDGMENT_TALLY, JudgmentTally), (FEEDBACK, Feedback), (LABEL, Label)],
                         ids=["run", "judgment", "review_case", "judgment_tally", "feedback", "label"])
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
