"""Replicas as real processes on one PostgreSQL database judging one file together: a worker-only process takes part
of its rows, a helper killed with SIGKILL loses nothing, and the replica holding the run dies and another goes on in
the same messages with exactly one summary; a workflow step delivered to both, and Re-judge clicked on both, judged
once."""

from __future__ import annotations

import asyncio
import collections
import time

import pytest
from sqlmodel import col, select

from bot.records import RunState
from bot.store import Store, get_run, recent_runs, status_counts
from bot.store.tables.core import RUN
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.slack.test_workflow_step import GRADE, ended, step_payload
from tests.support.openai_server import Reply
from tests.support.replicas import replicas
from tests.support.replies import eth_reply, triple_of
from tests.support.serve_process import free_port, wait_healthy
from tests.support.slack_files import eth_csv, finished_thread, grade_by_answer, posted, share, summaries, wait_until
from tests.support.slack_messages import INLINE, buttons, card_of
from tests.support.slack_side import SIGNING_SECRET, SlackSide

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)]


def slowly(body: dict) -> Reply:
    return Reply(content=grade_by_answer(body).content, delay=0.04)


def rows_of(store: Store) -> list[JudgmentTable]:
    with store.session() as session:
        return list(session.exec(select(JudgmentTable).order_by(col(JudgmentTable.id))))


def judged_by(store: Store) -> collections.Counter[str]:
    """How many rows each process judged, by the claims the saved rows keep."""
    return collections.Counter(row.claimed_by for row in rows_of(store) if row.status != "pending")


def asked(judge_server) -> collections.Counter[str]:
    return collections.Counter(triple_of(body)[0] for body in judge_server.bodies())


async def started(slack_server, port: int) -> SlackSide:
    url = f"http://127.0.0.1:{port}"
    await wait_healthy(url)
    return SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET)


def test_a_worker_only_process_judges_part_of_a_file_shared_with_a_slack_replica(bot_settings, db_url, slack_server,
                                                                                  judge_server, tmp_path):
    judge_server.responder = slowly
    port, rows = free_port(), 600
    with replicas(bot_settings, db_url, tmp_path) as running:
        running.start(PORT=str(port), CONCURRENCY="4")
        running.start("--workers-only", CONCURRENCY="4")

        async def talk() -> dict:
            slack = await started(slack_server, port)
            event = await share(slack, slack_server, eth_csv(rows), text="eth")
            await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=120)
            return event

        event = asyncio.run(talk())
    store = Store.open(db_url)
    saved = rows_of(store)
    assert len(saved) == rows and {row.status for row in saved} == {"scored"}
    shares = judged_by(store)
    assert len(shares) == 2 and min(shares.values()) >= 50, shares  # both took a good part
    assert set(asked(judge_server).values()) == {1}  # every row asked once
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    head = posted(slack_server, "C0GENERAL", event["ts"])[0]
    assert head["text"].startswith("Finished") and f"{rows:,} rows" in str(head["blocks"])
    assert "judges rows of the runs the Slack replicas hold" in running.log(1)


def test_a_helper_killed_mid_run_loses_no_row_and_bills_no_saved_row_twice(bot_settings, db_url, slack_server,
                                                                            judge_server, tmp_path):
    judge_server.responder = slowly
    port, rows = free_port(), 800
    store = Store.open(db_url)
    with replicas(bot_settings, db_url, tmp_path) as running:
        running.start(PORT=str(port), CONCURRENCY="4")
        worker = running.start("--workers-only", CONCURRENCY="4")

        async def talk() -> tuple[dict, set[str]]:
            slack = await started(slack_server, port)
            event = await share(slack, slack_server, eth_csv(rows), text="eth")
            await wait_until(lambda: len(judged_by(store)) == 2 and min(judged_by(store).values()) >= 30, timeout=60,
                             what="both processes judging")
            running.kill(worker)
            saved = {row.question for row in rows_of(store) if row.status != "pending"}
            await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=120)
            return event, saved

        event, saved_at_kill = asyncio.run(talk())
    saved = rows_of(store)
    assert len(saved) == rows and {row.status for row in saved} == {"scored"}
    counts = asked(judge_server)
    assert set(counts) == {row.question for row in saved} and max(counts.values()) <= 2
    assert not {q for q, n in counts.items() if n > 1} & saved_at_kill  # a saved verdict is never asked again
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1


