"""Runs in process: start_run persists every row, execute_run judges them against the local judge server.

Every test runs on SQLite and on PostgreSQL (the db_url fixture) with a real JudgeClient over HTTP.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import event

from bot.csvfiles.reading import open_csv
from bot.csvfiles.rows import CsvRow
from bot.errors import CsvError
from bot.rubric import load_rubric
from bot.runs import (
    HEARTBEAT_SECONDS,
    Progress,
    RubricChanged,
    RunBusy,
    RunNotResumable,
    execute_run,
    start_csv_run,
    start_run,
)
from bot.runs.execute import GROUP_ROWS, GROUP_SECONDS
from bot.runs.summary import export_run
from bot.store import Store, get_run, iter_judgments, latest_unfinished_run, recent_runs, status_counts, update_run, utcnow
from tests.support.csv_rows import rows_of
from tests.support.openai_server import Reply
from tests.support.replies import NULLABLE_RUBRIC, eth_reply, triple_of

COLUMNS = ["question", "reference", "answer"]
QUOTA_MESSAGE = "insufficient_quota"


def answer_of(body: dict) -> str:
    return triple_of(body)[2]


def eth_responder(body: dict) -> Reply:
    """Refusal for "don't know", invalid text for GARBLE, a 400 for FAIL400, else Correct."""
    answer = answer_of(body)
    if "GARBLE" in answer:
        return Reply(content="Looks fine to me, no JSON here.")
    if "FAIL400" in answer:
        return Reply(status=400, error={"message": "this request cannot be served", "type": "invalid_request_error",
                                        "code": None})
    if "don't know" in answer.lower():
        return eth_reply("Refusal")
    return eth_reply("Correct")


def same_question(*answers: str) -> list[CsvRow]:
    """Rows that differ only in their answers: two rows with the same answer are the same triple."""
    return [CsvRow(line=i + 2, question="q", reference="r", answer=answer, model=None,
                   cells={"question": "q", "reference": "r", "answer": answer}) for i, answer in enumerate(answers)]


def by_row(store: Store, run_id: int) -> dict[int, object]:
    return {j.row_number: j for j in iter_judgments(store, run_id)}


@pytest.fixture
def eth(rubrics):
    return rubrics.get("eth")


# --- every row accounted for --------------------------------------------------------------------


async def test_every_row_is_scored_or_reported_with_a_reason(tmp_path, store, eth, judge_server, make_client):
    judge_server.responder = eth_responder
    path = tmp_path / "mixed.csv"
    path.write_text(
        "question,reference,answer\n"
        "How do I register?,In myStudies.,Use myStudies during the registration window.\n"  # 2 scored
        "Where do I book sport?,On asvz.ch.,\"Sorry, I don't know.\"\n"  # 3 scored (Refusal)
        "Where is my payslip?,In Staffnet.,GARBLE\n"  # 4 invalid
        "How do I print?,Web Print.,FAIL400\n"  # 5 error
        "too,many,cells,here\n"  # 6 malformed
        ",no question,an answer\n"  # 7 malformed
        "short,row\n"  # 8 malformed
        "Who runs Euler?,ID SIS.,The Euler cluster is run by ID SIS.\n",  # 9 scored
        encoding="utf-8",
    )
    source = open_csv(path)
    run = start_csv_run(store, rubric=eth, source=source, judge_model="judge-test")
    # persisted before anything is judged: judgeable rows pending, the others malformed with their reason
    assert status_counts(store, run.id) == {"pending": 5, "malformed": 3}
    assert run.total_rows == 8 and get_run(store, run.id).total_rows == 8
    assert judge_server.bodies() == []

    events: list[Progress] = []
    outcome = await execute_run(store, run, eth, make_client(max_retries=0), concurrency=3, on_progress=events.append)

    assert outcome.status == "done" and outcome.stop_reason is None
    assert outcome.counts == {"scored": 3, "invalid": 1, "error": 1, "malformed": 3}
    assert not outcome.all_scored
    rows = by_row(store, run.id)
    assert sorted(rows) == list(range(2, 10))
    assert {n: j.status for n, j in rows.items()} == {
        2: "scored", 3: "scored", 4: "invalid", 5: "error", 6: "malformed", 7: "malformed", 8: "malformed",
        9: "scored"}
    assert rows[3].tag == "Refusal" and rows[3].passed is False and rows[2].passed is True
    for number in (2, 3, 9):
        assert rows[number].output and rows[number].headline is not None and rows[number].error is None
    assert "no JSON object found" in rows[4].error and rows[4].raw_reply.startswith("Looks fine")
    assert "this request cannot be served" in rows[5].error
    assert rows[6].error == "it has 4 cells but the header has 3"
    assert "question cell is empty" in rows[7].error
    assert rows[8].error == "it has 2 cells but the header has 3"
    assert rows[6].cells == {"question": "too", "reference": "many", "answer": "cells"}
    # the invalid row was asked once and repaired once; every other judgeable row once
    assert Counter(answer_of(b) for b in judge_server.bodies())["GARBLE"] == 2
    assert len(judge_server.bodies()) == 6
    assert get_run(store, run.id).status == "done"

    # progress: one event before the first verdict, then one per row; monotonic; complete at the end
    assert [e.done for e in events] == list(range(0, 6))
    assert all(e.total == 5 and e.run_id == run.id for e in events)
    assert [e.errors for e in events] == sorted(e.errors for e in events) and events[-1].errors == 2
    assert [e.elapsed for e in events] == sorted(e.elapsed for e in events)
    assert events[-1].done == events[-1].total and events[-1].judged_now == 5 and events[-1].cached == 0

    summary = export_run(store, run=get_run(store, run.id), rubric=eth, out=tmp_path / "out.csv")
    assert summary.rows == 8 and summary.scored == 3 and summary.errors == 2 and summary.counts["malformed"] == 3
    assert sorted((row, status) for row, status, reason in summary.problems if reason) == [
        (4, "invalid"), (5, "error"), (6, "malformed"), (7, "malformed"), (8, "malformed")]


# --- bounded concurrency ------------------------------------------------------------------------


@pytest.mark.parametrize(("client_limit", "run_limit", "bound"), [(16, 4, 4), (2, 4, 2)])
async def test_requests_in_flight_never_exceed_the_bound(store, eth, judge_server, make_client, client_limit,
                                                         run_limit, bound):
    """The server answers each request LATENCY after it arrives, so the requests in flight when one arrives are
    exactly those that arrived less than LATENCY before it (a worker sends again only after its answer)."""
    latency = 0.3
    arrivals: list[float] = []
    lock = threading.Lock()

    def responder(body: dict) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
        return eth_reply("Correct")

    judge_server.responder = responder
    judge_server.latency = latency
    client = make_client(concurrency=client_limit)
    run = start_run(store, rubric=eth, rows=rows_of(*(f"answer number {i}" for i in range(8))), judge_model=client.model,
                    columns=COLUMNS)
    outcome = await execute_run(store, run, eth, client, concurrency=run_limit)

    assert outcome.all_scored and outcome.counts == {"scored": 8}
    arrivals.sort()
    assert len(arrivals) == 8
    window = latency * 0.9  # a little under the latency, for clock granularity
    in_flight = [sum(1 for s in arrivals if t - window < s <= t) for t in arrivals]
    assert max(in_flight) <= bound, in_flight
    assert max(in_flight) == bound, in_flight  # the bound is reached, so the test can see a breach


async def test_verdicts_that_arrive_together_are_saved_in_one_transaction(store, eth, judge_server, make_client):
    """Counted, not timed: the replies of a wave land together, and the verdicts and tallies of those that came while
    one group was being committed are committed together. One transaction per verdict fails this test."""
    judge_server.responder = eth_responder
    judge_server.latency = 0.2  # the first 32 requests go at once, so their replies come back as a wave
    client = make_client(concurrency=32)
    rows = 192
    run = start_run(store, rubric=eth, rows=rows_of(*(f"answer number {i}" for i in range(rows))),
                    judge_model=client.model, columns=COLUMNS)
    groups: list[int] = []  # verdicts per saving transaction
    commits = [0]

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        saving = statement.lstrip().upper().startswith("UPDATE JUDGMENT SET")
        if saving and "claimed_by" not in statement and not statement.lstrip().upper().startswith(
                "UPDATE JUDGMENT SET REPLACED_AT"):  # one case: each saved group replaces the verdict before it
            groups.append(len(parameters) if executemany else 1)

    def on_commit(conn):
        commits[0] += 1

    event.listen(store.engine, "before_cursor_execute", on_execute)
    event.listen(store.engine, "commit", on_commit)
    try:
        outcome = await execute_run(store, run, eth, client, concurrency=32)
    finally:
        event.remove(store.engine, "before_cursor_execute", on_execute)
        event.remove(store.engine, "commit", on_commit)

    assert outcome.all_scored and outcome.counts == {"scored": rows}
    assert sum(groups) == rows  # every verdict saved once
    assert max(groups) <= GROUP_ROWS
    assert len(groups) <= rows // 4, groups  # one transaction per verdict would be 192
    assert commits[0] <= len(groups) + 10, (commits[0], len(groups))  # and nothing else commits per row


# --- the verdict cache ---------------------------------------------------------------------------


async def test_the_cache_is_read_once_for_each_group_of_rows(store, eth, judge_server, make_client):
    """Counted, not timed: the rows handed to the workers are looked up GROUP_ROWS at a time, in one query (a lookup
    per row fails this test), and what the history holds is still reused."""
    judge_server.responder = eth_responder
    client = make_client(concurrency=8)
    rows = 3 * GROUP_ROWS
    answers = [f"answer number {i}" for i in range(rows)]
    earlier = start_run(store, rubric=eth, rows=same_question(*answers[::2]), judge_model=client.model,
                        columns=COLUMNS)
    await execute_run(store, earlier, eth, client, concurrency=8)
    run = start_run(store, rubric=eth, rows=same_question(*answers), judge_model=client.model, columns=COLUMNS)
    lookups: list[int] = []  # cache keys asked for, per query

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        if "cache_key IN" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters  # PostgreSQL names them
            lookups.append(sum(1 for value in values if isinstance(value, str) and len(value) == 64))

    event.listen(store.engine, "before_cursor_execute", on_execute)
    try:
        outcome = await execute_run(store, run, eth, client, concurrency=8)
    finally:
        event.remove(store.engine, "before_cursor_execute", on_execute)

    assert outcome.all_scored and outcome.counts == {"scored": rows}
    assert lookups == [GROUP_ROWS] * 3, lookups
    assert len(judge_server.bodies()) == rows // 2 + rows // 2  # the earlier run's rows, then only the others
    reused = [j for j in iter_judgments(store, run.id) if j.cached_from is not None]
    assert sorted(j.answer for j in reused) == sorted(answers[::2])


async def test_a_row_whose_twin_was_judged_after_it_was_read_reuses_that_verdict(store, eth, judge_server,
                                                                                  make_client):
    """One worker: the three rows are read (and looked up) together, before the first is judged. By the third row's
    turn the first's verdict is committed and nothing waits on it; the third row looks again, and reuses it."""
    judge_server.responder = eth_responder
    judge_server.latency = GROUP_SECONDS + 0.2  # the first verdict is committed while the second row is judged
    client = make_client()
    run = start_run(store, rubric=eth, rows=same_question("Use myStudies.", "Web Print it is.", "Use myStudies."),
                    judge_model=client.model, columns=COLUMNS)
    outcome = await execute_run(store, run, eth, client, concurrency=1)

    assert outcome.all_scored
    assert [answer_of(b) for b in judge_server.bodies()] == ["Use myStudies.", "Web Print it is."]
    first, _, third = by_row(store, run.id).values()
    assert third.cached_from == first.id and first.cached_from is None


