"""A run's pending rows claimed by the processes judging it together (SQLite and PostgreSQL): disjoint claims in row
order, claims that lapse with their process, what the others judged, and which runs are worth helping."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta

from sqlalchemy import update

from bot.runs.start import FILE_SOURCE
from bot.store import (
    CLAIM_STALE,
    Store,
    add_part,
    add_rows,
    claim_rows,
    create_run,
    judged_elsewhere,
    pending_elsewhere,
    process_name,
    refresh_claims,
    release_claims,
    runs_to_help,
    save_verdict,
    table_of,
    utcnow,
)
from bot.store.tables.core import RUN
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support.store_rows import COMMON, make_verdict, row

OTHER_HOST = "another-host:4242:abcd1234"


def running_run(store: Store, rows: int, *, source: str = FILE_SOURCE, owner: str = OTHER_HOST) -> int:
    run = create_run(store, **COMMON, source=source, columns=["question", "reference", "answer"], status="running",
                           owner=owner, heartbeat_at=utcnow())
    add_rows(store, (row(run.id, n) for n in range(2, rows + 2)))
    return run.id


def dead_pid() -> int:
    """The pid of a process of this host that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_two_processes_claim_disjoint_groups_in_row_order(store):
    run_id = running_run(store, 10)
    mine = claim_rows(store, run_id, process_name(), limit=4)
    theirs = claim_rows(store, run_id, OTHER_HOST, limit=4)
    assert [triple.question for _, triple in mine] == ["q2", "q3", "q4", "q5"]
    assert [triple.question for _, triple in theirs] == ["q6", "q7", "q8", "q9"]
    assert pending_elsewhere(store, run_id, process_name()) == 6  # theirs, and the two nobody holds
    assert len(claim_rows(store, run_id, process_name(), limit=10)) == 2
    assert claim_rows(store, run_id, process_name(), limit=10) == []  # the others' claims are live
    assert refresh_claims(store, run_id, process_name()) == 6
    assert release_claims(store, run_id, process_name()) == 6
    assert [triple.question for _, triple in claim_rows(store, run_id, OTHER_HOST, limit=3)] == ["q2", "q3", "q4"]


def test_claims_lapse_with_their_process(store):
    run_id = running_run(store, 6)
    dead = f"{socket.gethostname()}:{dead_pid()}:dead0001"
    assert len(claim_rows(store, run_id, dead, limit=3)) == 3  # a process of this host that died since
    assert len(claim_rows(store, run_id, OTHER_HOST, limit=3)) == 3  # another host's, quiet for a while
    judgments = table_of(JudgmentTable)
    with store.engine.begin() as conn:
        conn.execute(update(judgments).where(judgments.c.claimed_by == OTHER_HOST)
                     .values(claimed_at=utcnow() - timedelta(seconds=CLAIM_STALE + 1)))
    taken = claim_rows(store, run_id, process_name(), limit=10)
    assert [triple.question for _, triple in taken] == ["q2", "q3", "q4", "q5", "q6", "q7"]


def test_what_the_others_judged_is_counted_with_its_cost(store):
    run_id = running_run(store, 6)
    since = utcnow() - timedelta(seconds=1)
    mine = claim_rows(store, run_id, process_name(), limit=2)
    theirs = claim_rows(store, run_id, OTHER_HOST, limit=3)
    for judgment_id, _ in mine:
        save_verdict(store, judgment_id, make_verdict(cost_usd=0.5), cache_key=f"k{judgment_id}")
    for (judgment_id, _), status in zip(theirs, ("scored", "scored", "error"), strict=True):
        save_verdict(store, judgment_id, make_verdict(status=status, cost_usd=0.25), cache_key=f"k{judgment_id}")
    assert judged_elsewhere(store, run_id, process_name(), since) == (3, 1, 0.75)
    assert judged_elsewhere(store, run_id, OTHER_HOST, since)[:2] == (2, 0)


def test_only_live_file_runs_with_rows_to_spare_are_helped(store):
    big, small = running_run(store, 150), running_run(store, 50)
    terminal = running_run(store, 150, source="cli")  # a run of the terminal may use an endpoint of its own
    batched = running_run(store, 150)
    add_part(store, batched, [])  # its pending rows wait in the provider's batches
    own = running_run(store, 150, owner=process_name())
    paused = running_run(store, 150)
    runs = RUN
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == paused).values(status="paused"))
    assert [run.id for run in runs_to_help(store, process_name(), sources=(FILE_SOURCE,))] == [big]
    claim_rows(store, big, OTHER_HOST, limit=60)  # 90 left to claim: under the 100 worth sharing
    assert runs_to_help(store, process_name(), sources=(FILE_SOURCE,)) == []
    assert {small, terminal, own} & {run.id for run in runs_to_help(store, process_name(), sources=("cli",))} == {
        terminal}
