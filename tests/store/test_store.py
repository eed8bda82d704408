"""Tests for bot.store (runs, judgments, the cache, claims and heartbeats): the same code on SQLite and PostgreSQL (the
`db_url` fixture)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import bot.store.runs.rows as rows_module  # how add_rows batches its inserts
from bot.csvfiles.rows import CsvRow
from bot.errors import RunBusy
from bot.rubric import RubricSet
from bot.runs.execute import GROUP_ROWS
from bot.runs.start import start_run
from bot.store import (
    INSERT_BATCH,
    RowVerdict,
    Store,
    add_rows,
    beat_run,
    claim_rows,
    claim_run,
    create_run,
    fail_abandoned_loads,
    find_cached,
    find_cached_many,
    get_run,
    interrupt_run,
    iter_judgments,
    latest_unfinished_run,
    make_engine,
    next_pending,
    pending_texts,
    recent_runs,
    release_claims,
    reset_rows,
    save_verdict,
    save_verdicts,
    status_counts,
    update_run,
)
from tests.support.store_rows import ARABIC, ARABIC_ANSWER, COMMON, make_verdict, reload, row

# --- the store ---------------------------------------------------------------------------------------------------


def test_create_run_and_update(store: Store) -> None:
    run = create_run(store, **COMMON, source="slack", columns=["question", "reference", "answer"], channel_id="C9")
    assert isinstance(run.id, int)
    got = get_run(store, run.id)
    assert (got.status, got.source, got.columns, got.channel_id, got.fresh, got.total_rows) == (
        "pending", "slack", ["question", "reference", "answer"], "C9", False, 0)
    assert got.created_at == run.created_at and got.created_at.tzinfo is None
    assert get_run(store, run.id + 1000) is None

    done = create_run(store, **COMMON)
    update_run(store, done.id, status="done", total_rows=7)
    assert (get_run(store, done.id).status, get_run(store, done.id).total_rows) == ("done", 7)
    assert latest_unfinished_run(store, source="slack").id == run.id
    assert latest_unfinished_run(store) is None  # the terminal resumes its own runs, not the bot's
    assert [r.id for r in recent_runs(store)] == [done.id, run.id]
    assert [r.id for r in recent_runs(store, limit=1)] == [done.id]


@pytest.fixture
def big_runs(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run A: 2,500 rows (every 100th malformed); run B: 250 rows interleaved with A's, all in one add_rows call."""
    run_a = create_run(store, **COMMON)
    run_b = create_run(store, **COMMON)
    batches: list[int] = []

    original = rows_module._insert

    def spy(store: Store, batch: list[dict[str, Any]]) -> int:  # the real insert, its batch sizes noted
        batches.append(len(batch))
        return original(store, batch)

    monkeypatch.setattr(rows_module, "_insert", spy)

    def rows():  # a generator: add_rows must not need a list
        for n in range(1, 2_501):
            if n % 100 == 0:
                yield row(run_a.id, n, status="malformed", error="3 cells, expected 4", question="", reference="",
                          answer="")
            else:
                yield row(run_a.id, n)
            if n % 10 == 0:
                yield row(run_b.id, n // 10)

    count = add_rows(store, rows())
    return {"a": run_a.id, "b": run_b.id, "count": count, "batches": batches}


def test_add_rows_inserts_in_batches(store: Store, big_runs: dict[str, Any]) -> None:
    assert big_runs["count"] == 2_750
    assert big_runs["batches"] == [INSERT_BATCH, INSERT_BATCH, 750]
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM judgment")).scalar() == 2_750
    first = next(iter_judgments(store, big_runs["a"]))
    assert first.created_at is not None and first.tokens_in == 0 and first.attempts == 0  # defaults filled in


def test_pending_pages_in_row_order(store: Store, big_runs: dict[str, Any]) -> None:
    run_a = big_runs["a"]
    pages, after = [], 0
    while page := next_pending(store, run_a, after_id=after, limit=1_000):
        pages.append(page)
        after = page[-1].id
    assert [len(p) for p in pages] == [1_000, 1_000, 475]
    rows = [j for p in pages for j in p]
    ids = [j.id for j in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert [j.row_number for j in rows] == [n for n in range(1, 2_501) if n % 100]
    assert {j.run_id for j in rows} == {run_a} and {j.status for j in rows} == {"pending"}
    assert len(next_pending(store, run_a)) == 500  # the default page

    # rows that are judged drop out; paging after an id starts right after it
    for j in rows[:5]:
        assert save_verdict(store, j.id, make_verdict(), cache_key=f"k{j.id}")
    assert [j.id for j in next_pending(store, run_a, limit=3)] == ids[5:8]
    assert [j.id for j in next_pending(store, run_a, after_id=ids[100], limit=2)] == ids[101:103]
    # what a run's workers read (bot.store.runs.row_claims): the id and texts of the next pending rows, claimed
    triples = claim_rows(store, run_a, "a-host:1:x", limit=2)
    assert [judgment_id for judgment_id, _ in triples] == ids[5:7]
    assert [(t.question, t.reference, t.answer) for _, t in triples] == [
        (j.question, j.reference, j.answer) for j in rows[5:7]]
    release_claims(store, run_a, "a-host:1:x")
    # the ids and texts the estimate reads: those of the pending rows only, in row order, across pages
    pending = list(pending_texts(store, run_a, page=700))
    assert [judgment_id for judgment_id, _ in pending] == [j.id for j in rows[5:]]
    texts = [triple for _, triple in pending]
    assert [t.question for t in texts] == [j.question for j in rows[5:]]
    assert (texts[0].reference, texts[0].answer) == (rows[5].reference, rows[5].answer)
    assert next_pending(store, big_runs["b"], after_id=10**9) == []


def test_status_counts(store: Store, big_runs: dict[str, Any]) -> None:
    run_a, run_b = big_runs["a"], big_runs["b"]
    assert status_counts(store, run_a) == {"pending": 2_475, "malformed": 25}
    assert status_counts(store, run_b) == {"pending": 250}
    assert status_counts(store, 10**9) == {}
    head = next_pending(store, run_a, limit=6)
    for j in head[:3]:
        save_verdict(store, j.id, make_verdict(), cache_key="k")
    save_verdict(store, head[3].id, make_verdict(status="invalid", output=None, headline=None, passed=None), cache_key="k")
    save_verdict(store, head[4].id, make_verdict(status="error", error="timeout", output=None), cache_key="k")
    assert status_counts(store, run_a) == {"pending": 2_470, "malformed": 25, "scored": 3, "invalid": 1, "error": 1}
    assert status_counts(store, run_b) == {"pending": 250}


def test_iter_judgments_pages_every_row_in_order(store: Store, big_runs: dict[str, Any]) -> None:
    sessions: list[object] = []  # the connections it opens, one a page
    sa.event.listen(store.engine, "engine_connect", sessions.append)

    iterator = iter_judgments(store, big_runs["a"], page=333)
    first = next(iterator)
    assert len(sessions) == 1  # lazily: one page fetched so far
    rows = [first, *iterator]
    assert len(sessions) == 9  # ceil(2500 / 333) = 8 pages, and one empty page to end
    assert len(rows) == 2_500
    ids = [j.id for j in rows]
    assert ids == sorted(ids) and len(set(ids)) == 2_500
    assert [j.row_number for j in rows] == list(range(1, 2_501))
    assert {j.run_id for j in rows} == {big_runs["a"]}
    assert sum(j.status == "malformed" for j in rows) == 25

    b_rows = list(iter_judgments(store, big_runs["b"]))  # the default page is bigger than the run
    assert [j.row_number for j in b_rows] == list(range(1, 251))
    assert list(iter_judgments(store, 10**9)) == []


def test_save_verdict_saves_once(store: Store, db_url: str) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, 1), row(run.id, 2, status="malformed", error="bad row")])
    pending, malformed = iter_judgments(store, run.id)
    first = make_verdict(output={"score": 3, "why": ARABIC_ANSWER, "parts": {"a": 1, "b": [True, None]}},
                         derived={"norm": 0.6}, headline=0.6, flags=["injection"], label="partial")

    assert save_verdict(store, pending.id, first, cache_key="key-1", cached_from=None) is True
    saved = reload(db_url, pending.id)
    assert saved.judged_at is not None

    second = make_verdict(status="error", error="late duplicate", output=None, headline=0.0, flags=[])
    assert save_verdict(store, pending.id, second, cache_key="key-2", cached_from=12) is False
    again = reload(db_url, pending.id)
    assert (again.status, again.headline, again.label, again.error, again.cache_key, again.cached_from) == (
        "scored", 0.6, "partial", None, "key-1", None)
    assert again.output == {"score": 3, "why": ARABIC_ANSWER, "parts": {"a": 1, "b": [True, None]}}
    assert (again.derived, again.flags, again.judged_at) == ({"norm": 0.6}, ["injection"], saved.judged_at)
    assert (again.tokens_in, again.tokens_out, again.latency_ms, again.attempts) == (120, 30, 450, 1)
    assert (again.prompt_hash, again.judge_model) == ("p" * 32, COMMON["judge_model"])

    assert save_verdict(store, malformed.id, first, cache_key="key-1") is False  # only pending rows take a verdict
    assert reload(db_url, malformed.id).status == "malformed"
    assert save_verdict(store, 10**9, first, cache_key="key-1") is False
    assert status_counts(store, run.id) == {"scored": 1, "malformed": 1}