@pytest.mark.slow
async def test_twins_among_rows_the_history_holds_are_billed_once(store, eth, judge_server, make_client):
    """A file judged before, run again with new rows added, each twice. The rows the history holds come back without
    a request and fill the groups of verdicts, so workers wait for room while others go on: the twin that was handed
    out second may be judged first, and the first must then find its verdict rather than be billed again."""
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, delay=0.01)
    client = make_client(concurrency=8)
    pairs, between = 50, 31
    known = [f"known {i}" for i in range(pairs * between)]
    earlier = start_run(store, rubric=eth, rows=same_question(*known), judge_model=client.model, columns=COLUMNS)
    await execute_run(store, earlier, eth, client, concurrency=32)
    before = len(judge_server.bodies())
    answers = [answer for i in range(pairs) for answer in [*known[i * between:(i + 1) * between], f"twin {i}", f"twin {i}"]]
    run = start_run(store, rubric=eth, rows=same_question(*answers), judge_model=client.model, columns=COLUMNS)
    outcome = await execute_run(store, run, eth, client, concurrency=8)

    assert outcome.all_scored
    billed = Counter(answer_of(body) for body in judge_server.bodies()[before:])
    assert billed == {f"twin {i}": 1 for i in range(pairs)}


async def test_identical_rows_reusing_one_verdict_do_not_wait_for_each_others_commits(store, eth, judge_server,
                                                                                      make_client):
    """Counted, not timed: once the first of twenty identical rows is judged and committed, the others reuse its
    verdict one after the other; each passes the texts on as soon as it has reused the committed verdict, so their
    verdicts are saved together rather than in a transaction each."""
    judge_server.responder = eth_responder
    client = make_client(concurrency=4)
    run = start_run(store, rubric=eth, rows=same_question(*["Use myStudies."] * 20), judge_model=client.model,
                    columns=COLUMNS)
    groups: list[int] = []

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        saving = statement.lstrip().upper().startswith("UPDATE JUDGMENT SET")
        if saving and "claimed_by" not in statement and not statement.lstrip().upper().startswith(
                "UPDATE JUDGMENT SET REPLACED_AT"):  # one case: each saved group replaces the verdict before it
            groups.append(len(parameters) if executemany else 1)

    event.listen(store.engine, "before_cursor_execute", on_execute)
    try:
        outcome = await execute_run(store, run, eth, client, concurrency=4)
    finally:
        event.remove(store.engine, "before_cursor_execute", on_execute)

    assert outcome.all_scored and len(judge_server.bodies()) == 1
    assert sum(groups) == 20 and len(groups) <= 5, groups  # a commit per reused row would be 19 more


