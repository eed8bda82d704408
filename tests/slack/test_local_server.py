"""The local Slack server answers the real slack_sdk clients: Web API, response_url and Socket Mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.support.recording_server import RecordingServer
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SlackSide

CSV = b"question,reference,answer\nWhat is 2+2?,4,four\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.fixture
def slack() -> Iterator[FakeSlackServer]:
    """A fresh local Slack server."""
    server = FakeSlackServer().start()
    yield server
    server.stop()


@pytest.fixture
def recording() -> Iterator[RecordingServer]:
    """A foreign host that records what it is sent."""
    server = RecordingServer().start()
    yield server
    server.stop()


def web_client(slack: FakeSlackServer, token: str | None = "default", **kw) -> AsyncWebClient:
    return AsyncWebClient(token=slack.bot_token if token == "default" else token, base_url=slack.api_url, **kw)


async def fetch(url: str, token: str | None = None, **kw) -> tuple[aiohttp.ClientResponse, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers, **kw) as response:
        return response, await response.read()


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


@pytest.mark.parametrize("blocks, said", [
    ([{"type": "section"}], "text or fields attribute must be specified"),
    ([{"type": "nonsense"}], "unknown block type"),
    ([{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}], "cannot exceed 3000 characters"),
    ([{"type": "divider"}] * 51, "no more than 50 items"),
    ([{"type": "table", "rows": [[{"type": "raw_text", "text": "a"}]]}] * 2, "only one table block"),
    ([{"type": "markdown", "text": "x" * 12_001}], "no more than 12000 characters"),
])
async def test_blocks_are_checked_as_slack_checks_them(slack: FakeSlackServer, blocks: list, said: str) -> None:
    client = web_client(slack)
    with pytest.raises(SlackApiError) as refused:
        await client.chat_postMessage(channel="C0GENERAL", text="x", blocks=blocks)
    assert refused.value.response["error"] == "invalid_blocks"
    assert any(said in problem for problem in refused.value.response["errors"])
    assert not slack.messages
    webhook = AsyncWebhookClient(slack.response_url("abc"))
    answer = await webhook.send(text="x", blocks=blocks)
    assert answer.status_code == 400 and answer.body == "invalid_blocks"


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


# -- files shared by people, downloaded with the bot token ----------------------------------------------------


async def test_download_needs_the_bot_token(slack: FakeSlackServer) -> None:
    shared = slack.add_file(CSV, "my data.csv")
    assert shared["id"] == "F00000001" and shared["size"] == len(CSV) and shared["mode"] == "hosted"
    assert (shared["mimetype"], shared["filetype"], shared["pretty_type"]) == ("text/csv", "csv", "CSV")
    prefix = f"{slack.base_url}/files-pri/T0TEST-F00000001"
    assert shared["url_private"] == f"{prefix}/my%20data.csv"
    assert shared["url_private_download"] == f"{prefix}/download/my%20data.csv"

    for url in (shared["url_private_download"], shared["url_private"]):
        response, body = await fetch(url, slack.bot_token)
        assert response.status == 200 and body == CSV
        assert response.headers["Content-Type"] == "text/csv"
        assert response.headers["Content-Length"] == str(len(CSV))
    for token in (None, "xoxb-wrong"):
        response, body = await fetch(shared["url_private_download"], token)
        assert response.status == 200 and response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert body.startswith(b"<!DOCTYPE html>")

    calls = slack.calls_to("file_download")
    assert [c.params for c in calls] == [{"file": "F00000001"}] * 4
    assert calls[0].headers["Authorization"] == f"Bearer {slack.bot_token}" and "Authorization" not in calls[2].headers
    tsv = slack.add_file(b"a\tb\n", "x.tsv", size=10**9)
    assert (tsv["mimetype"], tsv["filetype"], tsv["size"]) == ("text/tab-separated-values", "tsv", 10**9)
    assert slack.add_file(b"x", "notes")["mimetype"] == "text/plain"


async def test_html_and_redirect_modes(slack: FakeSlackServer, recording: RecordingServer) -> None:
    no_scope = slack.add_file(CSV, "a.csv", serve="html")
    response, body = await fetch(no_scope["url_private_download"], slack.bot_token)
    assert response.status == 200 and response.content_type == "text/html" and b"Sign in" in body

    moved = slack.add_file(CSV, "b.csv", serve="redirect", redirect_to=f"{recording.base_url}/elsewhere/b.csv")
    response, body = await fetch(moved["url_private_download"], slack.bot_token, allow_redirects=False)
    assert response.status == 302 and body == b""
    assert response.headers["Location"] == f"{recording.base_url}/elsewhere/b.csv"

    response, body = await fetch(moved["url_private_download"], slack.bot_token)  # aiohttp follows it
    assert response.status == 200 and body == recording.body
    (followed,) = recording.requests
    assert followed.path == "/elsewhere/b.csv" and "Authorization" not in followed.headers  # dropped cross-origin
    with pytest.raises(ValueError):
        slack.add_file(CSV, "c.csv", serve="redirect")


async def test_files_info(slack: FakeSlackServer) -> None:
    shared = slack.add_file(CSV, "a.csv", user="U0ADMIN")
    info = await web_client(slack).files_info(file=shared["id"])
    assert info["file"] == shared
    with pytest.raises(SlackApiError) as missing:
        await web_client(slack).files_info(file="F99999999")
    assert missing.value.response["error"] == "file_not_found"


async def test_file_share_events(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    parent = await client.chat_postMessage(channel="C0GENERAL", text="card")
    shared = slack.add_file(CSV, "a.csv")
    event = slack.file_share_event(shared, text="grade these", thread_ts=parent["ts"])
    assert {k: v for k, v in event.items() if k not in ("ts", "event_ts", "client_msg_id", "blocks")} == {
        "type": "message", "subtype": "file_share", "text": "grade these", "user": "U0USER", "channel": "C0GENERAL",
        "channel_type": "channel", "files": [shared], "upload": True, "display_as_bot": False,
        "thread_ts": parent["ts"], "parent_user_id": "U0BOT"}
    assert event["event_ts"] == event["ts"] and float(event["ts"]) > float(parent["ts"])
    (stored,) = slack.thread("C0GENERAL", parent["ts"])
    assert stored["user"] == "U0USER" and stored["files"] == [shared] and stored["ts"] == event["ts"]

    two = slack.file_share_event([shared, slack.add_file(CSV, "b.csv")], channel="G0PRIVATE")
    assert two["channel_type"] == "group" and len(two["files"]) == 2
    assert "thread_ts" not in two and "parent_user_id" not in two and "blocks" not in two
    companion = slack.file_shared_event(shared, channel="G0PRIVATE")
    assert {k: v for k, v in companion.items() if k != "event_ts"} == {
        "type": "file_shared", "file_id": shared["id"], "user_id": "U0USER", "file": {"id": shared["id"]},
        "channel_id": "G0PRIVATE"}


# -- files uploaded by the bot ---------------------------------------------------------------------------------


async def test_files_upload_v2_into_a_thread(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    parent = await client.chat_postMessage(channel="C0GENERAL", text="card")
    done = await client.files_upload_v2(
        channel="C0GENERAL", thread_ts=parent["ts"], initial_comment="results",
        file_uploads=[{"content": CSV, "filename": "a.csv", "title": "A"},
                      {"content": PNG, "filename": "c.png", "title": "C"}])
    assert [(f["title"], f["name"]) for f in done["files"]] == [("A", "a.csv"), ("C", "c.png")]

    (message,) = slack.thread("C0GENERAL", parent["ts"])
    assert message["text"] == "results" and message["user"] == "U0BOT"
    assert message["files"] == [{"id": f["id"], "name": f["name"], "title": f["title"]} for f in done["files"]]
    uploads = slack.uploads("C0GENERAL", parent["ts"])
    assert [(u["name"], u["title"], u["content"]) for u in uploads] == [("a.csv", "A", CSV), ("c.png", "C", PNG)]
    assert {u["message_ts"] for u in uploads} == {message["ts"]} and slack.uploads("C0GENERAL") == uploads
    assert slack.uploads("C0GENERAL", "1.000000") == [] and slack.uploads("C0OTHER") == []
    assert [c.params["length"] for c in slack.calls_to("file_upload")] == [len(CSV), len(PNG)]

    info = await client.files_info(file=done["files"][1]["id"])
    assert (info["file"]["mimetype"], info["file"]["size"], info["file"]["user"]) == ("image/png", len(PNG), "U0BOT")
    response, body = await fetch(info["file"]["url_private_download"], slack.bot_token)
    assert body == PNG


async def test_upload_as_multipart_and_single_file(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    url = await client.files_getUploadURLExternal(filename="m.csv", length=len(CSV))
    form = aiohttp.FormData()
    form.add_field("file", CSV, filename="m.csv", content_type="text/csv")
    async with aiohttp.ClientSession() as session, session.post(url["upload_url"], data=form) as response:
        assert response.status == 200 and await response.text() == f"OK - {len(CSV)}"
    await client.files_completeUploadExternal(files=[{"id": url["file_id"], "title": "M"}], channel_id="C0OTHER")
    single = await client.files_upload_v2(channel="C0OTHER", content="x,y\n", filename="s.csv")
    assert single["file"]["title"] == "s.csv"
    assert [(u["content"], u["thread_ts"]) for u in slack.uploads("C0OTHER")] == [(CSV, None), (b"x,y\n", None)]


async def test_upload_errors(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    with pytest.raises(SlackApiError) as no_length:
        await client.api_call("files.getUploadURLExternal", params={"filename": "a.csv"})
    assert no_length.value.response["error"] == "invalid_arguments"

    url = await client.files_getUploadURLExternal(filename="a.csv", length=len(CSV))
    with pytest.raises(SlackApiError) as not_uploaded:
        await client.files_completeUploadExternal(files=[{"id": url["file_id"]}], channel_id="C0GENERAL")
    assert not_uploaded.value.response["error"] == "file_not_found"
    with pytest.raises(SlackApiError) as unknown:
        await client.files_completeUploadExternal(files=[{"id": "F99999999"}], channel_id="C0GENERAL")
    assert unknown.value.response["error"] == "file_not_found"

    with pytest.raises(SlackApiError) as outside:
        await client.files_upload_v2(channel="C0NOBOT", content=CSV, filename="a.csv")
    assert outside.value.response["error"] == "not_in_channel"
    assert slack.uploads("C0NOBOT") == [] and len(slack.calls_to("file_upload")) == 1


# -- threads ---------------------------------------------------------------------------------------------------


async def test_conversations_replies_and_metadata(slack: FakeSlackServer) -> None:
    client = web_client(slack)
    meta = {"event_type": "judgebot_run", "event_payload": {"run_id": "r1"}}
    parent = await client.chat_postMessage(channel="C0GENERAL", text="card", metadata=meta)
    await client.chat_postMessage(channel="C0GENERAL", text="first", thread_ts=parent["ts"])
    event = slack.file_share_event(slack.add_file(CSV, "a.csv"), thread_ts=parent["ts"])
    newer = {"event_type": "judgebot_run", "event_payload": {"run_id": "r1", "done": True}}
    await client.chat_update(channel="C0GENERAL", ts=parent["ts"], text="graded", metadata=newer)

    plain = await client.conversations_replies(channel="C0GENERAL", ts=parent["ts"])
    assert [(m["user"], m["text"]) for m in plain["messages"]] == [("U0BOT", "graded"), ("U0BOT", "first"),
                                                                   ("U0USER", "")]
    assert all("metadata" not in m for m in plain["messages"]) and plain["has_more"] is False
    head = plain["messages"][0]
    assert head["reply_count"] == 2 and head["reply_users"] == ["U0BOT", "U0USER"] and head["thread_ts"] == parent["ts"]
    assert plain["messages"][2]["files"][0]["name"] == "a.csv" and plain["messages"][2]["ts"] == event["ts"]

    full = await client.conversations_replies(channel="C0GENERAL", ts=parent["ts"], include_all_metadata=True)
    assert full["messages"][0]["metadata"] == newer and "metadata" not in full["messages"][1]

    first_page = await client.conversations_replies(channel="C0GENERAL", ts=parent["ts"], limit=2)
    assert len(first_page["messages"]) == 2 and first_page["has_more"] is True
    cursor = first_page["response_metadata"]["next_cursor"]
    rest = await client.conversations_replies(channel="C0GENERAL", ts=parent["ts"], limit=2, cursor=cursor)
    assert [m["ts"] for m in rest["messages"]] == [event["ts"]] and rest["has_more"] is False

    failures = (("C0GENERAL", "1.000000", "thread_not_found"), ("C0MISSING", parent["ts"], "channel_not_found"),
                ("C0NOBOT", parent["ts"], "not_in_channel"))
    for channel, ts, error in failures:
        with pytest.raises(SlackApiError) as failed:
            await client.conversations_replies(channel=channel, ts=ts)
        assert failed.value.response["error"] == error


# -- Slack's side: retried event deliveries, and the foreign host ----------------------------------------------


async def test_recording_server_records_requests(recording: RecordingServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{recording.base_url}/a/b.csv", headers={"X-Probe": "1"}) as response:
            assert response.status == 200 and response.content_type == "text/csv"
            assert await response.read() == b"question,reference,answer\nq,r,a\n"
        async with session.post(f"{recording.base_url}/up", data=b"body") as response:
            assert response.status == 200
    get, post = recording.requests
    assert (get.method, get.path, get.headers["X-Probe"]) == ("GET", "/a/b.csv", "1")
    assert (post.method, post.path, post.body) == ("POST", "/up", b"body")


async def test_event_retries_over_http(slack: FakeSlackServer, recording: RecordingServer) -> None:
    side = SlackSide(slack, url=f"{recording.base_url}/slack/events", secret="s3cret")
    event = {"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"}
    await side.event(event, event_id="Ev0FIRST")
    await side.event(event, event_id="Ev0FIRST", retry_num=1)
    await side.event(event)
    first, retry, other = recording.requests
    verifier = SignatureVerifier("s3cret")
    for sent in (first, retry, other):
        assert verifier.is_valid(sent.body, sent.headers["X-Slack-Request-Timestamp"],
                                 sent.headers["X-Slack-Signature"])
    assert json.loads(first.body)["event_id"] == json.loads(retry.body)["event_id"] == "Ev0FIRST"
    assert json.loads(other.body)["event_id"] != "Ev0FIRST"
    assert "X-Slack-Retry-Num" not in first.headers
    assert (retry.headers["X-Slack-Retry-Num"], retry.headers["X-Slack-Retry-Reason"]) == ("1", "http_timeout")


async def test_event_retries_over_socket_mode(slack: FakeSlackServer) -> None:
    client = SocketModeClient(app_token=slack.app_token, web_client=AsyncWebClient(base_url=slack.api_url))
    seen: list[SocketModeRequest] = []

    async def ack(client: SocketModeClient, req: SocketModeRequest) -> None:
        seen.append(req)
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))

    client.socket_mode_request_listeners.append(ack)
    try:
        await client.connect()
        await asyncio.to_thread(slack.connected.wait, 5)
        side = SlackSide(slack)
        payload = side.event_payload({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME"})
        await side.send_event(payload)
        await side.send_event(payload, retry_num=2, retry_reason="http_error")
        assert [(r.retry_attempt, r.retry_reason) for r in seen] == [(0, ""), (2, "http_error")]
        assert seen[0].payload == seen[1].payload == payload
    finally:
        await client.close()