def test_verdicts_saved_together_take_one_transaction_and_each_row_one_verdict(store: Store) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, n) for n in range(1, 71)] + [row(run.id, 71, status="malformed", error="bad row")])
    *rows, malformed = iter_judgments(store, run.id)
    assert save_verdict(store, rows[0].id, make_verdict(headline=0.1), cache_key="early")
    group = [RowVerdict(r.id, make_verdict(headline=r.row_number / 100), f"k{r.row_number}") for r in rows[:GROUP_ROWS]]
    group += [RowVerdict(malformed.id, make_verdict(), "m"), RowVerdict(10**9, make_verdict(), "gone"),
              RowVerdict(rows[1].id, make_verdict(headline=0.99), "second for row 2")]
    transactions: list[str] = []
    statements: list[str] = []
    listeners = {"begin": lambda conn: transactions.append("begin"),
                 "before_cursor_execute": lambda conn, cursor, statement, *rest: statements.append(statement)}
    # (SQLite's BEGIN IMMEDIATE is sent as a statement; it is the transaction, counted apart)
    for name, listener in listeners.items():
        sa.event.listen(store.engine, name, listener)
    try:
        saved = save_verdicts(store, group)
    finally:
        for name, listener in listeners.items():
            sa.event.remove(store.engine, name, listener)

    assert transactions == ["begin"]  # one transaction for the whole group
    # the rows' cases (and on PostgreSQL, their chains' locks), which rows are still pending, the verdicts (one
    # executemany), the tally, what the judges were billed, and the chains of the cases (none changes: new cases)
    locks = 1 if store.engine.dialect.name == "postgresql" else 0
    assert len([s for s in statements if not s.startswith("BEGIN")]) == 6 + locks
    # row 1 had its verdict already; the malformed row, a missing row and a second verdict for row 2 take none
    assert saved == [False] + [True] * (GROUP_ROWS - 1) + [False, False, False]
    judged = {j.row_number: j for j in iter_judgments(store, run.id)}
    assert (judged[1].headline, judged[1].cache_key) == (0.1, "early")
    assert (judged[2].headline, judged[2].cache_key) == (0.02, "k2")
    assert all(judged[n].status == "scored" for n in range(1, GROUP_ROWS + 1))
    assert judged[71].status == "malformed"
    assert status_counts(store, run.id) == {"scored": GROUP_ROWS, "pending": 70 - GROUP_ROWS, "malformed": 1}
    assert save_verdicts(store, []) == []