async def test_a_second_run_reuses_verdicts_and_fresh_judges_again(store, eth, judge_server, make_client):
    judge_server.responder = eth_responder
    answers = ["Use myStudies.", "I don't know.", "Web Print it is.", "GARBLE"]
    client = make_client()

    first = start_run(store, rubric=eth, rows=rows_of(*answers), judge_model=client.model, columns=COLUMNS)
    await execute_run(store, first, eth, client, concurrency=4)
    assert len(judge_server.bodies()) == 5  # GARBLE was asked twice (request + repair)
    originals = {j.row_number: j for j in iter_judgments(store, first.id)}
    assert all(j.cached_from is None for j in originals.values())

    events: list[Progress] = []
    second = start_run(store, rubric=eth, rows=rows_of(*answers), judge_model=client.model, columns=COLUMNS)
    outcome = await execute_run(store, second, eth, client, concurrency=4, on_progress=events.append)
    reused = by_row(store, second.id)
    # only the row that was not scored is asked again: an invalid verdict is never reused
    assert [answer_of(b) for b in judge_server.bodies()[5:]] == ["GARBLE", "GARBLE"]
    assert outcome.counts == {"scored": 3, "invalid": 1}
    for number in (2, 3, 4):
        assert reused[number].cached_from == originals[number].id
        assert reused[number].status == "scored"
        assert (reused[number].output, reused[number].headline, reused[number].passed, reused[number].label) == (
            originals[number].output, originals[number].headline, originals[number].passed, originals[number].label)
        assert reused[number].tokens_in == 0  # nothing was billed for it
    assert reused[5].cached_from is None and reused[5].status == "invalid"
    assert events[-1].cached == 3 and events[-1].done == 4

    summary = export_run(store, run=get_run(store, second.id), rubric=eth, out=None)
    assert summary.cached == 3

    before = len(judge_server.bodies())
    fresh = start_run(store, rubric=eth, rows=rows_of(*answers), judge_model=client.model, columns=COLUMNS, fresh=True)
    await execute_run(store, fresh, eth, client, concurrency=4)
    assert len(judge_server.bodies()) - before == 5
    assert all(j.cached_from is None for j in iter_judgments(store, fresh.id))

    # another judge model is another cache key
    other = make_client(model="judge-other")
    before = len(judge_server.bodies())
    third = start_run(store, rubric=eth, rows=rows_of(*answers[:3]), judge_model=other.model, columns=COLUMNS)
    await execute_run(store, third, eth, other, concurrency=4)
    assert len(judge_server.bodies()) - before == 3
    assert {b["model"] for b in judge_server.bodies()[before:]} == {"judge-other"}