def test_the_replica_holding_a_run_dies_and_another_goes_on_in_the_same_thread(bot_settings, db_url, slack_server,
                                                                                judge_server, tmp_path):
    judge_server.responder = slowly
    ports, rows = [free_port(), free_port()], 800
    store = Store.open(db_url)
    with replicas(bot_settings, db_url, tmp_path) as running:
        holder = running.start(PORT=str(ports[0]), CONCURRENCY="4")
        running.start(PORT=str(ports[1]), CONCURRENCY="4")

        async def talk() -> tuple[dict, dict, float, float]:
            slack, _ = await asyncio.gather(started(slack_server, ports[0]), started(slack_server, ports[1]))
            event = await share(slack, slack_server, eth_csv(rows), text="eth")
            await wait_until(lambda: sum(judged_by(store).values()) >= 150, timeout=60, what="150 rows judged")
            head = posted(slack_server, "C0GENERAL", event["ts"])[0]
            running.kill(holder)
            killed = time.monotonic()
            with store.session() as session:
                dead_owner = session.exec(select(RUN.c.owner)).one()
            def taken_over() -> str | None:
                # The other replica holds the run now, or has finished it already: when its helper judged nearly
                # every row before the holder died, taking the rest and ending the run can fall between two looks.
                run = get_run(store, 1)
                if run is None:
                    return None
                if run.owner not in (None, dead_owner):
                    return run.owner
                return "finished" if run.status == RunState.DONE else None

            taken = await wait_until(taken_over, timeout=40, what="the run taken over")
            took = time.monotonic() - killed
            await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=120)
            assert taken
            return event, head, took, killed

        event, head, took, killed = asyncio.run(talk())
    assert took < 30, took
    saved = rows_of(store)
    assert len(saved) == rows and {row.status for row in saved} == {"scored"}
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    thread = posted(slack_server, "C0GENERAL", event["ts"])
    assert thread[0]["ts"] == head["ts"] and thread[0]["text"].startswith("Finished")  # the same progress message
    later = [c for c in slack_server.calls_to("chat.update") if c.at > killed and c.params.get("ts") == head["ts"]]
    assert later  # edited by the replica that took the run
    assert max(asked(judge_server).values()) <= 2


def test_cancel_clicked_on_another_replica_stops_the_run_where_it_is_judged(bot_settings, db_url, slack_server,
                                                                              judge_server, tmp_path):
    judge_server.responder = slowly
    ports, rows = [free_port(), free_port()], 800
    store = Store.open(db_url)
    with replicas(bot_settings, db_url, tmp_path) as running:
        running.start(PORT=str(ports[0]), CONCURRENCY="4")
        running.start(PORT=str(ports[1]), CONCURRENCY="4")

        async def talk() -> tuple[dict, str, int]:
            holder, other = await asyncio.gather(started(slack_server, ports[0]), started(slack_server, ports[1]))
            event = await share(holder, slack_server, eth_csv(rows), text="eth")
            head = await wait_until(lambda: "judgebot_run_cancel" in str(posted(slack_server, "C0GENERAL", event["ts"])[:1])
                                    and posted(slack_server, "C0GENERAL", event["ts"])[0], timeout=60, what="Cancel")
            await wait_until(lambda: sum(judged_by(store).values()) >= 40, timeout=60, what="40 rows judged")
            run_id = get_run(store, 1).id
            answer = await other.click("judgebot_run_cancel", str(run_id), channel="C0GENERAL", message_ts=head["ts"])
            assert answer.status == 200
            told = (await slack_server.await_for("response_url", lambda c: "Cancelling" in c.params.get("text", "")))[0]
            await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
            return event, told.params["text"], run_id

        event, told, run_id = asyncio.run(talk())
    assert "another process of the bot judges it" in told
    run = get_run(store, run_id)
    counts = status_counts(store, run_id)
    assert run.status == "cancelled" and 0 < counts["scored"] < rows and counts.get("pending", 0) > 0
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    end = posted(slack_server, "C0GENERAL", event["ts"])[0]
    assert "Cancelled by <@U0USER>" in str(end["blocks"])


def test_a_step_delivered_again_and_re_judge_clicked_on_both_replicas_are_judged_once(bot_settings, db_url,
                                                                                        slack_server, judge_server,
                                                                                        tmp_path):
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, delay=1.0)
    ports = [free_port(), free_port()]
    with replicas(bot_settings, db_url, tmp_path) as running:
        for port in ports:
            running.start(PORT=str(port))

        async def talk() -> tuple[str, dict]:
            a, b = await asyncio.gather(started(slack_server, ports[0]), started(slack_server, ports[1]))
            payload, execution, _ = step_payload(a, {**GRADE, "answer": "Ask at the desk."})  # one execution, two ids
            again = {**payload, "event_id": f"{payload['event_id']}X"}
            await asyncio.gather(a.send_event(payload), b.send_event(again))
            await ended(slack_server, execution, timeout=30)

            await a.command(INLINE)
            card = await card_of(slack_server, timeout=30)
            await asyncio.gather(*((a, b)[n % 2].click("judgebot_rejudge", buttons(card)["judgebot_rejudge"],
                                                       channel="C0GENERAL", message_ts=card["ts"],
                                                       user=f"U0P{n:03d}") for n in range(50)))
            await slack_server.await_for("response_url", lambda c: "judged again already" in c.params.get("text", ""),
                                         count=49, timeout=30)
            await card_of(slack_server, count=2, timeout=30)
            await asyncio.sleep(2.0)  # a second judgment of either would have been asked for by now
            return execution, card

        execution, card = asyncio.run(talk())
    assert len(slack_server.step_ends(execution)) == 1
    assert len(judge_server.bodies()) == 3  # the step once, the card once, and once again
    store = Store.open(db_url)
    assert len(recent_runs(store)) == 3
    assert len(slack_server.calls_to("chat.postMessage")) == 3  # the step's card, the card, one new card
