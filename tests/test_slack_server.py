"""The local Slack server answers the real slack_sdk clients: Web API, response_url and Socket Mode."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.servers.slack_server import FakeSlackServer


@pytest.fixture
def slack() -> Iterator[FakeSlackServer]:
    """A fresh local Slack server."""
    server = FakeSlackServer().start()
    yield server
    server.stop()


def web_client(slack: FakeSlackServer, token: str | None = "default", **kw) -> AsyncWebClient:
    return AsyncWebClient(token=slack.bot_token if token == "default" else token, base_url=slack.api_url, **kw)


async def test_auth_test_checks_the_token(slack: FakeSlackServer) -> None:
    ok = await web_client(slack).auth_test()
    assert ok["user_id"] == "U0BOT" and ok["team_id"] == "T0TEST" and ok["url"] == slack.team_url

    with pytest.raises(SlackApiError) as bad:
        await web_client(slack, "xoxb-wrong").auth_test()
    assert bad.value.response["error"] == "invalid_auth"

    with pytest.raises(SlackApiError) as missing:
        await web_client(slack, None).auth_test()
    assert missing.value.response["error"] == "not_authed"

    calls = slack.calls_to("auth.test")
    assert len(calls) == 3
    assert calls[0].headers["Authorization"] == f"Bearer {slack.bot_token}"


async def test_post_update_and_thread(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*grading*"}}]
    parent = await client.chat_postMessage(channel="C0GENERAL", text="grading", blocks=blocks)
    reply1 = await client.chat_postMessage(channel="C0GENERAL", text="first", thread_ts=parent["ts"])
    reply2 = await client.chat_postMessage(channel="C0GENERAL", text="second", thread_ts=parent["ts"])
    assert float(parent["ts"]) < float(reply1["ts"]) < float(reply2["ts"])
    assert parent["message"]["blocks"] == blocks

    updated = await client.chat_update(channel="C0GENERAL", ts=parent["ts"], text="graded")
    assert updated["text"] == "graded"
    message = slack.messages[("C0GENERAL", parent["ts"])]
    assert message["edits"] == 1 and message["text"] == "graded" and message["blocks"] == blocks
    assert [m["text"] for m in slack.thread("C0GENERAL", parent["ts"])] == ["first", "second"]

    for channel, error in (("C0NOBOT", "not_in_channel"), ("C0MISSING", "channel_not_found")):
        with pytest.raises(SlackApiError) as failed:
            await client.chat_postMessage(channel=channel, text="hi")
        assert failed.value.response["error"] == error
    with pytest.raises(SlackApiError) as missing:
        await client.chat_update(channel="C0GENERAL", ts="1.000000", text="x")
    assert missing.value.response["error"] == "message_not_found"

    link = await client.chat_getPermalink(channel="C0GENERAL", message_ts=parent["ts"])
    assert link["permalink"] == f"{slack.team_url}archives/C0GENERAL/p{parent['ts'].replace('.', '')}"
    assert (await client.users_info(user="U0ADMIN"))["user"]["is_admin"] is True


async def test_rate_limit_is_retried(slack: FakeSlackServer) -> None:
    slack.fail("chat.postMessage", "ratelimited", status=429, headers={"Retry-After": "1"})
    client = web_client(slack, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    sent = await client.chat_postMessage(channel="C0GENERAL", text="hello")
    assert sent["ok"] is True
    calls = slack.calls_to("chat.postMessage")
    assert len(calls) == 2 and calls[1].at - calls[0].at >= 1.0


async def test_views_open_needs_a_trigger_id(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    view = {"type": "modal", "title": {"type": "plain_text", "text": "Grade"}, "blocks": []}
    with pytest.raises(SlackApiError) as failed:
        await client.views_open(trigger_id="", view=view)
    assert failed.value.response["error"] == "invalid_trigger_id"
    opened = await client.views_open(trigger_id="t1", view=view)
    assert opened["view"]["id"].startswith("V") and opened["view"]["type"] == "modal"


async def test_response_url_is_recorded(slack: FakeSlackServer) -> None:
    webhook = AsyncWebhookClient(slack.response_url("abc"))
    response = await webhook.send(text="done", response_type="ephemeral", replace_original=False)
    assert response.status_code == 200 and response.body == "ok"
    (call,) = await slack.await_for("response_url")
    assert call.path == "/response/abc" and call.params["text"] == "done"


async def test_socket_mode_round_trip(slack: FakeSlackServer) -> None:
    client = SocketModeClient(app_token=slack.app_token, web_client=AsyncWebClient(base_url=slack.api_url))

    async def ack(client: SocketModeClient, req: SocketModeRequest) -> None:
        response = SocketModeResponse(envelope_id=req.envelope_id, payload={"text": "pong"})
        await client.send_socket_mode_response(response)

    client.socket_mode_request_listeners.append(ack)
    try:
        await client.connect()
        await asyncio.to_thread(slack.connected.wait, 5)
        envelope_id = await slack.async_send_envelope("slash_commands", {"command": "/judge", "text": "ping"})
        acked = await slack.async_wait_ack(envelope_id)
        assert acked == {"envelope_id": envelope_id, "payload": {"text": "pong"}}
        assert slack.calls_to("apps.connections.open")[0].headers["Authorization"] == f"Bearer {slack.app_token}"
    finally:
        await client.close()