async def test_identical_rows_in_one_run_are_judged_once(store, eth, judge_server, make_client):
    judge_server.responder = eth_responder
    judge_server.latency = 0.2
    answers = ["Same answer."] * 6 + ["Other answer.", "I don't know."]
    client = make_client()
    run = start_run(store, rubric=eth, rows=same_question(*answers), judge_model=client.model, columns=COLUMNS)
    outcome = await execute_run(store, run, eth, client, concurrency=4)

    assert outcome.all_scored and outcome.counts == {"scored": 8}
    assert sorted(answer_of(b) for b in judge_server.bodies()) == ["I don't know.", "Other answer.", "Same answer."]
    judged = [j for j in iter_judgments(store, run.id) if j.answer == "Same answer."]
    [original] = [j for j in judged if j.cached_from is None]
    assert sorted(j.cached_from for j in judged if j is not original) == [original.id] * 5
    assert all(j.output == original.output for j in judged)


# --- quota, pause and resume ---------------------------------------------------------------------


class QuotaAfter:
    """Answers Correct `limit` times, then insufficient_quota until `healthy` is set; counts billed replies."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.healthy = False
        self.billed: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        answer = answer_of(body)
        with self.lock:
            if not self.healthy and sum(self.billed.values()) >= self.limit:
                return Reply.quota()
            self.billed[answer] += 1
        return eth_reply("Correct")


async def test_quota_pauses_the_run_and_resume_finishes_only_the_pending_rows(store, eth, judge_server,
                                                                              make_client):
    quota = QuotaAfter(5)
    judge_server.responder = quota
    judge_server.latency = 0.05
    answers = [f"answer {i}" for i in range(12)]
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of(*answers), judge_model=client.model, columns=COLUMNS)
    events: list[Progress] = []
    outcome = await execute_run(store, run, eth, client, concurrency=3, on_progress=events.append)

    assert outcome.status == "paused"
    assert QUOTA_MESSAGE in outcome.stop_reason and "resume" in outcome.stop_reason
    saved = get_run(store, run.id)
    assert saved.status == "paused" and saved.stop_reason == outcome.stop_reason
    counts = status_counts(store, run.id)
    assert counts == {"scored": 5, "pending": 7}, counts  # every billed reply was saved; nothing lost
    assert not outcome.all_scored
    assert latest_unfinished_run(store).id == run.id
    pending = {j.answer for j in iter_judgments(store, run.id) if j.status == "pending"}
    scored = {j.answer for j in iter_judgments(store, run.id) if j.status == "scored"}
    assert scored == set(quota.billed) and pending == set(answers) - scored
    assert all(j.output is None and j.error is None for j in iter_judgments(store, run.id) if j.status == "pending")
    assert [e.done for e in events] == sorted(e.done for e in events) and events[-1].done == 5

    # resume: a new execute_run over the same run, with a healthy account
    quota.healthy = True
    before = len(judge_server.bodies())
    resumed: list[Progress] = []
    outcome = await execute_run(store, get_run(store, run.id), eth, make_client(), concurrency=3,
                                on_progress=resumed.append)
    assert outcome.status == "done" and outcome.all_scored and outcome.counts == {"scored": 12}
    assert get_run(store, run.id).status == "done" and get_run(store, run.id).stop_reason is None
    assert sorted(answer_of(b) for b in judge_server.bodies()[before:]) == sorted(pending)
    # no row billed twice: one billed reply per row over both sessions
    assert sum(quota.billed.values()) == 12 and set(quota.billed.values()) == {1}
    assert resumed[0].done == 5 and resumed[-1].done == resumed[-1].total == 12
    assert all(j.cached_from is None for j in iter_judgments(store, run.id))
    assert latest_unfinished_run(store) is None


async def test_a_changed_rubric_refuses_to_resume(tmp_path, store, eth, judge_server, make_client):
    judge_server.responder = eth_responder
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of("a", "b"), judge_model=client.model, columns=COLUMNS)

    # the rubric file edited after the run started, loaded the way the CLI loads it
    text = eth.source.read_text(encoding="utf-8")
    edited = tmp_path / "eth.yaml"
    edited.write_text(text.replace("You audit answers", "You strictly audit answers"), encoding="utf-8")
    changed = load_rubric(edited)
    assert changed.content_hash != eth.content_hash
    with pytest.raises(RubricChanged, match=rf"run {run.id} started with rubric eth"):
        await execute_run(store, run, changed, client, concurrency=2)
    assert judge_server.bodies() == []
    assert status_counts(store, run.id) == {"pending": 2}
    assert get_run(store, run.id).status == "pending"

    # a new title or description is not a change of what the judge is asked
    edited.write_text(text.replace("title: ETH institutional", "title: Renamed ETH")
                      .replace("description: Strict auditor;", "description: Auditor;"), encoding="utf-8")
    retitled = load_rubric(edited)
    assert retitled.title != eth.title and retitled.content_hash == eth.content_hash
    outcome = await execute_run(store, run, retitled, client, concurrency=2)
    assert outcome.all_scored


# --- a rubric formula that fails on one reply ----------------------------------------------------------------------


async def test_a_formula_error_on_one_row_is_an_error_row_and_the_run_goes_on(tmp_path, store, judge_server,
                                                                            make_client):
    path = tmp_path / "team-nullable.yaml"
    path.write_text(NULLABLE_RUBRIC, encoding="utf-8")
    rubric = load_rubric(path)
    judge_server.responder = lambda body: Reply.json(
        {"x": None if "NULL" in answer_of(body) else 5, "why": "graded"})
    client = make_client()
    run = start_run(store, rubric=rubric, rows=rows_of("first", "NULL please", "third", "NULL again", "fifth"),
                    judge_model=client.model, columns=COLUMNS)
    outcome = await execute_run(store, run, rubric, client, concurrency=2)

    assert outcome.status == "done" and outcome.counts == {"scored": 3, "error": 2}
    rows = by_row(store, run.id)
    for number in (3, 5):
        assert rows[number].status == "error" and "rubric formula" in rows[number].error, rows[number].error
        assert rows[number].output == {"x": None, "why": "graded"} and rows[number].headline is None
    for number in (2, 4, 6):
        assert (rows[number].status, rows[number].headline, rows[number].passed) == ("scored", 50.0, True)
    assert len(judge_server.bodies()) == 5  # no repair request for a reply the rubric itself cannot score


# --- cancel, the in-run cache of a fresh run, one process per run, loading failures ---------------------------------


async def test_cancel_drops_the_requests_in_flight_and_leaves_every_row_pending(store, eth, judge_server,
                                                                               make_client):
    import asyncio

    judge_server.responder = eth_responder
    judge_server.latency = 2.0
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of(*(f"answer {i}" for i in range(6))), judge_model=client.model,
                    columns=COLUMNS)
    cancel = asyncio.Event()
    cancelled_at: list[float] = []

    async def cancel_once_three_are_in_flight() -> None:
        while len(judge_server.bodies()) < 3:
            await asyncio.sleep(0.01)
        cancelled_at.append(time.monotonic())
        cancel.set()

    canceller = asyncio.create_task(cancel_once_three_are_in_flight())
    outcome = await execute_run(store, run, eth, client, concurrency=3, cancel=cancel)
    elapsed = time.monotonic() - cancelled_at[0]
    await canceller

    assert elapsed < 1.5, elapsed  # not the 2 s the judge would have taken
    assert outcome.status == "cancelled" and outcome.stop_reason == "cancelled"
    assert outcome.counts == {"pending": 6} and not outcome.all_scored
    assert len(judge_server.bodies()) == 3  # the three in flight, dropped
    await asyncio.sleep(2.0)  # the judge answers the dropped requests now: nothing may land
    assert status_counts(store, run.id) == {"pending": 6}
    assert all(j.output is None and j.judged_at is None for j in iter_judgments(store, run.id))
    saved = get_run(store, run.id)
    assert (saved.status, saved.stop_reason, saved.owner) == ("cancelled", "cancelled", None)
    assert saved.finished_at is not None


async def test_a_fresh_run_judges_identical_rows_once_and_reuses_only_its_own_verdicts(store, eth, judge_server,
                                                                                      make_client):
    judge_server.responder = eth_responder
    client = make_client()
    earlier = start_run(store, rubric=eth, rows=rows_of("Use myStudies."), judge_model=client.model, columns=COLUMNS)
    await execute_run(store, earlier, eth, client, concurrency=1)
    [old] = iter_judgments(store, earlier.id)
    assert old.status == "scored" and len(judge_server.bodies()) == 1

    rows = [CsvRow(line=n, question="question 0", reference="reference 0", answer="Use myStudies.", model=None,
                   cells={}) for n in range(2, 6)]
    run = start_run(store, rubric=eth, rows=rows, judge_model=client.model, columns=COLUMNS, fresh=True)
    assert get_run(store, run.id).fresh is True
    events: list[Progress] = []
    outcome = await execute_run(store, run, eth, client, concurrency=4, on_progress=events.append)

    assert outcome.all_scored and outcome.counts == {"scored": 4}
    assert len(judge_server.bodies()) == 2  # one request for the four identical rows, none reused from before
    judged = list(iter_judgments(store, run.id))
    [first] = [j for j in judged if j.cached_from is None]
    assert sorted(j.cached_from for j in judged if j is not first) == [first.id] * 3
    assert first.id != old.id and first.tokens_in > 0
    assert events[-1].cached == 3 and events[-1].done == 4
    saved = get_run(store, run.id)
    assert (saved.status, saved.owner, saved.stop_reason) == ("done", None, None)
    assert saved.started_at is not None and saved.finished_at is not None


def _dead_pid() -> int:
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(("owner", "age", "busy"), [
    ("otherhost:1", timedelta(0), True),  # alive elsewhere: a fresh heartbeat
    ("otherhost:1", timedelta(minutes=10), False),  # no heartbeat for ten minutes: abandoned
    ("dead-pid", timedelta(0), False),  # this host, a process that has exited: abandoned at once
    ("own-pid", timedelta(seconds=2), True),  # this host, a live process
], ids=["live-elsewhere", "stale", "dead-pid-here", "live-pid-here"])
async def test_a_run_judged_by_another_live_process_is_busy(store, eth, judge_server, make_client, owner, age, busy):
    judge_server.responder = eth_responder
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of("a", "b"), judge_model=client.model, columns=COLUMNS)
    owner = {"dead-pid": f"{socket.gethostname()}:{_dead_pid()}",
             "own-pid": f"{socket.gethostname()}:{os.getppid()}"}.get(owner, owner)
    update_run(store, run.id, status="running", owner=owner, heartbeat_at=utcnow() - age)

    if busy:
        with pytest.raises(RunBusy, match=rf"run {run.id} is being judged by another judgebot process"):
            await execute_run(store, get_run(store, run.id), eth, client, concurrency=2)
        assert judge_server.bodies() == []
        saved = get_run(store, run.id)
        assert (saved.status, saved.owner) == ("running", owner)  # the other process keeps it
        assert status_counts(store, run.id) == {"pending": 2}
        return
    outcome = await execute_run(store, get_run(store, run.id), eth, client, concurrency=2)
    assert outcome.all_scored and len(judge_server.bodies()) == 2
    saved = get_run(store, run.id)
    assert (saved.status, saved.owner) == ("done", None)


async def test_two_executions_of_one_run_at_once_judge_each_row_once(store, eth, judge_server, make_client):
    """The second execute_run of a run this process is already judging is refused, not run side by side."""
    judge_server.responder = eth_responder
    judge_server.latency = 0.2
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of(*(f"answer {i}" for i in range(4))), judge_model=client.model,
                    columns=COLUMNS)
    first = asyncio.create_task(execute_run(store, run, eth, client, concurrency=2))
    await asyncio.sleep(0.1)
    with pytest.raises(RunBusy):
        await execute_run(store, get_run(store, run.id), eth, client, concurrency=2)
    outcome = await first
    assert outcome.all_scored and len(judge_server.bodies()) == 4


async def test_rows_that_fail_to_load_leave_a_failed_run_that_is_never_resumed(store, eth, judge_server,
                                                                              make_client):
    def rows():
        yield from rows_of(*(f"answer {i}" for i in range(1_500)))
        raise RuntimeError("the disk went away")

    with pytest.raises(RuntimeError, match="the disk went away"):
        start_run(store, rubric=eth, rows=rows(), judge_model="judge-test", columns=COLUMNS)
    [run] = recent_runs(store)
    assert run.status == "failed"
    assert "loading" in run.stop_reason and "the disk went away" in run.stop_reason
    assert latest_unfinished_run(store) is None
    # the rows of the first batches were written, but a half-loaded run is never judged
    with pytest.raises(RunNotResumable, match=rf"run {run.id} cannot be judged .*start a new run"):
        await execute_run(store, run, eth, make_client(), concurrency=2)
    assert judge_server.bodies() == []
    assert get_run(store, run.id).status == "failed"


async def test_interrupting_a_run_with_identical_rows_in_flight_leaves_them_pending(store, eth, judge_server,
                                                                                   make_client):
    """Ctrl-C cancels the run's task while one row judges a triple and its twins wait for it."""
    judge_server.responder = eth_responder
    judge_server.latency = 2.0
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of("same answer", "same answer", "same answer", "other"),
                    judge_model=client.model, columns=COLUMNS, fresh=True)
    task = asyncio.create_task(execute_run(store, run, eth, client, concurrency=4))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = get_run(store, run.id)
    assert (saved.status, saved.stop_reason, saved.owner) == ("paused", "interrupted", None)
    assert status_counts(store, run.id) == {"pending": 4}


