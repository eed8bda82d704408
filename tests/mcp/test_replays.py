"""A request Slack signed for `judgebot mcp --http`, sent again within its five minutes, is refused by every replica
on the same database: a `grade` runs and bills once. Over HTTP, against two servers, the tests' Slack and judge."""

from __future__ import annotations

import json
import time

import httpx2
import pytest
import sqlalchemy as sa
from mcp import Client
from slack_sdk.signature import SignatureVerifier

from tests.support.cli import eth_responder
from tests.support.mcp_process import as_slackbot, mcp_server
from tests.support.slack_side import SIGNING_SECRET

TRIPLE = {"question": "How do I register for exams?", "reference": "In myStudies, during the registration period.",
          "answer": "Register in myStudies before the deadline."}
BOB = {"slack": {"user_id": "U0USER", "team_id": "T0TEST"}}


def signed(body: str) -> dict[str, str]:
    """Headers as Slackbot sends them: Slack's signature over `body`, now."""
    when = str(int(time.time()))
    return {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "X-Slack-Request-Timestamp": when,
            "X-Slack-Signature": SignatureVerifier(SIGNING_SECRET).generate_signature(timestamp=when, body=body)}


def grade_call(request_id: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "grade", "arguments": {**TRIPLE, "rubric": "eth"}, "_meta": BOB}})


@pytest.mark.slow
async def test_a_replayed_signed_grade_is_refused_by_every_replica_and_judged_once(
        tmp_path, db_url, judge_server, slack_server):
    judge_server.responder = eth_responder
    env = {"DATABASE_URL": db_url, "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_BOT_TOKEN": slack_server.bot_token,
           "SLACK_API_URL": slack_server.api_url}
    secrets = (SIGNING_SECRET, slack_server.bot_token)
    with mcp_server(tmp_path, judge_server, secrets=secrets, **env) as one, \
            mcp_server(tmp_path, judge_server, secrets=secrets, **env) as other:
        body = grade_call(1)
        headers = signed(body)
        async with httpx2.AsyncClient(timeout=60) as attacker:
            first = await attacker.post(one, content=body, headers=headers)
            assert first.status_code == 200, first.text
            assert '"status":"scored"' in first.text.replace(" ", "")
            for replica in (one, other):  # the same bytes, the same signature, within the five minutes
                again = await attacker.post(replica, content=body, headers=headers)
                assert again.status_code == 401, again.text
                said = again.json()["error_description"]
                assert "took it already" in said and "send a new one" in said and "Traceback" not in said
            # Slackbot's next request is signed anew (a new timestamp): it is taken
            fresh = await attacker.post(other, content=grade_call(2), headers=signed(grade_call(2)))
            assert fresh.status_code == 200, fresh.text
            # Discovery is not remembered: the same tools/list from two of Slackbot's conversations in one second
            hello = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
            hello_headers = signed(hello)
            for replica in (one, other, one):
                assert (await attacker.post(replica, content=hello, headers=hello_headers)).status_code == 200
        async with Client(as_slackbot(one, SIGNING_SECRET)) as slackbot:  # the SDK's client, a request after another
            for _ in range(2):
                assert not (await slackbot.call_tool("stats", {"days": 0}, meta=BOB)).is_error

    assert len(judge_server.bodies()) == 1  # the second grade is the cache's answer to the same triple
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            runs = conn.execute(sa.text("SELECT count(*) FROM run WHERE source = 'mcp'")).scalar()
            kept = conn.execute(sa.text("SELECT count(*) FROM slack_delivery WHERE kind = 'mcp'")).scalar()
    finally:
        engine.dispose()
    assert runs == 2  # the first grade and Slackbot's fresh one; no run of the replays
    assert kept == 4  # the two grades and the two stats calls; the discovery requests are not kept
