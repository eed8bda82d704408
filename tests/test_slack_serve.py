"""Starting the bot: Socket Mode end to end, `judgebot serve` as a process, token problems, and secrets in logs."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlencode

import aiohttp
import pytest

from bot.config import SetupError, Settings
from bot.slack.cards import AGREE
from bot.slack.server import start_bot
from bot.store import Store
from tests.conftest import SIGNING_SECRET
from tests.replies import eth_reply
from tests.slack_side import SlackSide
from tests.test_slack_bot import INLINE, buttons, card_of


@pytest.fixture
def socket_settings(bot_settings: Settings, slack_server) -> Settings:
    """The same bot in Socket Mode: an app-level token and no signing secret."""
    return bot_settings.model_copy(update={"slack_app_token": bot_settings.slack_bot_token.__class__(
        slack_server.app_token), "slack_signing_secret": None})


async def test_socket_mode_end_to_end(socket_settings, slack_server, judge_server):
    running = await start_bot(socket_settings)
    try:
        assert running.mode == "socket"
        await asyncio.to_thread(slack_server.connected.wait, 5)
        slack = SlackSide(slack_server)
        helped = await slack.command("help")
        assert "/judge stats" in json.dumps(helped.body)
        judge_server.enqueue(eth_reply("Correct"))
        await slack.command(INLINE)
        card = await card_of(slack_server)
        assert "Correct · correctness 2/2" in json.dumps(card["blocks"], ensure_ascii=False)
        await slack.click(AGREE, buttons(card)[AGREE], channel="C0GENERAL", message_ts=card["ts"])
        await slack_server.await_for("response_url", lambda c: "Thanks: you agree" in c.params.get("text", ""))
        await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
        await slack_server.await_for("views.publish")
        opened = slack_server.calls_to("apps.connections.open")
        assert opened and all(c.headers["Authorization"] == f"Bearer {slack_server.app_token}" for c in opened)
    finally:
        await running.stop()
    assert Store.open(socket_settings.db_url).feedback_tally(int(buttons(card)[AGREE])) == (1, 0)


async def test_socket_mode_reconnects_after_a_dropped_connection(socket_settings, slack_server, judge_server):
    running = await start_bot(socket_settings)
    try:
        await asyncio.to_thread(slack_server.connected.wait, 5)
        slack_server.disconnect_sockets()
        await asyncio.to_thread(slack_server.connected.wait, 10)
        helped = await SlackSide(slack_server).command("rubrics")
        assert "eth" in json.dumps(helped.body)
    finally:
        await running.stop()


@pytest.mark.parametrize("change, words", [
    ({"slack_bot_token": None}, "SLACK_BOT_TOKEN is not set"),
    ({"slack_bot_token": "xoxp-user-token"}, "starts with xoxb-"),
    ({"slack_bot_token": "xoxb-revoked"}, "does not accept SLACK_BOT_TOKEN (invalid_auth)"),
    ({"slack_app_token": "xoxb-not-an-app-token"}, "starts with xapp-"),
    ({"slack_app_token": "xapp-1-revoked"}, "does not accept SLACK_APP_TOKEN (invalid_auth)"),
    ({"slack_signing_secret": None}, "Neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET"),
])
async def test_token_problems_are_named(bot_settings, change, words):
    settings = Settings(**{**bot_settings.model_dump(), **{k: v for k, v in change.items()}}, _env_file=None)
    with pytest.raises(SetupError) as raised:
        await start_bot(settings)
    assert words in str(raised.value)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_env(bot_settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "JUDGE"))}
    return {**env, "SLACK_BOT_TOKEN": bot_settings.slack_bot_token.get_secret_value(),
            "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": bot_settings.slack_api_url,
            "OPENAI_BASE_URL": bot_settings.openai_base_url, "JUDGE_MODEL": "judge-test",
            "JUDGEBOT_DB": str(bot_settings.judgebot_db), **extra}


def test_serve_exits_2_with_a_paragraph_on_a_bad_token(bot_settings, tmp_path):
    for token, words in (("", "SLACK_BOT_TOKEN is not set"), ("xoxb-revoked", "does not accept SLACK_BOT_TOKEN")):
        done = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                              env=serve_env(bot_settings, SLACK_BOT_TOKEN=token), timeout=60)
        assert done.returncode == 2, done.stderr
        assert words in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


def test_serve_in_http_mode_answers_and_stops_on_sigterm(bot_settings, slack_server, judge_server, tmp_path):
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=serve_env(bot_settings, PORT=str(port)))
    try:
        url = f"http://127.0.0.1:{port}"

        async def talk() -> str:
            async with aiohttp.ClientSession() as session:
                for _ in range(300):
                    try:
                        async with session.get(f"{url}/health") as health:
                            if health.status == 200:
                                break
                    except aiohttp.ClientError:
                        await asyncio.sleep(0.05)
                slack = SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET)
                answer = await slack.post(urlencode(slack.command_payload("help")),
                                          "application/x-www-form-urlencoded")
                assert answer.status == 200
                return answer.text()

        assert "/judge stats" in asyncio.run(talk())
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"HTTP mode on port {port}" in out and "judgebot stopped." in out


async def test_tokens_and_secrets_never_reach_the_logs(bot_settings, slack_server, judge_server, caplog):
    caplog.set_level(logging.DEBUG)
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        judge_server.enqueue(eth_reply("Correct"))
        await slack.command(INLINE)
        await card_of(slack_server)
        await slack.post("token=x", "application/x-www-form-urlencoded", secret="forged")  # a refused request
    finally:
        await running.stop()
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "chat.update" in logged or "chat_update" in logged or "Sending a request" in logged  # DEBUG was on
    for secret in (slack_server.bot_token, SIGNING_SECRET, "test-key"):
        assert secret not in logged


def test_manifest_declares_what_the_app_listens_to():
    import yaml

    from bot.slack.app import COMMAND, EVENTS
    from pathlib import Path

    manifest = yaml.safe_load((Path(__file__).parent.parent / "manifest.yml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [COMMAND]
    assert manifest["settings"]["socket_mode_enabled"] is True and manifest["settings"]["interactivity"]["is_enabled"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {"commands", "chat:write"}
    assert set(EVENTS) == set(manifest["settings"]["event_subscriptions"]["bot_events"])