@pytest.mark.slow
async def test_a_run_taken_over_by_another_process_stops_and_leaves_its_status_alone(store, eth, judge_server,
                                                                                   make_client):
    judge_server.responder = eth_responder
    judge_server.latency = 0.5
    client = make_client()
    run = start_run(store, rubric=eth, rows=rows_of(*(f"answer {i}" for i in range(40))), judge_model=client.model,
                    columns=COLUMNS)
    task = asyncio.create_task(execute_run(store, run, eth, client, concurrency=2))
    await asyncio.sleep(1.0)
    # Another process decided this one was gone and claimed the run (what a stale heartbeat allows).
    update_run(store, run.id, owner="otherhost:7", heartbeat_at=utcnow())
    outcome = await asyncio.wait_for(task, timeout=HEARTBEAT_SECONDS + 5)

    assert (outcome.status, outcome.stop_reason) == ("paused", "another judgebot process took the run over")
    assert outcome.counts.get("pending", 0) > 0
    saved = get_run(store, run.id)
    assert (saved.status, saved.owner) == ("running", "otherhost:7")  # the new owner's, untouched


async def test_a_dropped_connection_costs_its_row_not_the_run(store, eth, judge_server, make_client):
    def responder(body: dict) -> Reply:
        return Reply(drop=True) if answer_of(body) == "DROP" else eth_responder(body)

    judge_server.responder = responder
    client = make_client(max_retries=1)
    run = start_run(store, rubric=eth, rows=rows_of("answer one", "DROP", "answer three"), judge_model=client.model,
                    columns=COLUMNS)

    outcome = await execute_run(store, run, eth, client, concurrency=3)

    assert outcome.status == "done" and outcome.counts == {"scored": 2, "error": 1}
    dropped = by_row(store, run.id)[3]
    assert dropped.status == "error" and "connection to the judge endpoint broke" in dropped.error
    assert "gave up after 2 attempts" in dropped.error


