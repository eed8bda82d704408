"""The queries of the judging path over the Core tables (bot.store.tables.core): their modules load neither the ORM
nor the table models, and their writes of background requests and Batch API parts record what the models did."""

from __future__ import annotations

import subprocess
import sys

import sqlalchemy as sa

from bot.store import (
    ENDED,
    SENT,
    Store,
    add_background,
    add_part,
    add_rows,
    background_window,
    create_run,
    open_backgrounds,
    open_parts,
    set_run_message,
    status_counts,
    unsure_count,
    update_background,
    update_part,
)
from bot.store.tables.core import JUDGMENT
from tests.support.store_rows import COMMON, row

CORE_MODULES = ("bot.store.runs.rows", "bot.store.runs.row_claims", "bot.store.processes.listed_shutdowns",
                "bot.store.runs.backgrounds", "bot.store.runs.batches", "bot.store.counts.case_keys")
ORM = ("sqlalchemy.orm", "sqlmodel", "bot.store.tables.history", "bot.store.tables.background",
       "bot.store.tables.processes")


def test_the_judging_paths_queries_load_neither_the_orm_nor_the_table_models() -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {', '.join(CORE_MODULES)}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert set(CORE_MODULES) <= modules
    assert {name for name in modules if name.startswith(ORM)} == set()


def test_a_background_request_is_sent_then_ended(store: Store) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, 1)])
    asked = add_background(store, run_id=run.id, slot=(1, 0, 1), window="2h", boundary="b" * 16)
    other = add_background(store, run_id=run.id, slot=(1, 0, 2), window="8h", boundary="b" * 16)
    assert (asked.state, asked.ended_at) == ("sending", None) and asked.created_at is not None
    update_background(store, asked.id, response_id="resp_1")  # a response id: it is sent
    update_background(store, asked.id, status="in_progress")
    update_background(store, asked.id + 1_000, state=ENDED)  # no such request: nothing
    assert [(b.id, b.state, b.response_id, b.status) for b in open_backgrounds(store, run.id)] == [
        (asked.id, "sent", "resp_1", "in_progress"), (other.id, "sending", None, None)]
    update_background(store, asked.id, state="ended", status="completed")
    assert [b.id for b in open_backgrounds(store, run.id)] == [other.id]
    assert _ended(store, "run_background", asked.id) == ("ended", True)
    assert _ended(store, "run_background", other.id) == ("sending", False)
    assert background_window(store, run.id) == "8h"  # its latest request's
    assert background_window(store, run.id + 1_000) is None


def test_a_batch_part_records_its_ids_and_its_end(store: Store) -> None:
    run = create_run(store, **COMMON)
    part = add_part(store, run.id, [(1, 0, 1), (2, 0, 1)])
    update_part(store, part.id, input_file_id="file_1")
    update_part(store, part.id, batch_id="batch_1", state=SENT, status="validating")
    [sent] = open_parts(store, run.id)
    assert (sent.input_file_id, sent.batch_id, sent.state, sent.status, sent.ended_at) == (
        "file_1", "batch_1", SENT, "validating", None)
    assert sent.slots == [[1, 0, 1], [2, 0, 1]]
    update_part(store, part.id, state=ENDED, error="expired")
    assert open_parts(store, run.id) == []
    assert _ended(store, "run_batch", part.id) == (ENDED, True)


def _ended(store: Store, table: str, row_id: int) -> tuple[str, bool]:
    """The state of a row of `table`, and whether it has an end time."""
    with store.engine.connect() as conn:
        state, ended_at = conn.execute(sa.text(f"SELECT state, ended_at FROM {table} WHERE id = :id"),
                                       {"id": row_id}).one()
    return state, ended_at is not None


def test_a_runs_rows_counted_and_linked_to_their_message(store: Store) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, 1), row(run.id, 2, status="malformed", error="bad row"), row(run.id, 3)])
    assert status_counts(store, run.id) == {"pending": 2, "malformed": 1}
    assert unsure_count(store, run.id) == 0
    message = "1700000000.000100"
    set_run_message(store, run.id, message)
    table = JUDGMENT.c
    with store.engine.connect() as conn:
        found = conn.execute(sa.select(table.message_ts, table.error).where(table.run_id == run.id)
                             .order_by(table.id)).all()
    assert [tuple(each) for each in found] == [(message, None), (message, "bad row"), (message, None)]
