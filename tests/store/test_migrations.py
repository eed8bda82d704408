"""Tests for bot.store's migrations: a new history built step by step, upgrades that keep the rows and figures of an
older schema, and a history newer than judgebot refused, on SQLite and PostgreSQL (the `db_url` fixture)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

from bot.errors import SchemaTooNew
from bot.store import (
    LATEST,
    Feedback,
    Store,
    add_rows,
    channel_stats,
    create_run,
    current_version,
    find_cached,
    get_run,
    iter_judgments,
    keep_listed_shutdowns,
    listed_shutdowns,
    make_engine,
    migrate,
    next_pending,
    question_key,
    run_billed,
    save_verdict,
    spend,
)
from tests.support.store_rows import ARABIC, ARABIC_ANSWER, COMMON, make_verdict, reload, row
from tests.support.store_schema import schema_diffs, schema_versions


def table_names(engine: sa.Engine) -> set[str]:
    with engine.connect() as conn:
        return set(sa.inspect(conn).get_table_names())


# --- migrations ------------------------------------------------------------------------------------------------


def test_the_latest_version_is_the_number_of_migrations() -> None:
    # An up-to-date history is checked against LATEST without loading the migrations: the number is kept apart.
    from bot.store.migrations.versions import MIGRATIONS

    assert LATEST == len(MIGRATIONS)


def test_open_migrates_empty_database_to_latest(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            assert current_version(conn) == 0
        assert table_names(engine) == set()

        store = Store.open(db_url)
        try:
            assert [v for v, _ in schema_versions(store.engine)] == list(range(1, LATEST + 1))
            with store.engine.connect() as conn:
                assert current_version(conn) == LATEST
            assert table_names(store.engine) == {"schema_version", "run", "judgment", "feedback", "user_setting",
                                                 "channel_setting", "shared_file", "digest_subscription",
                                                 "digest_post", "judgment_tally", "judgment_sample", "label", "run_batch",
                                                 "billed_tally", "review_case", "review_nudge", "channel_judge",
                                                 "rubric_revision", "slack_delivery", "endpoint_pause", "workspace_org",
                                                 "workflow_step", "rejudge", "slack_installations", "slack_bots",
                                                 "slack_oauth_states", "model_list_read", "listed_shutdown",
                                                 "run_background"}
            assert schema_diffs(store.engine) == []
        finally:
            store.engine.dispose()
    finally:
        engine.dispose()


def structure(engine: sa.Engine) -> dict[str, dict[str, Any]]:
    """Each table as the database describes it: columns (name, type, nullability, default, autoincrement), primary
    key, foreign keys, check and unique constraints and indexes, each with its name and options. Columns are compared
    as a set: a column a migration added comes last, a model's where the model has it, and nothing reads columns by
    position."""
    found = {}
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        for table in inspector.get_table_names():
            found[table] = {
                "columns": sorted(repr((c["name"], str(c["type"]), c["nullable"], c.get("default"), c.get("autoincrement")))
                                  for c in inspector.get_columns(table)),
                "pk": inspector.get_pk_constraint(table),
                **{kind: sorted(map(repr, read(table))) for kind, read in (
                    ("foreign", inspector.get_foreign_keys), ("checks", inspector.get_check_constraints),
                    ("unique", inspector.get_unique_constraints), ("indexes", inspector.get_indexes))},
            }
    return found


def test_a_new_history_is_created_as_the_migrations_build_it_step_by_step(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        assert migrate(engine, target=1) == 1
        assert migrate(engine) == LATEST  # from version 1 on, through every migration
        migrated = structure(engine)
        stepped = [v for v, _ in schema_versions(engine)]
        with engine.begin() as conn:
            SQLModel.metadata.drop_all(conn)
            conn.execute(sa.text("DROP TABLE schema_version"))
        assert table_names(engine) == set()

        assert migrate(engine) == LATEST  # a new history: created from the models at once
        assert structure(engine) == migrated
        assert [v for v, _ in schema_versions(engine)] == stepped == list(range(1, LATEST + 1))
        assert schema_diffs(engine) == []
        assert migrate(engine) == LATEST  # and opened again as any up-to-date history
    finally:
        engine.dispose()


def test_open_again_is_a_no_op(db_url: str) -> None:
    first = Store.open(db_url)
    run = create_run(first, **COMMON)
    add_rows(first, [row(run.id, 1)])
    before = schema_versions(first.engine)
    first.engine.dispose()

    second = Store.open(db_url)
    try:
        assert schema_versions(second.engine) == before  # same versions, same applied_at: nothing re-applied
        assert migrate(second.engine) == LATEST
        assert schema_versions(second.engine) == before
        assert get_run(second, run.id).rubric_name == COMMON["rubric_name"]
        assert [j.answer for j in iter_judgments(second, run.id)] == ["a1"]
        assert schema_diffs(second.engine) == []
    finally:
        second.engine.dispose()


def test_upgrade_from_version_1_keeps_old_rows(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=1) == 1
    assert table_names(engine) == {"schema_version", "run", "judgment"}
    with engine.connect() as conn:
        assert "flags" not in {c["name"] for c in sa.inspect(conn).get_columns("judgment")}

    created = datetime(2024, 5, 6, 7, 8, 9, 123456)
    judged = datetime(2024, 5, 6, 7, 9, 0, 654321)
    run_values = {"created_at": created, "status": "done", "rubric_name": "correctness", "rubric_version": "0.9",
                  "rubric_hash": "a" * 32, "judge_model": "old-judge", "source": "slack", "source_name": "old.csv",
                  "columns": json.dumps(["question", "السؤال"], ensure_ascii=False), "fresh": True, "total_rows": 2,
                  "channel_id": "C1"}
    columns = ", ".join(run_values)
    with engine.begin() as conn:  # plain SQL, as judgebot at schema version 1 wrote them
        run_id = conn.execute(
            sa.text(f"INSERT INTO run ({columns}) VALUES ({', '.join(':' + k for k in run_values)}) RETURNING id"),
            run_values,
        ).scalar_one()
        old_rows = [
            {"run_id": run_id, "row_number": 1, "created_at": created, "judged_at": judged, "status": "scored",
             "rubric_name": "correctness", "rubric_version": "0.9", "rubric_hash": "a" * 32, "judge_model": "old-judge",
             "prompt_hash": "p" * 32, "cache_key": "k-old", "question": ARABIC, "reference": "القاهرة",
             "answer": ARABIC_ANSWER, "cells": json.dumps({"السؤال": ARABIC, "extra": {"n": [1, 2]}}, ensure_ascii=False),
             "output": json.dumps({"score": 5, "nested": {"ok": True}}), "derived": json.dumps({"norm": 1.0}),
             "headline": 1.0, "passed": True, "label": "exact", "tokens_in": 10, "tokens_out": 2, "latency_ms": 300,
             "attempts": 1},
            {"run_id": run_id, "row_number": 2, "created_at": created, "judged_at": None, "status": "pending",
             "rubric_name": "correctness", "rubric_version": "0.9", "rubric_hash": "a" * 32, "judge_model": "old-judge",
             "prompt_hash": None, "cache_key": None, "question": "q2", "reference": "r2", "answer": "a2",
             "cells": json.dumps({"question": "q2"}), "output": None, "derived": None, "headline": None,
             "passed": None, "label": None, "tokens_in": 0, "tokens_out": 0, "latency_ms": 0, "attempts": 0},
        ]
        names = ", ".join(old_rows[0])
        insert = sa.text(f"INSERT INTO judgment ({names}) VALUES ({', '.join(':' + k for k in old_rows[0])})")
        for values in old_rows:
            conn.execute(insert, values)
    engine.dispose()

    store = Store.open(db_url)
    try:
        assert [v for v, _ in schema_versions(store.engine)] == list(range(1, LATEST + 1))
        assert schema_diffs(store.engine) == []

        run = get_run(store, run_id)
        assert (run.created_at, run.status, run.source, run.source_name, run.fresh, run.total_rows, run.channel_id) == (
            created, "done", "slack", "old.csv", True, 2, "C1")
        assert run.columns == ["question", "السؤال"]

        scored, pending = list(iter_judgments(store, run_id))
        assert (scored.row_number, scored.status, scored.created_at, scored.judged_at) == (1, "scored", created, judged)
        assert (scored.question, scored.reference, scored.answer) == (ARABIC, "القاهرة", ARABIC_ANSWER)
        assert scored.cells == {"السؤال": ARABIC, "extra": {"n": [1, 2]}}
        assert scored.output == {"score": 5, "nested": {"ok": True}}
        assert (scored.derived, scored.headline, scored.passed, scored.label, scored.cache_key) == (
            {"norm": 1.0}, 1.0, True, "exact", "k-old")
        assert (scored.tokens_in, scored.tokens_out, scored.latency_ms, scored.attempts) == (10, 2, 300, 1)
        assert scored.flags is None and pending.flags is None
        assert (pending.row_number, pending.status, pending.output, pending.judged_at) == (2, "pending", None, None)
        with store.engine.connect() as conn:  # the added column is SQL NULL, not a JSON 'null'
            assert conn.execute(sa.text("SELECT COUNT(*) FROM judgment WHERE flags IS NULL")).scalar() == 2

        # the old rows keep working with the new code
        assert find_cached(store, "k-old").id == scored.id
        assert [j.id for j in next_pending(store, run_id)] == [pending.id]
        # the upgrade tallied the row judged before it, and keyed its question
        assert scored.question_key == question_key(None, "correctness", ARABIC)
        [old_figures] = channel_stats(store, channel_id=None)
        assert (old_figures.cases, old_figures.scored, old_figures.mean_headline) == (1, 1, 1.0)
        assert channel_stats(store, channel_id=None, since=judged, until=judged + timedelta(seconds=1))[0].cases == 1
        assert save_verdict(store, pending.id, make_verdict(flags=["injection"]), cache_key="k-new")
        assert reload(db_url, pending.id).flags == ["injection"]
        [both] = channel_stats(store, channel_id=None)
        assert (both.cases, both.scored, both.mean_headline) == (2, 2, pytest.approx(0.9))
        new_run = create_run(store, **COMMON)
        assert new_run.id > run_id  # the id sequence survived the upgrade
        add_rows(store, [row(new_run.id, 1)])
        assert [j.id for j in iter_judgments(store, new_run.id)][0] > pending.id

        # the new table works, with its unique (judgment_id, user_id) and its foreign key
        with store.session() as session:
            session.add(Feedback(judgment_id=scored.id, user_id="U1", agree=True))
            session.add(Feedback(judgment_id=scored.id, user_id="U2", agree=False))
            session.add(Feedback(judgment_id=pending.id, user_id="U1", agree=True))
            session.commit()
        with pytest.raises(IntegrityError), store.session() as session:
            session.add(Feedback(judgment_id=scored.id, user_id="U1", agree=False))
            session.commit()
        with pytest.raises(IntegrityError), store.session() as session:
            session.add(Feedback(judgment_id=999_999, user_id="U1", agree=False))
            session.commit()
        with store.engine.connect() as conn:
            votes = conn.execute(sa.text("SELECT judgment_id, user_id, agree FROM feedback ORDER BY id")).all()
        assert [tuple(v) for v in votes] == [(scored.id, "U1", True), (scored.id, "U2", False), (pending.id, "U1", True)]
    finally:
        store.engine.dispose()


def test_database_newer_than_judgebot_is_refused(db_url: str) -> None:
    Store.open(db_url).engine.dispose()
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO schema_version (version, applied_at) VALUES (:v, CURRENT_TIMESTAMP)"),
                         {"v": LATEST + 1})
        with pytest.raises(SchemaTooNew, match="upgrade judgebot") as raised:
            migrate(engine)
        assert f"schema version {LATEST + 1}" in str(raised.value)
        with pytest.raises(SchemaTooNew, match="upgrade judgebot"):
            Store.open(db_url)
        assert [v for v, _ in schema_versions(engine)] == [*range(1, LATEST + 1), LATEST + 1]
    finally:
        engine.dispose()


def test_upgrade_to_version_7_counts_reused_verdicts_apart_and_keeps_runs(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=6) == 6
    judged = datetime(2026, 11, 16, 9, 30)
    with engine.begin() as conn:  # a file judged twice by judgebot at schema version 6: the second time from the cache
        run_id = conn.execute(sa.text(
            "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, fresh, "
            "total_rows) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'cli', false, 2) RETURNING id"), {"t": judged}).scalar_one()
        insert = sa.text(
            "INSERT INTO judgment (run_id, row_number, created_at, judged_at, status, rubric_name, rubric_version, "
            "rubric_hash, judge_model, question, reference, answer, headline, passed, cached_from, tokens_in, "
            "tokens_out, latency_ms, attempts) VALUES (:run, 1, :t, :t, 'scored', 'eth', '1', 'h', 'j', 'Q', 'R', 'A', "
            "80.0, true, :source, 0, 0, 0, 0) RETURNING id")
        first = conn.execute(insert, {"run": run_id, "t": judged, "source": None}).scalar_one()
        conn.execute(insert, {"run": run_id, "t": judged, "source": first})
    engine.dispose()

    store = Store.open(db_url)
    try:
        [figures] = channel_stats(store, channel_id=None)
        # one case (schema 28): the verdict read from the cache replaced the first
        assert (figures.cases, figures.rejudged, figures.scored, figures.mean_headline) == (1, 1, 1, 80.0)
        assert get_run(store, run_id).results_path is None
    finally:
        store.engine.dispose()


def test_upgrade_to_version_12_counts_the_votes_given_before_into_the_tally(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=11) == 11
    judged = datetime(2026, 11, 16, 9, 30)
    with engine.begin() as conn:  # a judgment and its votes, as judgebot at schema version 11 saved them
        run_id = conn.execute(sa.text(
            "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, fresh, "
            "total_rows, samples) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'slack', false, 1, 1) RETURNING id"),
            {"t": judged}).scalar_one()
        judgment_id = conn.execute(sa.text(
            "INSERT INTO judgment (run_id, row_number, created_at, judged_at, status, channel_id, rubric_name, "
            "rubric_version, rubric_hash, judge_model, question, reference, answer, headline, passed, tokens_in, "
            "tokens_out, latency_ms, attempts, tokens_cached) VALUES (:run, 1, :t, :t, 'scored', 'C1', 'eth', '1', "
            "'h', 'j', 'Q', 'R', 'A', 80.0, true, 0, 0, 0, 0, 0) RETURNING id"), {"run": run_id, "t": judged}).scalar_one()
        for user, agree in (("U1", True), ("U2", False), ("U3", True)):
            conn.execute(sa.text("INSERT INTO feedback (judgment_id, user_id, agree, created_at, updated_at) "
                                 "VALUES (:j, :u, :a, :t, :t)"), {"j": judgment_id, "u": user, "a": agree, "t": judged})
    engine.dispose()

    store = Store.open(db_url)
    try:
        [figures] = channel_stats(store, channel_id="C1")
        assert (figures.scored, figures.votes, figures.agreeing) == (1, 3, 2)
    finally:
        store.engine.dispose()


def test_upgrade_to_version_13_bills_what_the_history_holds(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=12) == 12
    judged = datetime(2026, 11, 16, 9, 30, 40)
    with engine.begin() as conn:  # a row judged by one judge, and a row of a jury of two, as version 12 saved them
        run_id = conn.execute(sa.text(
            "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, fresh, "
            "total_rows, samples) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'slack', false, 2, 1) RETURNING id"),
            {"t": judged}).scalar_one()
        ids = []
        for row, (judge, samples, tokens, cost) in enumerate((("j", None, 1_000, 0.01), ("a+b", 2, 3_000, None)), 1):
            ids.append(conn.execute(sa.text(
                "INSERT INTO judgment (run_id, row_number, created_at, judged_at, status, channel_id, rubric_name, "
                "rubric_version, rubric_hash, judge_model, question, reference, answer, headline, passed, tokens_in, "
                "tokens_out, latency_ms, attempts, tokens_cached, cost_usd, samples) VALUES (:run, :row, :t, :t, "
                "'scored', 'C1', 'eth', '1', 'h', :judge, 'Q', 'R', 'A', 80.0, true, :tokens, 10, 0, 1, 0, :cost, "
                ":samples) RETURNING id"), {"run": run_id, "row": row, "t": judged, "judge": judge, "tokens": tokens,
                                            "cost": cost, "samples": samples}).scalar_one())
        for judge, tokens, cost in (("a", 1_000, 0.02), ("b", 2_000, None)):
            conn.execute(sa.text(
                "INSERT INTO judgment_sample (judgment_id, run_id, judge_model, sample, judged_at, status, tokens_in, "
                "tokens_out, latency_ms, attempts, tokens_cached, cost_usd) VALUES (:j, :run, :judge, 1, :t, "
                "'scored', :tokens, 5, 0, 1, 0, :cost)"),
                {"j": ids[1], "run": run_id, "judge": judge, "tokens": tokens, "t": judged, "cost": cost})
    engine.dispose()

    store = Store.open(db_url)
    try:
        found = spend(store, channel_id="C1", since=datetime(2026, 11, 1))
        # the single judge's row, and each member of the jury on its own (never the jury's "a+b" as a whole)
        assert sorted(found.by_judge) == [("eth", "a", 0.02, 0), ("eth", "b", 0.0, 1), ("eth", "j", 0.01, 0)]
        billed = run_billed(store, run_id)
        assert (billed.judgments, billed.tokens_in, billed.tokens_out, billed.unpriced) == (3, 4_000, 20, 1)
    finally:
        store.engine.dispose()


def test_upgrade_to_version_15_keeps_one_label_a_case_and_person_and_drops_passes_made_from_the_judge(
        db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=14) == 14
    judged = datetime(2026, 11, 16, 9, 30)
    with engine.begin() as conn:  # one labeled file judged twice, a correction and a vote, as version 14 saved them
        ids = []
        for _ in ("first run", "second run"):
            run_id = conn.execute(sa.text(
                "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, "
                "fresh, total_rows, samples) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'slack', false, 2, 1) "
                "RETURNING id"), {"t": judged}).scalar_one()
            file_rows = (("Q1", {"human_pass": "yes"}), ("Q2", {"Human Result Tag": "Correct"}))
            for row, (question, cells) in enumerate(file_rows, 1):
                ids.append(conn.execute(sa.text(
                    "INSERT INTO judgment (run_id, row_number, created_at, judged_at, status, team_id, channel_id, "
                    "rubric_name, rubric_version, rubric_hash, judge_model, question, reference, answer, headline, "
                    "passed, tokens_in, tokens_out, latency_ms, attempts, tokens_cached, cells) VALUES (:run, :row, :t, :t, "
                    "'scored', 'T1', 'C1', 'eth', '1', 'h', 'j', :q, 'R', 'A', 80.0, true, 0, 0, 0, 0, 0, :cells) "
                    "RETURNING id"), {"run": run_id, "row": row, "t": judged, "q": question,
                                      "cells": json.dumps(cells)}).scalar_one())
        labels = [(ids[0], "file", "file", {}, True, judged),
                  (ids[1], "file", "file", {"result_tag": "Correct"}, True, judged),
                  (ids[2], "file", "file", {}, True, judged + timedelta(hours=1)),
                  (ids[3], "file", "file", {"result_tag": "Correct"}, True, judged + timedelta(hours=1)),
                  (ids[3], "U1", "correction", {"result_tag": "Correct", "correctness": 2, "completeness": 2}, True, judged)]
        for judgment_id, user, source, values, passed, at in labels:
            conn.execute(sa.text(
                "INSERT INTO label (judgment_id, team_id, channel_id, user_id, source, rubric_name, rubric_hash, "
                "judge_model, \"values\", passed, created_at, updated_at) VALUES (:j, 'T1', 'C1', :u, :s, 'eth', 'h', "
                "'j', :v, :p, :t, :t)"), {"j": judgment_id, "u": user, "s": source, "v": json.dumps(values), "p": passed,
                                          "t": at})
        conn.execute(sa.text("INSERT INTO feedback (judgment_id, user_id, agree, created_at, updated_at) "
                             "VALUES (:j, 'U2', true, :t, :t)"), {"j": ids[0], "t": judged})
    engine.dispose()

    store = Store.open(db_url)
    try:
        with store.engine.connect() as conn:
            kept = conn.execute(sa.text("SELECT judgment_id, user_id, passed, pass_from FROM label ORDER BY judgment_id, "
                                        "user_id")).all()
            votes = conn.execute(sa.text("SELECT case_key FROM feedback")).scalars().all()
            keys = conn.execute(sa.text("SELECT case_key FROM label ORDER BY judgment_id, user_id")).scalars().all()
        # the file's labels once a case (the second run's), the correction kept; a pass the file's row did not give,
        # made whole from the judge's reply, is no longer anyone's pass
        assert [tuple(row) for row in kept] == [(ids[2], "file", True, "given"), (ids[3], "U1", True, "rule"),
                                                (ids[3], "file", None, None)]
        assert len(set(keys)) == 2 and votes == [keys[0]]  # Q1's vote and labels are one case
    finally:
        store.engine.dispose()


def test_upgrade_to_version_28_counts_each_case_once_and_chains_its_judgments(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=27) == 27
    monday = datetime(2026, 11, 16, 9, 30)
    with engine.begin() as conn:  # one case judged three times (a score, a later failure, a new score), another once
        run_id = conn.execute(sa.text(
            "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, fresh, "
            "total_rows, samples) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'slack', false, 4, 1) RETURNING id"),
            {"t": monday}).scalar_one()
        insert = sa.text(
            "INSERT INTO judgment (run_id, row_number, created_at, judged_at, status, team_id, channel_id, model_name, "
            "rubric_name, rubric_version, rubric_hash, judge_model, question, reference, answer, headline, passed, "
            "tokens_in, tokens_out, latency_ms, attempts, tokens_cached) VALUES (:run, :n, :t, :t, :status, 'T1', 'C1', "
            "'m1', 'eth', '1', 'h', 'j', :q, 'R', 'A', :headline, :passed, 0, 0, 0, 0, 0) RETURNING id"
        ).bindparams(sa.bindparam("t", type_=sa.DateTime))  # written as judgebot writes a time, to compare as one
        ids = [conn.execute(insert, {"run": run_id, "n": n, "t": monday + timedelta(days=day), "status": status, "q": q,
                                     "headline": headline, "passed": None if headline is None else headline >= 50})
               .scalar_one()
               for n, (day, status, q, headline) in enumerate([(0, "scored", "Q", 25.0), (1, "error", "Q", None),
                                                               (2, "scored", "Q", 100.0), (0, "scored", "Q2", 75.0)])]
    engine.dispose()

    store = Store.open(db_url)
    try:
        with store.engine.connect() as conn:
            rows = dict(conn.execute(sa.text("SELECT id, replaced_at FROM judgment")).all())
            cases = {case for (case,) in conn.execute(sa.text("SELECT case_hash FROM judgment"))}
        assert len(cases) == 2
        # the first score replaced by the second; the failure after a score counts nowhere; the rest stand
        replaced = {id_: None if at is None else datetime.fromisoformat(str(at)) for id_, at in rows.items()}
        assert replaced == {ids[0]: monday + timedelta(days=2), ids[1]: monday + timedelta(days=1), ids[2]: None,
                            ids[3]: None}
        [figures] = channel_stats(store, channel_id="C1")
        assert (figures.cases, figures.scored, figures.errors, figures.rejudged, figures.mean_headline) == (
            2, 2, 0, 2, 87.5)
        [week] = channel_stats(store, channel_id="C1", since=monday, until=monday + timedelta(days=2))
        assert (week.cases, week.scored, week.mean_headline) == (2, 2, 50.0)  # before the new score: 25 and 75
    finally:
        store.engine.dispose()


def test_upgrade_to_version_31_counts_no_reasoning_for_what_was_judged_before_and_bills_it_from_then_on(
        db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=30) == 30
    monday = datetime(2026, 11, 16, 9, 30)
    with engine.begin() as conn:
        run_id = conn.execute(sa.text(
            "INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, source, fresh, "
            "total_rows, samples) VALUES (:t, 'done', 'eth', '1', 'h', 'j', 'cli', false, 1, 1) RETURNING id"),
            {"t": monday}).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO billed_tally (channel_key, minute, run_id, rubric_name, judge_model, judgments, tokens_in, "
            "tokens_out, tokens_cached, cost, unpriced) VALUES ('', :t, :run, 'eth', 'j', 1, 100, 20, 0, 0.5, 0)"
        ).bindparams(sa.bindparam("t", type_=sa.DateTime)), {"t": monday, "run": run_id})
    engine.dispose()

    store = Store.open(db_url)
    try:
        assert schema_diffs(store.engine) == []
        billed = run_billed(store, run_id)
        assert (billed.tokens_out, billed.tokens_reasoning, billed.cost) == (20, 0, 0.5)
        run = create_run(store, **COMMON)
        add_rows(store, [row(run.id, 1)])
        [pending] = next_pending(store, run.id)
        save_verdict(store, pending.id, make_verdict(tokens_in=50, tokens_out=300, tokens_reasoning=250,
                                                     cost_usd=0.01), cache_key="k")
        [judgment] = iter_judgments(store, run.id)
        assert (judgment.tokens_out, judgment.tokens_reasoning) == (300, 250)
        assert (run_billed(store, run.id).tokens_out, run_billed(store, run.id).tokens_reasoning) == (300, 250)
    finally:
        store.engine.dispose()


def test_upgrade_to_version_32_keeps_the_endpoints_shutdown_dates_after(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate(engine, target=31) == 31
    assert not {"model_list_read", "listed_shutdown"} & table_names(engine)
    engine.dispose()

    store = Store.open(db_url)
    try:
        endpoint, read_at = "https://api.openai.com/v1", datetime(2026, 12, 7, 8, 30)
        assert listed_shutdowns(store) == {}
        keep_listed_shutdowns(store, endpoint, {"gpt-4o-mini": date(2027, 1, 14)}, read_at)
        keep_listed_shutdowns(store, "http://127.0.0.1:8000/v1", {}, read_at)  # read, nothing dated
        kept = listed_shutdowns(store)
        assert {name: (read.read_at, read.dates) for name, read in kept.items()} == {
            endpoint: (read_at, {"gpt-4o-mini": date(2027, 1, 14)}), "http://127.0.0.1:8000/v1": (read_at, {})}
        keep_listed_shutdowns(store, endpoint, {}, read_at + timedelta(days=1))  # the next day's read replaces it
        assert listed_shutdowns(store, [endpoint])[endpoint].dates == {}
        assert schema_diffs(store.engine) == []
    finally:
        store.engine.dispose()