def test_cached_verdicts_of_many_keys_are_found_in_one_query(store: Store) -> None:
    first, second = create_run(store, **COMMON), create_run(store, **COMMON)
    add_rows(store, [row(first.id, n) for n in range(1, 4)] + [row(second.id, n) for n in range(1, 4)])
    a1, a2, a3 = iter_judgments(store, first.id)
    b1, b2, b3 = iter_judgments(store, second.id)
    save_verdicts(store, [RowVerdict(a1.id, make_verdict(headline=0.1), "K"), RowVerdict(a2.id, make_verdict(), "L"),
                         RowVerdict(a3.id, make_verdict(status="error", error="boom", output=None), "E"),
                         RowVerdict(b1.id, make_verdict(headline=0.7), "K"), RowVerdict(b2.id, make_verdict(), "M")])
    queries: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: queries.append(statement))
    found = find_cached_many(store, ["K", "L", "M", "E", "missing"])
    assert len([q for q in queries if not q.startswith("BEGIN")]) == 1
    assert {key: j.id for key, j in found.items()} == {"K": a1.id, "L": a2.id, "M": b2.id}  # the earliest; no error
    assert found["K"].headline == 0.1 and found["K"].output == make_verdict().output
    in_second = find_cached_many(store, ["K", "L", "M"], run_id=second.id)
    assert {key: j.id for key, j in in_second.items()} == {"K": b1.id, "M": b2.id}
    assert find_cached_many(store, []) == {}


