"""The history failing under a run (read-only, full, damaged): a sentence naming the file, and no saved row lost."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import event

from bot.csvfiles.rows import CsvRow
from bot.errors import StoreUnavailable
from bot.runs import execute_run, start_run
from bot.store import Store, create_run, get_run, iter_judgments, update_run
from tests.support.read_only import read_only
from tests.support.replies import eth_reply

COLUMNS = ["question", "reference", "answer"]


def rows(count: int, prefix: str) -> list[CsvRow]:
    """Rows whose verdicts take room: each reply carries a long reasoning."""
    return [CsvRow(line=i + 2, question=f"{prefix} question {i}", reference="See myStudies.", answer=f"{prefix} {i}",
                   model=None, cells={"question": f"{prefix} question {i}"}) for i in range(count)]


@pytest.fixture
def history(tmp_path: Path):
    path = tmp_path / "h.db"
    store = Store.open(f"sqlite:///{path}")
    yield path, store
    store.engine.dispose()


def verdicts(store: Store, run_id: int) -> list[tuple[int, str, float | None]]:
    return [(row.id, row.status, row.headline) for row in iter_judgments(store, run_id)]


async def test_a_full_disk_mid_run_stops_it_with_a_sentence_and_keeps_every_saved_row(
        history, rubrics, judge_server, make_client, caplog):
    path, store = history
    long_reply = eth_reply("Correct")
    long_reply.content = long_reply.content.replace("graded as Correct", "graded as Correct " + "x" * 3000)
    judge_server.responder = lambda body: long_reply
    eth = rubrics.get("eth")
    done = start_run(store, rubric=eth, rows=rows(3, "early"), judge_model="judge-test", columns=COLUMNS)
    await execute_run(store, done, eth, make_client(), concurrency=2)
    saved = verdicts(store, done.id)
    later = start_run(store, rubric=eth, rows=rows(40, "later"), judge_model="judge-test", columns=COLUMNS)
    with store.engine.connect() as conn:
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()

    @event.listens_for(store.engine, "connect")
    def _cap(dbapi_connection, _record) -> None:  # the disk fills up: the file cannot grow past a few more pages
        dbapi_connection.execute(f"PRAGMA max_page_count={pages + 4}")

    store.engine.dispose()
    caplog.set_level(logging.WARNING)

    with pytest.raises(StoreUnavailable) as stopped:
        await execute_run(store, later, eth, make_client(), concurrency=2)

    assert str(stopped.value).startswith(f"the history {path} cannot grow: the disk is full")
    assert "Every row saved before is kept" in str(stopped.value)
    assert not [record for record in caplog.records if record.exc_info]  # a sentence, not a traceback in the log
    event.remove(store.engine, "connect", _cap)
    store.engine.dispose()
    assert verdicts(store, done.id) == saved
    statuses = {status for _, status, _ in verdicts(store, later.id)}
    assert statuses <= {"scored", "pending"} and "pending" in statuses  # none lost: judged, or left for resume


def test_a_file_made_read_only_after_it_was_opened_refuses_writes_with_a_sentence(history):
    path, store = history
    run = create_run(store, rubric_name="eth", rubric_version="1.0", rubric_hash="h", judge_model="judge-test")
    store.engine.dispose()  # the connections the run opens from now on find the file read-only

    with read_only(path), pytest.raises(StoreUnavailable) as refused:
        update_run(store, run.id, status="paused")

    assert str(refused.value).startswith(f"the history {path} is read-only")
    assert get_run(store, run.id).status == "pending"
