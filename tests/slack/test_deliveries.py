"""Each Slack delivery processed once by all the bot's processes: the record in the database (SQLite and PostgreSQL),
the keys that tell a repeat, the bot that cannot record, and replicas as real processes on one PostgreSQL database
(HTTP mode behind one URL, and Socket Mode connections) that never process one delivery twice."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.slack.deliveries import FORGET_EVERY, KEEP, delivery_key
from bot.slack.views.card import FEEDBACK
from bot.store import Store, forget_deliveries, record_delivery, utcnow
from tests.support.replicas import replicas
from tests.support.replies import eth_reply
from tests.support.serve_process import free_port, wait_healthy
from tests.support.slack_messages import INLINE, buttons, card_of, feedback
from tests.support.slack_side import SIGNING_SECRET, SlackSide
from tests.support.store_rows import at_once

FORM = "application/x-www-form-urlencoded"
HOME = {"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"}


# -- the record ---------------------------------------------------------------------------------------------------


def test_a_delivery_is_recorded_once(store: Store):
    assert record_delivery(store, key="event:Ev1", kind="event_callback")
    assert not record_delivery(store, key="event:Ev1", kind="event_callback")
    assert record_delivery(store, key="event:Ev2", kind="event_callback")
    assert record_delivery(store, key="request:" + "0" * 64, kind="a kind longer than the thirty-two characters kept")


def test_processes_recording_one_delivery_at_once_get_one_yes_between_them(db_url: str, store: Store):
    answers = at_once(db_url, lambda each: record_delivery(each, key="event:EvSAME", kind="event_callback"))
    assert sorted(answers) == [False] * 5 + [True]


def test_old_deliveries_are_forgotten_in_batches(store: Store):
    now = utcnow()
    for n in range(7):
        record_delivery(store, key=f"event:EvOLD{n}", kind="event_callback", now=now - KEEP - timedelta(minutes=n + 1))
    record_delivery(store, key="event:EvNEW", kind="event_callback", now=now - timedelta(minutes=5))
    assert forget_deliveries(store, before=now - KEEP, batch=3) == 7  # three batches: 3, 3 and 1
    assert forget_deliveries(store, before=now - KEEP, batch=3) == 0
    assert not record_delivery(store, key="event:EvNEW", kind="event_callback")  # still within the hour: a repeat
    assert record_delivery(store, key="event:EvOLD0", kind="event_callback")  # forgotten: taken as new


# -- what tells a repeat ------------------------------------------------------------------------------------------


def http_request(body: str, stamp: str, content_type: str = FORM, **headers: str) -> AsyncBoltRequest:
    return AsyncBoltRequest(body=body, headers={"content-type": content_type, "x-slack-request-timestamp": stamp,
                                                **headers})


def test_an_event_is_known_by_its_event_id_through_slacks_retries():
    event = json.dumps({"type": "event_callback", "event_id": "Ev0RETRIED", "event": HOME})
    first = http_request(event, "1000", "application/json")
    retry = http_request(event, "1061", "application/json", **{"x-slack-retry-num": "1"})  # signed anew
    socket = AsyncBoltRequest(mode="socket_mode", body=json.loads(event), headers={"x-slack-retry-num": "2"})
    assert delivery_key(first) == delivery_key(retry) == delivery_key(socket) == "event:Ev0RETRIED"


def test_a_workflow_step_is_known_by_its_execution_under_any_event_id():
    step = {"type": "function_executed", "function_execution_id": "Fx0GRADE", "bot_access_token": "xwfp-1"}
    first = http_request(json.dumps({"type": "event_callback", "event_id": "Ev0FIRST", "event": step}), "1000",
                         "application/json")
    again = AsyncBoltRequest(mode="socket_mode", body={"type": "event_callback", "event_id": "Ev0AGAIN",
                                                       "event": {**step, "bot_access_token": "xwfp-2"}})
    assert delivery_key(first) == delivery_key(again) == "step:Fx0GRADE"
    other = {"type": "event_callback", "event_id": "Ev0OTHER", "event": {**step, "function_execution_id": "Fx0NEXT"}}
    assert delivery_key(AsyncBoltRequest(mode="socket_mode", body=other)) == "step:Fx0NEXT"


def test_a_command_over_http_is_known_by_what_slack_signed():
    body = urlencode({"command": "/judge", "text": "help", "trigger_id": "trigger.1"})
    assert delivery_key(http_request(body, "1000")) == delivery_key(http_request(body, "1000"))  # a replay
    assert delivery_key(http_request(body, "1000")) != delivery_key(http_request(body, "1001"))  # signed anew
    assert delivery_key(http_request(body, "1000")).startswith("request:")


def test_a_socket_mode_payload_is_known_by_its_content():
    payload = {"type": "block_actions", "trigger_id": "trigger.7", "actions": [{"action_id": "a", "value": "1"}]}
    reordered = dict(reversed(payload.items()))
    same = AsyncBoltRequest(mode="socket_mode", body=payload)
    assert delivery_key(same) == delivery_key(AsyncBoltRequest(mode="socket_mode", body=reordered))
    assert delivery_key(same) != delivery_key(AsyncBoltRequest(mode="socket_mode",
                                                               body={**payload, "trigger_id": "trigger.8"}))


# -- one bot --------------------------------------------------------------------------------------------------------


async def test_the_bot_forgets_deliveries_older_than_an_hour_on_its_schedule(http_bot, slack, bot_settings):
    await slack.event(HOME, event_id="Ev0RECENT")
    store = Store.open(bot_settings.db_url)
    long_ago = utcnow() - KEEP - timedelta(minutes=1)
    assert record_delivery(store, key="event:Ev0LONGAGO", kind="event_callback", now=long_ago)
    job = http_bot.deliveries.scheduler.get_job("deliveries-forget")
    assert job is not None and job.trigger.interval == FORGET_EVERY
    assert await http_bot.deliveries.forget() == 1  # what the job runs
    assert not record_delivery(store, key="event:Ev0RECENT", kind="event_callback")
    assert record_delivery(store, key="event:Ev0LONGAGO", kind="event_callback")
    store.engine.dispose()


async def test_a_bot_that_cannot_record_a_delivery_takes_none(http_bot, slack, slack_server, judge_server,
                                                               bot_settings, caplog):
    store = Store.open(bot_settings.db_url)
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE slack_delivery"))  # the database refuses every record from now on
    store.engine.dispose()
    answer = await slack.command(INLINE)
    assert answer.status == 200 and "cannot reach its database" in answer.text()
    assert (await slack.event(HOME)).status == 503  # not taken: Slack sends it again later
    await asyncio.sleep(0.3)
    assert judge_server.bodies() == [] and slack_server.calls_to("views.publish") == []
    assert "could not record a command delivery; not processed" in caplog.text


# -- replicas: real processes on one PostgreSQL database ----------------------------------------------------------


def dropped(log: Path) -> int:
    """How many deliveries a replica dropped as taken already, by its log."""
    return log.read_text().count("delivered again")


def vote_body(slack_server, card: dict) -> str:
    """The form body of a click on the card's agree button, as Slack signs it."""
    payload = {"type": "block_actions", "user": {"id": "U0USER", "team_id": "T0TEST"}, "team": {"id": "T0TEST"},
               "channel": {"id": "C0GENERAL"}, "container": {"channel_id": "C0GENERAL", "message_ts": card["ts"]},
               "response_url": slack_server.response_url("vote"), "trigger_id": "trigger.vote",
               "actions": [{"action_id": FEEDBACK, "value": feedback(card)["agree"], "type": "feedback_buttons"}]}
    return urlencode({"payload": json.dumps(payload)})


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_replay_or_retry_sent_to_another_http_replica_is_acknowledged_and_dropped(bot_settings, db_url,
                                                                                    slack_server, judge_server,
                                                                                    tmp_path):
    judge_server.responder = lambda body: eth_reply("Correct")
    ports = [free_port(), free_port()]
    with replicas(bot_settings, db_url, tmp_path) as running:
        # started together: they set the new database up together
        logs = [running.logs[running.start(PORT=str(port))] for port in ports]

        async def talk() -> None:
            urls = [f"http://127.0.0.1:{port}" for port in ports]
            await asyncio.gather(*(wait_healthy(url) for url in urls))
            a, b = (SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET) for url in urls)
            command, stamp = urlencode(a.command_payload(INLINE)), int(time.time())
            assert (await a.post(command, FORM, timestamp=stamp)).status == 200
            card = await card_of(slack_server)
            vote = vote_body(slack_server, card)
            assert (await a.post(vote, FORM, timestamp=stamp)).status == 200
            event = a.event_payload(HOME)
            assert (await a.post(json.dumps(event), "application/json", timestamp=stamp)).status == 200
            await slack_server.await_for("views.publish")
            await slack_server.await_for("response_url", lambda c: "Thanks" in c.params.get("text", ""))
            again = [await b.post(command, FORM, timestamp=stamp),  # the identical signed requests, replayed to B
                     await b.post(vote, FORM, timestamp=stamp),
                     await b.post(json.dumps(event), "application/json", timestamp=stamp),
                     await b.send_event(event, retry_num=1)]  # Slack's retry: signed anew, the same event_id
            assert [(answer.status, answer.body) for answer in again] == [(200, None)] * 4
            assert "/judge stats" in (await b.command("help")).text()  # B takes what is new to it
            await asyncio.sleep(1.0)  # anything B did with a repeat would have reached Slack or the judge by now

        asyncio.run(talk())
    assert len(judge_server.bodies()) == 1
    assert len(slack_server.calls_to("chat.postMessage")) == 1  # one placeholder, made into one card
    assert len(slack_server.calls_to("views.publish")) == 1
    assert len([c for c in slack_server.calls_to("response_url") if "Thanks" in c.params.get("text", "")]) == 1
    assert (dropped(logs[0]), dropped(logs[1])) == (0, 4)


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_delivery_repeated_on_another_replicas_socket_mode_connection_is_dropped(bot_settings, db_url,
                                                                                    slack_server, judge_server,
                                                                                    tmp_path):
    judge_server.responder = lambda body: eth_reply("Correct")
    with replicas(bot_settings, db_url, tmp_path) as running:
        logs = []
        for n in (1, 2):  # one at a time, so that connection 0 is replica A's and connection 1 replica B's
            logs.append(running.logs[running.start(SLACK_APP_TOKEN=slack_server.app_token)])
            deadline = time.monotonic() + 60
            while slack_server.connections() < n:
                assert time.monotonic() < deadline, logs[-1].read_text()
                time.sleep(0.05)

        async def deliver(kind: str, payload: dict, connection: int, retry: int = 0) -> dict:
            envelope = await slack_server.async_send_envelope(kind, payload, connection=connection,
                                                              retry_attempt=retry, retry_reason="timeout" if retry else "")
            return await slack_server.async_wait_ack(envelope, timeout=10)

        async def talk() -> None:
            side = SlackSide(slack_server)
            command, event = side.command_payload(INLINE), side.event_payload(HOME)
            await deliver("slash_commands", command, 0)
            card = await card_of(slack_server)
            assert buttons(card)
            await deliver("events_api", event, 0)
            await slack_server.await_for("views.publish")
            again = [await deliver("slash_commands", command, 1), await deliver("events_api", event, 1, retry=1)]
            assert [ack.get("payload") for ack in again] == [None, None]  # acknowledged, nothing said
            helped = await deliver("slash_commands", side.command_payload("help"), 1)
            assert "/judge stats" in json.dumps(helped.get("payload"))  # B takes what is new to it
            await asyncio.sleep(1.0)

        asyncio.run(talk())
    assert len(judge_server.bodies()) == 1
    assert len(slack_server.calls_to("chat.postMessage")) == 1
    assert len(slack_server.calls_to("views.publish")) == 1
    assert (dropped(logs[0]), dropped(logs[1])) == (0, 2)