def test_find_cached_returns_only_scored_rows_with_that_key(store: Store) -> None:
    run = create_run(store, **COMMON)
    add_rows(store, [row(run.id, n) for n in range(1, 8)])
    r = list(iter_judgments(store, run.id))
    assert find_cached(store, "K") is None

    save_verdict(store, r[0].id, make_verdict(status="error", error="boom", output=None), cache_key="K")
    save_verdict(store, r[1].id, make_verdict(status="invalid", output=None), cache_key="K")
    assert find_cached(store, "K") is None  # a failed judgment is never reused

    save_verdict(store, r[2].id, make_verdict(headline=0.2, output={"score": 1, "why": {"ar": ARABIC}}, flags=["f"],
                                             derived={"norm": 0.2}, passed=False), cache_key="K")
    save_verdict(store, r[3].id, make_verdict(headline=0.9), cache_key="K")
    save_verdict(store, r[4].id, make_verdict(headline=0.5), cache_key="OTHER")
    hit = find_cached(store, "K")
    assert (hit.id, hit.status, hit.headline, hit.cache_key) == (r[2].id, "scored", 0.2, "K")  # the earliest
    # everything runs._reuse copies comes back decoded, as on a row read through the ORM
    assert (hit.output, hit.derived, hit.flags, hit.passed, hit.label, hit.raw_reply) == (
        {"score": 1, "why": {"ar": ARABIC}}, {"norm": 0.2}, ["f"], False, "good", '{"score": 4}')
    assert (hit.run_id, hit.row_number, hit.question, hit.cells) == (run.id, 3, "q3", {"n": 3})
    assert find_cached(store, "OTHER").id == r[4].id
    assert find_cached(store, "k") is None  # exact key, case and all
    assert find_cached(store, "missing") is None

    assert save_verdict(store, r[5].id, make_verdict(headline=hit.headline), cache_key="K", cached_from=hit.id)
    reused = [j for j in iter_judgments(store, run.id) if j.id == r[5].id][0]
    assert (reused.cached_from, reused.status) == (hit.id, "scored")
    assert find_cached(store, "K").id == r[2].id


def test_json_columns_round_trip_unicode_and_nesting(store: Store, db_url: str) -> None:
    columns = ["السؤال", "المرجع", "الإجابة", "日本語", "emoji 😀"]
    cells = {"السؤال": ARABIC, "المرجع": "القاهرة", "الإجابة": ARABIC_ANSWER,
             "nested": {"list": [1, 2.5, None, True, "نص", {"deep": {"deeper": ["א", "ب"]}}], "empty": {}, "zero": 0},
             "quote\"key": "line\nbreak\ttab \\ back", "": ""}
    output = {"score": 4, "criteria": {"accuracy": {"value": 5, "note": "دقيق"}, "tone": {"value": 3, "note": None}},
              "items": [[1, 2], [], [{"x": "ي"}]]}
    run = create_run(store, **COMMON, columns=columns)
    add_rows(store, [row(run.id, 1, cells=cells, question=ARABIC, answer=ARABIC_ANSWER)])
    judgment = next(iter_judgments(store, run.id))
    assert save_verdict(store, judgment.id, make_verdict(output=output, derived={"norm": 0.125, "weighted": 3.75},
                                                        flags=["حقن", "injection"]), cache_key="k")

    fresh = Store(make_engine(db_url))  # read through a new engine
    try:
        assert get_run(fresh, run.id).columns == columns
        back = next(iter_judgments(fresh, run.id))
    finally:
        fresh.engine.dispose()
    assert back.cells == cells
    assert back.output == output
    assert back.derived == {"norm": 0.125, "weighted": 3.75}
    assert back.flags == ["حقن", "injection"]
    assert (back.question, back.answer) == (ARABIC, ARABIC_ANSWER)
    assert json.dumps(back.cells, ensure_ascii=False, sort_keys=True) == json.dumps(cells, ensure_ascii=False,
                                                                                   sort_keys=True)


