"""Slackbot calling `judgebot mcp --http` with Slack identity auth, as Slack does it: each request signed with the app's
signing secret, the person in `params._meta.slack`; through the `mcp` SDK's own client, against the tests' Slack and
judge servers, with the history read back."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from slack_sdk.signature import SignatureVerifier

from bot.slack.server import start_bot
from bot.store import Store, set_cost_limits
from tests.support.cli import eth_responder
from tests.support.mcp_process import as_slackbot, mcp_server, with_token
from tests.support.oauth_install import install, oauth_settings
from tests.support.slack_side import SIGNING_SECRET

TRIPLE = {"question": "How do I register for exams?", "reference": "In myStudies, during the registration period.",
          "answer": "Register in myStudies before the deadline."}
TOKEN = "mcp-test-token-1234"
BOB = {"slack": {"user_id": "U0USER", "team_id": "T0TEST"}}  # in C0GENERAL and G0PRIVATE, not in C0OTHER
ADA = {"slack": {"user_id": "U0ADMIN", "team_id": "T0TEST"}}


def saved(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as history:
        return history.execute("SELECT r.team_id, j.channel_id, r.user_id, r.source, j.status FROM judgment j "
                               "JOIN run r ON r.id = j.run_id ORDER BY j.id").fetchall()


def figures(result) -> list[tuple]:
    assert not result.is_error, result.content
    return [(row["model"], row["rubric"], row["scored_cases"]) for row in result.structured_content["result"]]


def refusal(result) -> str:
    assert result.is_error
    text = result.content[0].text
    assert "Traceback" not in text
    return text


@pytest.fixture
def slack_mcp(tmp_path, judge_server, slack_server):
    """`judgebot mcp --http` open to Slackbot (SLACK_SIGNING_SECRET, the bot token) and to an agent with MCP_TOKEN."""
    with mcp_server(tmp_path, judge_server, secrets=(TOKEN, SIGNING_SECRET, slack_server.bot_token),
                    SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_BOT_TOKEN=slack_server.bot_token,
                    SLACK_API_URL=slack_server.api_url, MCP_TOKEN=TOKEN, MCP_CHANNELS="C0OTHER") as url:
        yield url


@pytest.mark.slow
async def test_slackbot_grades_for_a_person_into_their_conversation_and_reads_only_their_channels(
        tmp_path, judge_server, slack_server, slack_mcp):
    judge_server.responder = eth_responder
    async with Client(as_slackbot(slack_mcp, SIGNING_SECRET)) as slackbot:
        tools = (await slackbot.list_tools()).tools  # discovery names nobody
        read_only = {tool.name: bool(tool.annotations and tool.annotations.read_only_hint) for tool in tools}
        assert read_only == {"grade": False, "rubrics": True, "stats": True, "calibration": True}

        graded = await slackbot.call_tool("grade", {**TRIPLE, "rubric": "eth", "model": "bot-v2"}, meta=BOB)
        assert not graded.is_error, graded.content
        assert graded.structured_content["tag"] == "Correct"
        # with no channel named: the person's own conversation with judgebot, where the grade went
        assert figures(await slackbot.call_tool("stats", {"days": 0}, meta=BOB)) == [("bot-v2", "eth", 1)]
        assert figures(await slackbot.call_tool("stats", {"channel": "D0USER"}, meta=BOB)) == [("bot-v2", "eth", 1)]
        for channel in ("C0GENERAL", "G0PRIVATE"):  # a member, of channels where nothing was judged
            nothing = refusal(await slackbot.call_tool("stats", {"channel": channel}, meta=BOB))
            assert f"no judgments in channel '{channel}'" in nothing and "terminal" not in nothing
        calibration = await slackbot.call_tool("calibration", {"rubric": "eth"}, meta=BOB)
        assert not calibration.is_error and calibration.structured_content["n"] == 0

        not_in = refusal(await slackbot.call_tool("stats", {"channel": "C0OTHER"}, meta=BOB))
        assert "may not read channel 'C0OTHER'" in not_in and "conversations you are in" in not_in
        calibration = refusal(await slackbot.call_tool("calibration", {"rubric": "eth", "channel": "C0OTHER"}, meta=BOB))
        assert "may not read channel 'C0OTHER'" in calibration
        assert "terminal" in refusal(await slackbot.call_tool("stats", {"channel": "terminal"}, meta=BOB))
        # another person reads neither Bob's conversation nor, by default, anything but their own
        assert "may not read channel 'D0USER'" in refusal(await slackbot.call_tool("stats", {"channel": "D0USER"},
                                                                                  meta=ADA))
        assert figures(await slackbot.call_tool("stats", {"days": 0}, meta=ADA)) == []
        assert "no judgments in channel 'C0OTHER'" in refusal(await slackbot.call_tool("stats", {"channel": "C0OTHER"},
                                                                                       meta=ADA))

    assert saved(tmp_path / "h.db") == [("T0TEST", "D0USER", "U0USER", "mcp", "scored")]
    asked = slack_server.calls_to("users.conversations")
    assert {call.params["user"] for call in asked} == {"U0USER", "U0ADMIN"}
    assert len(asked) == 2  # what Slack said of a person is kept a minute
    assert {call.token for call in asked} == {slack_server.bot_token}
    assert len(judge_server.bodies()) == 1


async def test_a_person_in_many_channels_reads_each_of_them(slack_server, slack_mcp):
    many = [f"C1{n:04d}" for n in range(450)]  # more than one page of users.conversations
    with slack_server._lock:
        for channel in many:
            slack_server.channels[channel] = slack_server._channel(channel, channel.lower(), is_private=False,
                                                                   is_member=True)
            slack_server.members[channel] = {"U0USER"}
    async with Client(as_slackbot(slack_mcp, SIGNING_SECRET)) as slackbot:
        for channel in (many[0], many[249], many[-1]):
            assert "no judgments in channel" in refusal(await slackbot.call_tool("stats", {"channel": channel}, meta=BOB))
    assert len(slack_server.calls_to("users.conversations")) == 3  # three pages, asked once


@pytest.mark.slow
async def test_only_slacks_signature_lets_slackbot_in_and_only_the_signed_person_counts(
        tmp_path, judge_server, slack_server, slack_mcp):
    judge_server.responder = eth_responder
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    def signed_headers(body: str, *, age: int = 0, secret: str = SIGNING_SECRET) -> dict[str, str]:
        stamp = str(int(time.time()) - age)
        return {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "X-Slack-Request-Timestamp": stamp,
                "X-Slack-Signature": SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)}

    async with httpx2.AsyncClient(timeout=30) as plain:
        for headers in (signed_headers(listing, secret="another-secret"), signed_headers(listing, age=600),
                        {"Content-Type": "application/json", "X-Slack-Signature": "v0=00",
                         "X-Slack-Request-Timestamp": str(int(time.time()))},
                        {"Content-Type": "application/json"}):
            answer = await plain.post(slack_mcp, content=listing, headers=headers)
            assert answer.status_code == 401, headers
        # signed, then changed on the way: what Slack signed is not what arrives
        tampered = json.dumps({**json.loads(listing), "id": 2})
        assert (await plain.post(slack_mcp, content=tampered, headers=signed_headers(listing))).status_code == 401
        fine = await plain.post(slack_mcp, content=listing, headers=signed_headers(listing))
        assert fine.status_code == 200, fine.text
        # a signature that is not ASCII, a body far too large that is stale anyway, a GET for a stream: refused
        # without a traceback (the server's output is checked for one when it stops)
        odd = {**signed_headers(listing), "X-Slack-Signature": "v0=\u00ff\u00fe".encode("latin-1")}
        assert (await plain.post(slack_mcp, content=listing, headers=odd)).status_code == 401
        huge = b"x" * (5 * 1024 * 1024)
        assert (await plain.post(slack_mcp, content=huge, headers=signed_headers("", age=600))).status_code == 401
        assert (await plain.get(slack_mcp, headers=signed_headers(""))).status_code == 405
        both = {**signed_headers(listing), "Authorization": f"Bearer {TOKEN}"}  # the token's agent, signed or not
        assert (await plain.post(slack_mcp, content=listing, headers=both)).status_code == 200

    async with Client(as_slackbot(slack_mcp, SIGNING_SECRET)) as slackbot:
        assert not (await slackbot.call_tool("rubrics", {})).is_error  # nothing of anyone's: no person needed
        nobody = refusal(await slackbot.call_tool("grade", {**TRIPLE, "rubric": "eth"}))
        assert "did not say who is asking" in nobody and "slack_identity_auth" in nobody
        no_team = {"slack": {"user_id": "U0USER", "team_id": None, "enterprise_id": "E0ORG"}}
        assert "which workspace" in refusal(await slackbot.call_tool("stats", {}, meta=no_team))
        elsewhere = {"slack": {"user_id": "U0USER", "team_id": "T0ELSEWHERE"}}
        assert "not installed in your workspace" in refusal(await slackbot.call_tool("stats", {}, meta=elsewhere))
        forged = {"slack": {"user_id": "U0USER<script>", "team_id": "T0TEST"}}  # not a Slack id: nobody
        assert "did not say who is asking" in refusal(await slackbot.call_tool("stats", {}, meta=forged))

    # An agent with the token cannot pass for a Slack person by writing one into its request
    async with Client(with_token(slack_mcp, TOKEN)) as agent:
        not_listed = refusal(await agent.call_tool("stats", {"channel": "C0GENERAL"}, meta=ADA))
        assert "MCP_CHANNELS lists the channels a token may read" in not_listed  # the token's rule, not Ada's
        graded = await agent.call_tool("grade", {**TRIPLE, "rubric": "eth"}, meta=BOB)
        assert not graded.is_error, graded.content
    assert saved(tmp_path / "h.db") == [(None, None, "mcp:token", "mcp", "scored")]
    assert len(judge_server.bodies()) == 1


@pytest.mark.slow
async def test_a_persons_grades_count_against_their_conversations_budget(tmp_path, judge_server, slack_server):
    judge_server.responder = eth_responder
    # gpt-4o-mini has a known price: a triple costs more than a threshold of a millionth of a dollar
    with mcp_server(tmp_path, judge_server, SLACK_SIGNING_SECRET=SIGNING_SECRET, JUDGE_MODEL="gpt-4o-mini",
                    SLACK_BOT_TOKEN=slack_server.bot_token, SLACK_API_URL=slack_server.api_url) as url:
        store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")  # the history the server made
        try:  # as `/judge budget` in Bob's conversation with judgebot would set it
            set_cost_limits(store, team_id="T0TEST", channel_id="D0USER", user_id="U0USER", confirm_above=0.000001)
        finally:
            store.engine.dispose()
        async with Client(as_slackbot(url, SIGNING_SECRET)) as slackbot:
            over = refusal(await slackbot.call_tool("grade", {**TRIPLE, "rubric": "eth"}, meta=BOB))
            assert "confirmation threshold" in over and "cannot be asked to agree" in over
            graded = await slackbot.call_tool("grade", {**TRIPLE, "rubric": "eth"}, meta=ADA)  # Ada's has none
            assert not graded.is_error, graded.content
    # Bob's triple is kept, unjudged, in a cancelled run that nothing resumes or bills
    assert saved(tmp_path / "h.db") == [("T0TEST", "D0USER", "U0USER", "mcp", "pending"),
                                        ("T0TEST", "D0ADMIN", "U0ADMIN", "mcp", "scored")]
    with sqlite3.connect(tmp_path / "h.db") as history:
        assert history.execute("SELECT status FROM run WHERE user_id = 'U0USER'").fetchall() == [("cancelled",)]
    assert len(judge_server.bodies()) == 1


@pytest.mark.slow
async def test_with_the_oauth_install_each_workspace_is_asked_with_its_own_token(
        tmp_path, judge_server, slack_server, bot_settings):
    judge_server.responder = eth_responder
    settings = oauth_settings(bot_settings, slack_server)
    running = await start_bot(settings, host="127.0.0.1")
    try:
        assert (await install(running, slack_server, "T0SECOND")).status == 200
    finally:
        await running.stop()
    [token] = slack_server.tokens_of("T0SECOND")
    with mcp_server(tmp_path, judge_server, secrets=(SIGNING_SECRET, token), JUDGEBOT_DB=str(settings.judgebot_db),
                    SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_CLIENT_ID=slack_server.client_id,
                    SLACK_CLIENT_SECRET=slack_server.client_secret, SLACK_BOT_TOKEN=None,
                    SLACK_API_URL=slack_server.api_url) as url:
        async with Client(as_slackbot(url, SIGNING_SECRET)) as slackbot:
            second = {"slack": {"user_id": "U0USER", "team_id": "T0SECOND"}}
            graded = await slackbot.call_tool("grade", {**TRIPLE, "rubric": "eth"}, meta=second)
            assert not graded.is_error, graded.content
            assert figures(await slackbot.call_tool("stats", {"days": 0}, meta=second)) == [(None, "eth", 1)]
            # the workspace of the tests' one token never installed the app through OAuth
            assert "not installed" in refusal(await slackbot.call_tool("stats", {}, meta=BOB))
    assert {call.token for call in slack_server.calls_to("users.conversations")} == {token}
    assert saved(settings.judgebot_db) == [("T0SECOND", "D0USER", "U0USER", "mcp", "scored")]


def test_the_server_needs_a_door_and_slack_identity_needs_a_bot_token(tmp_path, judge_server):
    from tests.support.cli import judgebot
    from tests.support.mcp_process import free_port

    code, out = judgebot(tmp_path, "mcp", "--http", "--port", str(free_port()), server=judge_server,
                         SLACK_SIGNING_SECRET="a-secret", SLACK_BOT_TOKEN=None, SLACK_CLIENT_ID=None, MCP_TOKEN=None)
    assert code != 0 and "SLACK_SIGNING_SECRET is set" in out and "SLACK_BOT_TOKEN is not set" in out
