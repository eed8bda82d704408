"""HTTP mode's front door: Slack's signature is checked first and survives junk, and a signed request runs once
(recorded in the database: bot.slack.deliveries; replicas and Socket Mode in tests/slack/test_deliveries.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from urllib.parse import urlencode

import aiohttp
import pytest

from bot.slack.views.card import CORRECT, FEEDBACK
from tests.support.replies import eth_reply
from tests.support.slack_messages import INLINE, buttons, card_of, feedback

FORM = "application/x-www-form-urlencoded"


async def post_bytes(url: str, body: bytes, headers: dict[str, str]) -> int:
    async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as response:
        await response.read()
        return response.status


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.exc_info is not None or record.levelno >= logging.ERROR]


@pytest.mark.parametrize("junk", ["bad JSON in payload", "non-numeric timestamp", "invalid UTF-8", "JSON not an object"])
async def test_malformed_unsigned_requests_get_401_without_a_traceback(slack, junk, caplog):
    caplog.set_level(logging.INFO)
    stamp = str(int(time.time()))
    headers = {"Content-Type": FORM, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": "v0=" + "0" * 64}
    body = b"payload=%7Bnot+json"
    if junk == "non-numeric timestamp":
        headers["X-Slack-Request-Timestamp"] = "soon"
        body = urlencode(slack.command_payload("help")).encode()
    elif junk == "invalid UTF-8":
        body = b"payload=" + bytes([0xC3, 0x28, 0x96, 0xFF])
    elif junk == "JSON not an object":
        headers["Content-Type"] = "application/json"
        body = b'{"type": "event_callback", "event": '
    status = await post_bytes(slack.url, body, headers)
    assert status == 401
    await asyncio.sleep(0.05)  # anything logged after the answer is logged by now
    assert tracebacks(caplog) == []


@pytest.mark.parametrize("body", ["payload=%7Bnot+json", "payload=%5B1%2C2%5D", 'payload="text"', "[1, 2]", '"text"'],
                         ids=["bad-json", "payload-list", "payload-string", "json-list", "json-string"])
async def test_junk_signed_with_the_secret_is_refused_without_a_traceback(slack, caplog, body):
    answer = await slack.post(body, FORM if body.startswith("payload=") else "application/json")
    assert answer.status == 400
    await asyncio.sleep(0.05)
    assert tracebacks(caplog) == []


async def test_a_replayed_signed_command_runs_once(slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    body, stamp = urlencode(slack.command_payload(INLINE)), int(time.time())
    first = await slack.post(body, FORM, timestamp=stamp)
    again = await slack.post(body, FORM, timestamp=stamp)
    assert first.status == 200 and again.status == 200
    await card_of(slack_server)
    await asyncio.sleep(0.3)  # a second judgment would have reached the judge by now
    assert len(judge_server.bodies()) == 1
    assert len(slack_server.calls_to("chat.postMessage")) == 1  # one placeholder, made into one card


async def test_a_repeat_carrying_slacks_retry_headers_is_not_processed_twice(slack):
    body, stamp = urlencode(slack.command_payload("help")), int(time.time())
    first = await slack.post(body, FORM, timestamp=stamp)
    retried = await slack.post(body, FORM, timestamp=stamp, headers={"X-Slack-Retry-Num": "1",
                                                                      "X-Slack-Retry-Reason": "http_timeout"})
    assert "/judge stats" in first.text()
    assert retried.status == 200 and retried.body is None  # acknowledged, so Slack stops, but not answered again


async def test_the_same_command_signed_anew_runs_again(slack):
    body, now = urlencode(slack.command_payload("help")), int(time.time())
    first = await slack.post(body, FORM, timestamp=now)
    second = await slack.post(body, FORM, timestamp=now - 1)  # read once: a second may tick between the two posts
    assert "/judge stats" in first.text() and "/judge stats" in second.text()


async def test_a_replayed_interaction_and_event_run_once(slack, slack_server):
    event = slack.event_payload({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
    body, stamp = json.dumps(event), int(time.time())
    assert (await slack.post(body, "application/json", timestamp=stamp)).status == 200
    assert (await slack.post(body, "application/json", timestamp=stamp)).status == 200
    await slack_server.await_for("views.publish")
    await asyncio.sleep(0.3)
    assert len(slack_server.calls_to("views.publish")) == 1


async def test_a_replayed_click_runs_once(slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    payload = {"type": "block_actions", "user": {"id": "U0USER", "team_id": "T0TEST"}, "team": {"id": "T0TEST"},
               "channel": {"id": "C0GENERAL"}, "container": {"channel_id": "C0GENERAL", "message_ts": card["ts"]},
               "response_url": slack_server.response_url("vote"), "trigger_id": "trigger.vote",
               "actions": [{"action_id": FEEDBACK, "value": feedback(card)["agree"], "type": "feedback_buttons"}]}
    body, stamp = urlencode({"payload": json.dumps(payload)}), int(time.time())
    assert (await slack.post(body, FORM, timestamp=stamp)).status == 200
    assert (await slack.post(body, FORM, timestamp=stamp)).status == 200
    await slack_server.await_for("response_url")
    await asyncio.sleep(0.3)
    assert [c.params["text"] for c in slack_server.calls_to("response_url")] == [
        f"Thanks: you agree with the judge on #{buttons(card)[CORRECT]}."]