# --- claiming a run, heartbeats, resetting rows, the cache within one run -------------------------------------------


def _owner_here() -> str:
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def test_claim_run_takes_a_resumable_run_once(store: Store) -> None:
    from bot.store import utcnow

    run = create_run(store, **COMMON)
    update_run(store, run.id, status="paused", stop_reason="insufficient_quota")
    before = utcnow()
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30) is True
    got = get_run(store, run.id)
    assert (got.status, got.owner, got.stop_reason) == ("running", _owner_here(), None)
    assert before <= got.heartbeat_at <= utcnow() and got.started_at == got.heartbeat_at
    # this live process holds it now: a second claim, from here or anywhere, is refused
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30) is False
    assert get_run(store, run.id).heartbeat_at == got.heartbeat_at

    # claimed again after a pause, it keeps the time it first started
    update_run(store, run.id, status="paused", owner=None)
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30) is True
    assert get_run(store, run.id).started_at == got.started_at


@pytest.mark.parametrize("status", ["done", "cancelled"])
def test_claim_run_takes_a_finished_run_to_judge_rows_again(store: Store, status: str) -> None:
    run = create_run(store, **COMMON)
    update_run(store, run.id, status=status)
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30) is True
    got = get_run(store, run.id)
    assert got.status == "running" and got.owner is not None and got.heartbeat_at is not None


@pytest.mark.parametrize("status", ["loading", "failed"])
def test_claim_run_refuses_a_run_that_is_not_resumable(store: Store, status: str) -> None:
    run = create_run(store, **COMMON)
    update_run(store, run.id, status=status)
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30) is False
    got = get_run(store, run.id)
    assert (got.status, got.owner, got.heartbeat_at) == (status, None, None)
    assert claim_run(store, run.id + 1000, owner=_owner_here(), stale_after=30) is False


@pytest.mark.parametrize(("owner", "age", "stale_after", "claimed"), [
    ("otherhost:1", 5, 30, False),  # alive on another host
    ("otherhost:1", 31, 30, True),  # silent longer than stale_after
    ("otherhost:1", 5, 2, True),  # stale_after is the caller's
    ("otherhost:1", None, 30, True),  # never beat at all
    ("here:dead", 1, 30, True),  # this host, the process has exited
    ("here:alive", 1, 30, False),  # this host, the process is alive (this one)
    ("here:not-a-pid", 1, 30, False),  # this host, an owner we cannot check: trust the heartbeat
], ids=["live-elsewhere", "stale", "short-stale-after", "no-heartbeat", "dead-pid", "live-pid", "odd-owner"])
def test_claim_run_takes_over_only_an_abandoned_run(store: Store, owner: str, age, stale_after, claimed) -> None:
    import socket
    import subprocess
    from datetime import timedelta

    from bot.store import utcnow

    host = socket.gethostname()
    if owner == "here:dead":
        proc = subprocess.Popen(["true"])
        proc.wait()
        owner = f"{host}:{proc.pid}"
    else:
        owner = {"here:alive": _owner_here(), "here:not-a-pid": f"{host}:worker"}.get(owner, owner)
    heartbeat = None if age is None else utcnow() - timedelta(seconds=age)
    run = create_run(store, **COMMON)
    update_run(store, run.id, status="running", owner=owner, heartbeat_at=heartbeat)

    assert claim_run(store, run.id, owner=_owner_here(), stale_after=stale_after) is claimed
    got = get_run(store, run.id)
    assert got.status == "running"
    assert got.owner == (_owner_here() if claimed else owner)
    if not claimed:
        assert got.heartbeat_at == heartbeat


