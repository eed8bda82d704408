"""A subprocess entry point for the store concurrency tests: `python -m tests.support.store_writer MODE URL [N]`.

Modes:
  write URL N      Store.open(URL), then N rounds of short transactions (see `one_round`).
  control URL N    The same rounds over an engine set up like make_engine but with plain (deferred) BEGIN.
  migrate URL      Store.open(URL) on a database that may be empty: migrate it, racing the other processes.

Every mode prints "ready" once imported and connected, waits for a line on stdin (so that all
processes start together), does its work and prints one JSON line with what happened.
Errors are counted, never raised, so the parent sees every "database is locked".
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from bot.records import Verdict
from bot.store import (
    BUSY_TIMEOUT_MS,
    Store,
    add_rows,
    configure_sqlite,
    create_run,
    next_pending,
    save_verdict,
    status_counts,
)
from bot.store.tables.core import JUDGMENT, RUN

ROWS_PER_ROUND = 3
WRITES_PER_ROUND = 7  # create_run, add_rows, read-then-write, 3 x save_verdict, read-then-write
LOCKED = "database is locked"


def deferred_engine(url: str) -> Engine:
    """make_engine without BEGIN IMMEDIATE: WAL, the same busy timeout, but a deferred BEGIN."""
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})
    event.listen(engine, "connect", configure_sqlite)

    @event.listens_for(engine, "begin")
    def _begin_deferred(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def verdict(worker: int, index: int) -> Verdict:
    """A scored verdict built by hand."""
    return Verdict(
        status="scored", output={"score": index % 5, "worker": worker}, derived={"norm": index / 10}, headline=1.0,
        passed=True, label="ok", rubric_name="r", rubric_version="1", rubric_hash="h" * 32, judge_model="m",
        prompt_hash="p" * 32, flags=["w"], tokens_in=3, tokens_out=4, latency_ms=5, attempts=1,
    )


def one_round(store: Store, worker: int, round_no: int, tally: dict[str, Any]) -> None:
    """Seven short write transactions (two of them read first, then write) and one read."""
    common = {"rubric_name": "r", "rubric_version": "1", "rubric_hash": "h" * 32, "judge_model": "m"}
    run = create_run(store, **common, source="test", source_name=f"w{worker}-r{round_no}")
    tally["runs"].append(run.id)
    rows = [
        {**common, "run_id": run.id, "row_number": i + 1, "status": "pending", "question": f"q{i}",
         "reference": "ref", "answer": f"a{worker}.{round_no}.{i}", "cells": {"w": worker, "r": round_no, "i": i}}
        for i in range(ROWS_PER_ROUND)
    ]
    tally["rows"] += add_rows(store, rows)
    with store.session() as session:  # read, then write, in one transaction
        count = session.execute(sa.select(sa.func.count()).select_from(JUDGMENT).where(JUDGMENT.c.run_id == run.id)).scalar()
        session.execute(sa.update(RUN).where(RUN.c.id == run.id).values(total_rows=count, status="running"))
        session.commit()
    counts = status_counts(store, run.id)
    if counts != {"pending": ROWS_PER_ROUND}:
        tally["wrong"].append(f"status_counts {counts}")
    for row in next_pending(store, run.id):
        if save_verdict(store, row.id, verdict(worker, row.row_number), cache_key=f"k{worker}.{round_no}.{row.row_number}"):
            tally["saved"] += 1
        else:
            tally["not_saved"] += 1
    with store.session() as session:  # read, then write, in one transaction
        scored = session.execute(
            sa.select(sa.func.count()).select_from(JUDGMENT).where(JUDGMENT.c.run_id == run.id, JUDGMENT.c.status == "scored")
        ).scalar()
        session.execute(sa.update(RUN).where(RUN.c.id == run.id).values(status="done" if scored == count else "paused"))
        session.commit()


def write(url: str, rounds: int, worker: int, *, control: bool) -> dict[str, Any]:
    store = Store(deferred_engine(url)) if control else Store.open(url)
    with store.session() as session:  # connect now, so the timed part has no connection set-up
        session.execute(sa.text("SELECT 1"))
    tally: dict[str, Any] = {"runs": [], "rows": 0, "saved": 0, "not_saved": 0, "locked": 0, "other": [], "wrong": []}
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.monotonic()
    for round_no in range(rounds):
        try:
            one_round(store, worker, round_no, tally)
        except OperationalError as err:
            if LOCKED in str(err):
                tally["locked"] += 1
            else:
                tally["other"].append(repr(err)[:300])
        except Exception as err:  # reported to the parent, which fails the test
            tally["other"].append(repr(err)[:300])
    tally["seconds"] = time.monotonic() - started
    store.engine.dispose()
    return tally


def migrate_only(url: str) -> dict[str, Any]:
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        store = Store.open(url)
    except Exception as err:
        return {"version": None, "error": repr(err)[:500]}
    from bot.store import current_version

    with store.engine.connect() as conn:
        version = current_version(conn)
    store.engine.dispose()
    return {"version": version, "error": None}


def main(argv: list[str]) -> int:
    mode, url = argv[0], argv[1]
    if mode == "migrate":
        result = migrate_only(url)
    else:
        result = write(url, int(argv[2]), int(argv[3]) if len(argv) > 3 else 0, control=mode == "control")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
