"""Starting the bot: Socket Mode end to end, `judgebot serve` as a process, token problems, and secrets in logs."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import urlencode

import pytest

from bot.config import Settings
from bot.errors import SetupError
from bot.slack.server import start_bot
from bot.slack.views.card import CORRECT
from bot.store import Store, feedback_tally, first_judgment, get_run, iter_judgments, recent_runs, update_run
from tests.support import forkserver
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.serve_process import free_port, serve_env, wait_healthy
from tests.support.slack_messages import INLINE, buttons, card_of
from tests.support.slack_side import SIGNING_SECRET, SlackSide


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
        await slack.vote(card, agree=True)
        await slack_server.await_for("response_url", lambda c: "Thanks: you agree" in c.params.get("text", ""))
        await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
        await slack_server.await_for("views.publish")
        opened = slack_server.calls_to("apps.connections.open")
        assert opened and all(c.headers["Authorization"] == f"Bearer {slack_server.app_token}" for c in opened)
    finally:
        await running.stop()
    assert feedback_tally(Store.open(socket_settings.db_url), judgment_id=int(buttons(card)[CORRECT])) == (1, 0)


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


@pytest.mark.slow
def test_serve_exits_2_with_a_paragraph_on_a_bad_token(bot_settings, tmp_path):
    for token, words in (("", "SLACK_BOT_TOKEN is not set"), ("xoxb-revoked", "does not accept SLACK_BOT_TOKEN")):
        code, _, stderr = forkserver.run(["serve"], cwd=tmp_path, env=serve_env(bot_settings, SLACK_BOT_TOKEN=token),
                                         timeout=60)
        assert code == 2, stderr
        assert words in " ".join(stderr.split()) and "Traceback" not in stderr


def test_serve_in_http_mode_answers_and_stops_on_sigterm(bot_settings, slack_server, judge_server, tmp_path):
    port = free_port()
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    env = serve_env(bot_settings, PORT=str(port), DIGEST_ADMINS="U0USER")  # the former name of JUDGEBOT_ADMINS
    process = forkserver.start(["serve"], cwd=tmp_path, env=env, out=stdout, err=stderr)
    try:
        url = f"http://127.0.0.1:{port}"

        async def talk() -> str:
            await wait_healthy(url)
            slack = SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET)
            answer = await slack.post(urlencode(slack.command_payload("help")), "application/x-www-form-urlencoded")
            assert answer.status == 200
            return answer.text()

        assert "/judge stats" in asyncio.run(talk())
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    out, err = stdout.read_text(), stderr.read_text()
    assert process.returncode == 0, err
    assert f"HTTP mode on port {port}" in out and "judgebot stopped." in out
    renamed = ("DIGEST_ADMINS is now called JUDGEBOT_ADMINS (the people who may change a channel's settings, not only "
               "its digest): rename it in the environment or .env; it is still read for now.")
    shown = " ".join(out.split())  # as wide as the terminal
    assert shown.count(renamed) == 1 and f"warning: {renamed}" in shown, out  # said once in serve's output
    assert err.count(renamed) == 1 and f"WARNING bot.slack.server: {renamed}" in err, err  # and once in the log


@pytest.mark.slow
def test_serve_stopped_leaves_its_verdicts_in_the_history_file_alone(bot_settings, slack_server, judge_server,
                                                                      tmp_path):
    """A real `judgebot serve` process (not a fork that skips the interpreter's exit) judges a triple and is stopped:
    its connections are closed at exit, once the threads that used them are done, so SQLite folds its write-ahead log
    back into the file and a copy of the file alone holds the verdict."""
    judge_server.responder = lambda body: eth_reply("Correct")
    port = free_port()
    db = Path(bot_settings.judgebot_db)
    process = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=tmp_path,
                               env=serve_env(bot_settings, PORT=str(port)), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"

        async def judge_one() -> None:
            await wait_healthy(url)
            slack = SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET)
            answer = await slack.post(urlencode(slack.command_payload("eth Where? || Here. || Here.")),
                                      "application/x-www-form-urlencoded")
            assert answer.status == 200

        asyncio.run(judge_one())
        deadline = time.monotonic() + 30
        while scored(db) < 1:
            assert time.monotonic() < deadline, "the verdict was never saved"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    assert process.returncode == 0, out
    assert not db.with_name(db.name + "-wal").exists()
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    assert scored(copy) == 1


def scored(path: Path) -> int:
    """The scored judgments a history file holds, read with a connection of its own."""
    with closing(sqlite3.connect(path, timeout=10)) as conn:
        try:
            return conn.execute("SELECT count(*) FROM judgment WHERE status = 'scored'").fetchone()[0]
        except sqlite3.OperationalError:  # not created yet
            return 0


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
    from pathlib import Path

    import yaml

    from bot.slack.app import COMMAND, EVENTS

    manifest = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [COMMAND]
    assert manifest["settings"]["socket_mode_enabled"] is True and manifest["settings"]["interactivity"]["is_enabled"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    shown = manifest["display_information"]  # Slack's own bounds for these fields
    assert len(shown["name"]) <= 35 and len(shown["description"]) <= 140
    assert 174 <= len(shown["long_description"]) <= 4000
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {"commands", "chat:write", "files:read", "files:write",
                                                             "channels:history", "groups:history", "users:read",
                                                             "usergroups:read", "im:write", "im:history",
                                                             "assistant:write", "channels:read", "groups:read",
                                                             "mcp:connect"}
    assert manifest["features"]["agent_view"]["suggested_prompts"]  # the Messages tab is an AI app's
    assert manifest["features"]["app_home"]["messages_tab_read_only_enabled"] is False  # people write there
    assert set(EVENTS) == set(manifest["settings"]["event_subscriptions"]["bot_events"])


def test_the_manifest_usage_hint_names_every_subcommand():
    from pathlib import Path

    import yaml

    manifest = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())
    [command] = manifest["features"]["slash_commands"]
    hint = command["usage_hint"]
    assert len(hint) <= 1000  # Slack's bound for a usage hint
    for subcommand in ("help", "history", "stats", "default", "digest", "review", "reviewers",
                       "question || reference || answer"):
        assert subcommand in hint, subcommand


async def test_a_stop_mid_judgment_marks_the_card_and_the_next_start_completes_it(bot_settings, slack_server,
                                                                                    judge_server):
    judge_server.enqueue(Reply(content=eth_reply("Correct").content, delay=3.0), eth_reply("Generic"))
    running = await start_bot(bot_settings, host="127.0.0.1")
    slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
    await slack.command(INLINE)
    placeholder = (await slack_server.await_for("chat.postMessage"))[0]
    while not judge_server.bodies():
        await asyncio.sleep(0.01)
    await running.stop(drain=0.1)
    [(_, ts)] = [key for key in slack_server.messages if key[0] == placeholder.params["channel"]]
    assert "stopped before the judge answered" in slack_server.messages[("C0GENERAL", ts)]["text"]
    store = Store.open(bot_settings.db_url)
    [run] = recent_runs(store)
    assert (run.status, run.owner) == ("paused", None) and first_judgment(store, run.id).message_ts == ts

    again = await start_bot(bot_settings, host="127.0.0.1")
    try:
        card = await card_of(slack_server)
        assert card["ts"] == ts and "Generic" in json.dumps(card["blocks"])
    finally:
        await again.stop()
    rows = list(iter_judgments(store, run.id))
    assert [r.status for r in rows] == ["scored"] and get_run(store, run.id).status == "done"


@pytest.mark.slow
def test_kill_9_mid_judgment_then_restart_completes_the_same_card(bot_settings, slack_server, judge_server,
                                                                  tmp_path):
    judge_server.enqueue(Reply(content=eth_reply("Correct").content, delay=10.0), eth_reply("Refusal"))
    port = free_port()
    env = serve_env(bot_settings, PORT=str(port))
    first = forkserver.start(["serve"], cwd=tmp_path, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        asyncio.run(wait_healthy(url))
        slack = SlackSide(slack_server, url=f"{url}/slack/events", secret=SIGNING_SECRET)
        assert asyncio.run(slack.command(INLINE)).status == 200
        placeholder = slack_server.wait_for("chat.postMessage")[0]
        deadline = time.monotonic() + 10
        while not judge_server.bodies():  # the judge has the request: the row is pending in the history
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        first.kill()
        first.wait(10)
    second = forkserver.start(["serve"], cwd=tmp_path, env=env)
    try:
        update = slack_server.wait_for("chat.update", lambda c: "Refusal" in json.dumps(c.params.get("blocks")),
                                       timeout=20)[0]
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(30)
    ts = update.params["ts"]
    assert slack_server.messages[("C0GENERAL", ts)]["text"].startswith("ETH institutional knowledge audit: Refusal")
    assert placeholder.params["channel"] == "C0GENERAL" and len(slack_server.calls_to("chat.postMessage")) == 1
    store = Store.open(bot_settings.db_url)
    [run] = recent_runs(store)
    assert [(r.status, r.tag, r.message_ts) for r in iter_judgments(store, run.id)] == [("scored", "Refusal", ts)]


async def test_help_and_home_with_many_rubrics_stay_within_slacks_limits(bot_settings, slack_server, tmp_path,
                                                                         rubrics):
    folder = tmp_path / "rubrics"
    folder.mkdir()
    eth = (Path(rubrics.get("eth").source)).read_text(encoding="utf-8")
    for n in range(120):
        text = eth.replace("name: eth\n", f"name: team-{n:03d}\n").replace("aliases: [eth-audit, auditor, strict]",
                                                                          "aliases: []")
        text = text.replace("description: Strict auditor;", f"description: {'A long description. ' * 20}Auditor;")
        (folder / f"team-{n:03d}.yaml").write_text(text, encoding="utf-8")
    settings = bot_settings.model_copy(update={"rubrics_dir": folder})
    running = await start_bot(settings, host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        helped = await slack.command("help")
        assert helped.status == 200 and "team-000" in helped.text() and "more rubrics" in helped.text()
        assert len(json.dumps(helped.body["blocks"], ensure_ascii=False)) <= 11_500
        await slack.command("team-007")
        view = (await slack_server.await_for("views.open"))[0].params["view"]
        assert len(view["blocks"][0]["element"]["options"]) == 100
        await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
        home = (await slack_server.await_for("views.publish"))[0].params["view"]
        assert len(home["blocks"]) <= 100 and "team-000" in json.dumps(home)
    finally:
        await running.stop()


async def test_a_content_free_answer_gets_a_failing_card_saying_why_without_asking_the_judge(
        bot_settings, slack_server, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")  # a judge that passes anything
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        await slack.command("eth Where do I register? || In myStudies. || Answer:")
        card = (await slack_server.await_for("chat.update"))[0].params
        text = json.dumps(card["blocks"], ensure_ascii=False)
        assert "Content-free: the answer is only an opener" in text and "not sent to the judge" in text
        assert "0/100 · did not pass" in text
        assert judge_server.bodies() == []
    finally:
        await running.stop()


def left_over(settings: Settings, slack_server, rubrics, *, message: bool = True, **run_fields) -> tuple[int, str]:
    """A card's run that a dead process left pending: the run, its row, and (if `message`) its placeholder."""
    from bot.records import Triple
    from bot.runs import Origin, start_single_run

    store = Store.open(settings.db_url)
    ts = None
    if message:
        ts = slack_server.messages.setdefault(("C0GENERAL", "1600000000.000100"), {
            "channel": "C0GENERAL", "ts": "1600000000.000100", "text": "Judging…", "blocks": [], "edits": 0,
            "thread_ts": None, "user": "U0BOT"})["ts"]
    run = start_single_run(store, rubric=rubrics.get("eth"), triple=Triple(question="Left Q?", reference="R", answer="A"),
                           judge_model="judge-test", origin=Origin(source="slack", team_id="T0TEST",
                                                                   channel_id="C0GENERAL", user_id="U0USER"),
                           message_ts=ts)
    if run_fields:
        update_run(store, run.id, **run_fields)
    return run.id, ts or ""


async def test_a_left_over_card_whose_rubric_changed_becomes_an_error_with_retry(bot_settings, slack_server,
                                                                                 judge_server, rubrics):
    run_id, ts = left_over(bot_settings, slack_server, rubrics, rubric_hash="0123456789abcdef")
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        update = (await slack_server.await_for("chat.update", lambda c: c.params["ts"] == ts))[0]
    finally:
        await running.stop()
    shown = json.dumps(update.params["blocks"])
    assert "rubric changed before the judge answered" in shown and "judgebot_retry" in shown
    assert judge_server.bodies() == []
    store = Store.open(bot_settings.db_url)
    assert get_run(store, run_id).status == "done" and first_judgment(store, run_id).status == "error"


async def test_a_left_over_card_held_by_a_live_process_elsewhere_is_left_to_it(bot_settings, slack_server,
                                                                               judge_server, rubrics):
    from bot.store import utcnow

    run_id, ts = left_over(bot_settings, slack_server, rubrics, status="running", owner="otherhost:7:abcd1234",
                           heartbeat_at=utcnow())
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        await asyncio.sleep(0.5)
    finally:
        await running.stop(drain=0.1)
    assert [c for c in slack_server.calls_to("chat.update") if c.params["ts"] == ts] == []
    assert judge_server.bodies() == []
    store = Store.open(bot_settings.db_url)
    assert (get_run(store, run_id).owner, first_judgment(store, run_id).status) == ("otherhost:7:abcd1234", "pending")


async def test_a_left_over_judgment_without_a_placeholder_gets_a_new_card(bot_settings, slack_server, judge_server,
                                                                          rubrics):
    judge_server.enqueue(eth_reply("Correct"))
    run_id, _ = left_over(bot_settings, slack_server, rubrics, message=False)
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        card = await card_of(slack_server)
    finally:
        await running.stop()
    assert "Left Q?" in json.dumps(card["blocks"]) and "Correct · correctness" in json.dumps(card["blocks"],
                                                                                              ensure_ascii=False)
    assert first_judgment(Store.open(bot_settings.db_url), run_id).message_ts == card["ts"]