@pytest.mark.parametrize(("status", "owner", "interrupted"), [
    ("pending", None, True),  # interrupted before it was claimed
    ("running", "here", True),  # interrupted while this process judged it
    ("running", "otherhost:1", False),  # another process holds it
    ("paused", None, False),  # paused already (its own reason kept)
    ("done", None, False),
], ids=["pending", "held-here", "held-elsewhere", "paused", "done"])
def test_interrupt_run_pauses_only_a_run_this_process_was_about_to_judge_or_judging(store: Store, status, owner,
                                                                                    interrupted) -> None:
    run = create_run(store, **COMMON)
    owner = _owner_here() if owner == "here" else owner
    update_run(store, run.id, status=status, owner=owner, stop_reason="insufficient_quota" if status == "paused" else None)
    assert interrupt_run(store, run.id, owner=_owner_here()) is interrupted
    got = get_run(store, run.id)
    if interrupted:
        assert (got.status, got.stop_reason, got.owner) == ("paused", "interrupted", None) and got.finished_at
    else:
        assert (got.status, got.owner) == (status, owner) and got.stop_reason != "interrupted"


def test_beat_moves_only_the_heartbeat(store: Store) -> None:
    from datetime import timedelta

    from bot.store import utcnow

    run = create_run(store, **COMMON)
    assert claim_run(store, run.id, owner=_owner_here(), stale_after=30)
    old = utcnow() - timedelta(minutes=5)
    update_run(store, run.id, heartbeat_at=old)
    claimed = get_run(store, run.id)
    assert beat_run(store, run.id, claimed.owner) is True
    got = get_run(store, run.id)
    assert got.heartbeat_at > old and (utcnow() - got.heartbeat_at).total_seconds() < 5
    assert (got.status, got.owner, got.started_at) == ("running", claimed.owner, claimed.started_at)
    assert beat_run(store, run.id + 1000, claimed.owner) is False  # a run that is gone: nothing to do, nothing raised
    # another process took the run over: this one's beat says so and changes nothing
    update_run(store, run.id, owner="otherhost:7")
    assert beat_run(store, run.id, claimed.owner) is False
    assert get_run(store, run.id).heartbeat_at == got.heartbeat_at


def test_reset_rows_makes_only_the_given_statuses_pending_again(store: Store, db_url: str) -> None:
    run = create_run(store, **COMMON)
    other = create_run(store, **COMMON)
    add_rows(store, [row(run.id, n) for n in range(1, 6)]
                   + [row(run.id, 6, status="malformed", error="2 cells, expected 3"), row(other.id, 1)])
    scored, error, invalid, cached, pending, malformed = iter_judgments(store, run.id)
    [other_row] = iter_judgments(store, other.id)
    save_verdict(store, scored.id, make_verdict(), cache_key="K")
    save_verdict(store, error.id, make_verdict(status="error", error="timeout", output=None, headline=None,
                                              passed=None, label=None, tag=None), cache_key="E")
    save_verdict(store, invalid.id, make_verdict(status="invalid", error="no JSON", raw_reply="nope", flags=["f"]),
                       cache_key="I")
    save_verdict(store, cached.id, make_verdict(status="error", error="late"), cache_key="K", cached_from=scored.id)
    save_verdict(store, other_row.id, make_verdict(status="error", error="other run"), cache_key="E")

    assert reset_rows(store, run.id, ("error", "invalid")) == 3
    for judgment_id in (error.id, invalid.id, cached.id):
        again = reload(db_url, judgment_id)
        assert again.status == "pending"
        assert (again.output, again.derived, again.headline, again.passed, again.label, again.tag) == (
            None, None, None, None, None, None)
        assert (again.raw_reply, again.error, again.flags, again.judged_at, again.cached_from) == (
            None, None, None, None, None)
        assert (again.tokens_in, again.tokens_out, again.latency_ms, again.attempts) == (0, 0, 0, 0)
        assert (again.question, again.row_number) == (f"q{again.row_number}", again.row_number)  # the triple stays
    kept = reload(db_url, scored.id)
    assert (kept.status, kept.headline, kept.label, kept.tokens_in) == ("scored", 0.8, "good", 120)
    assert reload(db_url, malformed.id).error == "2 cells, expected 3"
    assert reload(db_url, other_row.id).status == "error"  # another run's rows are not touched
    assert status_counts(store, run.id) == {"scored": 1, "pending": 4, "malformed": 1}
    assert [j.id for j in next_pending(store, run.id)] == [error.id, invalid.id, cached.id, pending.id]
    # a reset row takes a verdict again
    assert save_verdict(store, error.id, make_verdict(), cache_key="E") is True
    assert reset_rows(store, run.id, ("invalid",)) == 0
    assert reset_rows(store, run.id, ()) == 0