# --- what a CSV file brings -------------------------------------------------------------------------


def test_nul_bytes_deep_in_a_csv_never_reach_the_history(tmp_path, store, eth):
    path = tmp_path / "nul.csv"
    pad = b"question,reference,answer,model,notes\n" + b"q,r,a,m,n\n" * 2000  # past the binary check's 8 KB
    path.write_bytes(pad + b"Wh\x00ere?,In my\x00Studies.,Use\x00 it.,bot\x00-a,n\x00\nshort\x00,row\n")
    run = start_csv_run(store, rubric=eth, source=open_csv(path), judge_model="judge-test")
    saved = list(iter_judgments(store, run.id))
    assert len(saved) == 2002 and status_counts(store, run.id) == {"pending": 2001, "malformed": 1}
    good, bad = saved[-2], saved[-1]
    assert (good.question, good.reference, good.answer, good.model_name) == ("Where?", "In myStudies.", "Use it.",
                                                                               "bot-a")
    assert good.cells["notes"] == "n" and bad.cells == {"question": "short", "reference": "row"}


def test_a_header_only_csv_makes_no_run(tmp_path, store, eth):
    path = tmp_path / "header.csv"
    path.write_text("question,reference,answer\n,,\n\n", encoding="utf-8")
    with pytest.raises(CsvError, match="header.csv has a header but no data rows"):
        start_csv_run(store, rubric=eth, source=open_csv(path), judge_model="judge-test")
    assert recent_runs(store) == []


def test_the_columns_of_each_role_are_kept_with_the_run(tmp_path, store, eth):
    path = tmp_path / "two.csv"
    path.write_text("Query,reference,answer,model_response\nq,r,a,mr\n", encoding="utf-8")
    run = start_csv_run(store, rubric=eth, source=open_csv(path, {"answer": "model_response"}),
                        judge_model="judge-test")
    assert get_run(store, run.id).column_roles == {"question": "Query", "reference": "reference",
                                                  "answer": "model_response"}
    assert next(iter_judgments(store, run.id)).answer == "mr"