def test_find_cached_within_one_run(store: Store) -> None:
    first = create_run(store, **COMMON)
    second = create_run(store, **COMMON)
    empty = create_run(store, **COMMON)
    add_rows(store, [row(first.id, 1), row(second.id, 1), row(second.id, 2), row(second.id, 3)])
    [a] = iter_judgments(store, first.id)
    b_error, b_scored, b_later = iter_judgments(store, second.id)
    save_verdict(store, a.id, make_verdict(headline=0.1), cache_key="K")
    save_verdict(store, b_error.id, make_verdict(status="error", error="boom"), cache_key="K")
    assert find_cached(store, "K").id == a.id
    assert find_cached(store, "K", run_id=second.id) is None  # an error is never reused, and a is another run's

    save_verdict(store, b_scored.id, make_verdict(headline=0.7), cache_key="K")
    save_verdict(store, b_later.id, make_verdict(headline=0.9), cache_key="K")
    hit = find_cached(store, "K", run_id=second.id)
    assert (hit.id, hit.run_id, hit.headline) == (b_scored.id, second.id, 0.7)  # the earliest of that run
    assert find_cached(store, "K").id == a.id  # without a run: the earliest of all
    assert find_cached(store, "K", run_id=first.id).id == a.id
    assert find_cached(store, "K", run_id=empty.id) is None
    assert find_cached(store, "OTHER", run_id=second.id) is None


def test_an_earlier_life_of_this_very_pid_has_abandoned_its_run(store: Store) -> None:
    """A restarted container's pid 1 has the pid of the process that died: its incarnation tells them apart."""
    import os
    import socket

    from bot.store import process_name, utcnow

    earlier = f"{socket.gethostname()}:{os.getpid()}:0ldlife0"
    run = create_run(store, **COMMON)
    update_run(store, run.id, status="running", owner=earlier, heartbeat_at=utcnow())
    assert claim_run(store, run.id, owner=process_name(), stale_after=3600) is True
    assert get_run(store, run.id).owner == process_name()
    assert claim_run(store, run.id, owner=process_name(), stale_after=3600) is False  # this life: alive


def test_claim_run_can_be_limited_to_unfinished_runs(store: Store) -> None:
    from bot.records import RESUMABLE
    from bot.store import process_name

    run = create_run(store, **COMMON)
    update_run(store, run.id, status="done")
    assert claim_run(store, run.id, owner=process_name(), stale_after=30, statuses=RESUMABLE) is False
    assert get_run(store, run.id).status == "done"


def test_a_run_left_loading_by_a_process_that_is_gone_is_failed_when_the_history_is_opened(db_url: str) -> None:
    import os
    import socket

    from bot.store import process_name, utcnow

    first = Store.open(db_url)
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout.strip()
    owners = {
        "dead here": (f"{socket.gethostname()}:{dead_pid}:a1b2c3d4", utcnow()),
        "alive here": (process_name(), utcnow() - timedelta(hours=1)),
        "elsewhere, loading": ("otherhost:42:a1b2c3d4", utcnow() - timedelta(seconds=30)),
        "elsewhere, silent": ("otherhost:43:a1b2c3d4", utcnow() - timedelta(minutes=10)),
        "no owner, old": (None, None),
    }
    runs = {}
    for name, (owner, heartbeat) in owners.items():
        run = create_run(first, **COMMON, status="loading", created_at=utcnow() - timedelta(hours=2))
        loaded_at = utcnow()
        add_rows(first, [row(run.id, 1), row(run.id, 2)])
        assert get_run(first, run.id).heartbeat_at >= loaded_at  # each batch loaded shows the loader is alive
        update_run(first, run.id, owner=owner, heartbeat_at=heartbeat)
        runs[name] = run.id
    first.engine.dispose()
    assert os.getpid() != int(dead_pid)

    second = Store.open(db_url)
    try:
        states = {name: (get_run(second, run_id).status, status_counts(second, run_id)) for name, run_id in runs.items()}
        for name in ("dead here", "elsewhere, silent", "no owner, old"):
            assert states[name] == ("failed", {}), name
            assert get_run(second, runs[name]).stop_reason == "its process stopped while its rows were loading"
        for name in ("alive here", "elsewhere, loading"):
            assert states[name] == ("loading", {"pending": 2}), name
        assert fail_abandoned_loads(second) == []  # once only
    finally:
        second.engine.dispose()


def _loading_rows(path: Path, count: int, fail_at: int):
    """`count` rows of a file; when row `fail_at` is reached another process fails the run and drops its rows."""
    for n in range(1, count + 2):
        if n == fail_at:
            other = sqlite3.connect(path, timeout=10)
            with other:
                other.execute("UPDATE run SET status = 'failed', owner = NULL, "
                              "stop_reason = 'its process stopped while its rows were loading'")
                other.execute("DELETE FROM judgment")
            other.close()
        if n > count:
            return
        yield CsvRow(line=n, question=f"q{n}", reference="r", answer="a", model=None,
                     cells={"question": f"q{n}", "reference": "r", "answer": "a"})


@pytest.mark.parametrize(("count", "fail_at"), [(INSERT_BATCH + 10, INSERT_BATCH + 5), (3, 4)],
                         ids=["between-batches", "after-the-last-batch"])
def test_a_run_failed_by_another_process_while_loading_stops_its_loader(tmp_path: Path, rubrics: RubricSet,
                                                                       count: int, fail_at: int) -> None:
    path = tmp_path / "history.db"
    store = Store.open(f"sqlite:///{path}")
    try:
        with pytest.raises(RunBusy, match=r"^run 1 was marked failed by another process while its rows were "
                                          r"loading; start it again$"):
            start_run(store, rubric=rubrics.get("eth"), rows=_loading_rows(path, count, fail_at),
                      judge_model="judge-m", columns=["question", "reference", "answer"])
        got = get_run(store, 1)
        assert (got.status, got.owner, got.stop_reason) == (
            "failed", None, "its process stopped while its rows were loading")
        assert status_counts(store, 1) == {}  # no row of the failed run inserted after it was failed
    finally:
        store.engine.dispose()


def test_identical_rows_of_a_run_are_told_from_verdicts_of_earlier_runs(store: Store) -> None:
    from bot.store import identical_rows

    earlier, run = create_run(store, **COMMON), create_run(store, **COMMON)
    add_rows(store, [row(earlier.id, n) for n in range(2, 5)])
    add_rows(store, [row(run.id, n) for n in range(2, 8)])
    before, now = list(iter_judgments(store, earlier.id)), list(iter_judgments(store, run.id))
    assert save_verdict(store, before[0].id, make_verdict(), cache_key="A")
    for twin in before[1:]:  # the earlier run's own identical rows
        assert save_verdict(store, twin.id, make_verdict(), cache_key="A", cached_from=before[0].id)
    assert save_verdict(store, now[0].id, make_verdict(), cache_key="A", cached_from=before[0].id)  # from the history
    assert save_verdict(store, now[1].id, make_verdict(), cache_key="B")
    assert save_verdict(store, now[2].id, make_verdict(), cache_key="C")
    for twin, source in ((now[3], now[1]), (now[4], now[1]), (now[5], now[2])):
        assert save_verdict(store, twin.id, make_verdict(), cache_key="B", cached_from=source.id)
    assert identical_rows(store, run.id) == (3, 2)  # three rows reused two verdicts of their own run
    assert identical_rows(store, earlier.id) == (2, 1)
    assert identical_rows(store, 10**9) == (0, 0)
