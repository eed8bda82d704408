"""The OAuth install's Slack tokens encrypted at rest with SECRETS_KEY: the database holds none in the clear (read raw),
the install still answers, `judgebot secrets rotate` moves them to a new key, a wrong key is a sentence at start, and
without a key the bot says once that they are stored unencrypted. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken
from mcp import Client
from pydantic import SecretStr

from bot.errors import SetupError
from bot.slack.server import RunningBot, start_bot
from bot.store import BOTS, INSTALLATIONS
from tests.support import forkserver
from tests.support.cli import judgebot
from tests.support.mcp_process import as_slackbot, mcp_server
from tests.support.oauth_install import install, oauth_settings
from tests.support.replies import eth_reply
from tests.support.serve_process import free_port, serve_env, wait_healthy
from tests.support.slack_messages import card_of
from tests.support.slack_side import SIGNING_SECRET, SlackSide

CHANNEL = "C1GENERAL"


def raw_rows(db_url: str) -> list[dict]:
    """Every row of the installation store's two tables, as the database holds them."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return [dict(row._mapping) for table in (BOTS, INSTALLATIONS) for row in conn.execute(sa.select(table))]
    finally:
        engine.dispose()


def stored_tokens(db_url: str) -> list[str]:
    return [row["bot_token"] for row in raw_rows(db_url)]


async def bot_with(settings, db_url: str, key: str | None) -> RunningBot:
    return await start_bot(settings.model_copy(update={"database_url": db_url,
                                                       "secrets_key": SecretStr(key) if key else None}),
                           host="127.0.0.1")


async def judged_with(bot: RunningBot, slack_server, token: str, count: int) -> None:
    """A command in the installed workspace is answered: a card posted with the workspace's own token."""
    side = SlackSide(slack_server, url=f"http://127.0.0.1:{bot.port}/slack/events", secret=SIGNING_SECRET)
    answer = await side.command(f"eth Question {count}? || R || A", team="T1", channel=CHANNEL)
    assert answer.status == 200
    await card_of(slack_server, CHANNEL, count=count)
    posts = [call for call in slack_server.calls_to("chat.postMessage") if call.params.get("channel") == CHANNEL]
    assert posts[-1].token == token


def cli(tmp_path, db_url: str, *args: str, key: str | None) -> tuple[int, str]:
    return judgebot(tmp_path, *args, DATABASE_URL=db_url, SECRETS_KEY=key)


@pytest.fixture
def oauth(bot_settings, slack_server, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    slack_server.channels[CHANNEL] = slack_server._channel(CHANNEL, "general", is_private=False, is_member=True)
    return oauth_settings(bot_settings, slack_server)


@pytest.mark.slow
async def test_with_a_key_no_token_is_stored_plain_the_install_answers_and_rotation_moves_them(
        tmp_path, db_url, oauth, slack_server, judge_server):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    bot = await bot_with(oauth, db_url, old)
    try:
        assert (await install(bot, slack_server, "T1")).status == 200
        [token] = slack_server.tokens_of("T1")
        assert token not in str(raw_rows(db_url))  # in neither table, in no column
        assert bot.warnings == []
        assert [Fernet(old).decrypt(stored.encode()).decode() for stored in stored_tokens(db_url)] == [token, token]
        await judged_with(bot, slack_server, token, 1)
    finally:
        await bot.stop()

    # Rotation: every process on SECRETS_KEY=new,old; then `judgebot secrets rotate`; then SECRETS_KEY=new alone
    bot = await bot_with(oauth, db_url, f"{new},{old}")
    try:
        await judged_with(bot, slack_server, token, 2)
    finally:
        await bot.stop()
    code, out = cli(tmp_path, db_url, "secrets", "rotate", key=f"{new},{old}")
    assert code == 0 and "2 Slack tokens are encrypted with the first key of SECRETS_KEY" in out, out
    assert "Any other key may now be dropped" in out
    for stored in stored_tokens(db_url):
        assert Fernet(new).decrypt(stored.encode()).decode() == token
        with pytest.raises(InvalidToken):
            Fernet(old).decrypt(stored.encode())
    bot = await bot_with(oauth, db_url, new)
    try:
        await judged_with(bot, slack_server, token, 3)
    finally:
        await bot.stop()
    # `judgebot mcp --http` reads them with the same key: Slackbot's person of that workspace is asked about with it
    with mcp_server(tmp_path, judge_server, secrets=(token, new, old, SIGNING_SECRET), DATABASE_URL=db_url,
                    SECRETS_KEY=new, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_CLIENT_ID=slack_server.client_id,
                    SLACK_CLIENT_SECRET=slack_server.client_secret, SLACK_BOT_TOKEN=None,
                    SLACK_API_URL=slack_server.api_url) as url:
        async with Client(as_slackbot(url, SIGNING_SECRET)) as slackbot:
            asked = await slackbot.call_tool("stats", {"days": 0}, meta={"slack": {"user_id": "U0USER", "team_id": "T1"}})
            assert not asked.is_error, asked.content
    assert {call.token for call in slack_server.calls_to("users.conversations")} == {token}

    # The old key alone, a key that is not one, no key: a sentence, before any request is taken
    for key, said in ((old, "encrypted with a key SECRETS_KEY does not hold"), ("not-a-key", "is not a Fernet key"),
                      (None, "the Slack tokens in the history database are encrypted, and SECRETS_KEY is not set")):
        with pytest.raises(SetupError) as refused:
            await bot_with(oauth, db_url, key)
        assert said in str(refused.value)
        if key != "not-a-key":  # rotating with a key that opens nothing changes nothing
            code, out = cli(tmp_path, db_url, "secrets", "rotate", key=key)
            assert code != 0 and ("does not hold" in out or "SECRETS_KEY is not set" in out), out
    assert all(Fernet(new).decrypt(stored.encode()).decode() == token for stored in stored_tokens(db_url))


@pytest.mark.slow
def test_serve_says_once_that_tokens_are_unencrypted_and_refuses_a_wrong_key_in_a_sentence(
        tmp_path, bot_settings, slack_server, judge_server):
    env = serve_env(bot_settings, SLACK_CLIENT_ID=slack_server.client_id,
                    SLACK_CLIENT_SECRET=slack_server.client_secret)
    del env["SLACK_BOT_TOKEN"]
    port = free_port()
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    process = forkserver.start(["serve"], cwd=tmp_path, env={**env, "PORT": str(port)}, out=stdout, err=stderr)
    try:
        asyncio.run(wait_healthy(f"http://127.0.0.1:{port}"))
    finally:
        process.send_signal(15)
        process.wait(timeout=30)
    out, err = " ".join(stdout.read_text().split()), stderr.read_text()
    said = "the OAuth install's Slack tokens are stored unencrypted in the history database: set SECRETS_KEY"
    assert process.returncode == 0, err
    assert out.count(said) == 1 and f"warning: {said}" in out, out  # the line in serve's output
    assert err.count(said) == 1 and "WARNING bot.slack.server" in err, err  # and the log line

    for key, words in (("not-a-key", "SECRETS_KEY's key number 1 is not a Fernet key"),
                       (f"{Fernet.generate_key().decode()},oops", "SECRETS_KEY's key number 2 is not a Fernet key")):
        code, _, stderr_text = forkserver.run(["serve"], cwd=tmp_path, env={**env, "SECRETS_KEY": key}, timeout=60)
        assert code == 2 and words in " ".join(stderr_text.split()), stderr_text
        assert "Traceback" not in stderr_text and key not in stderr_text


@pytest.mark.slow
async def test_tokens_stored_before_the_key_are_said_and_sealed_by_rotate(tmp_path, db_url, oauth, slack_server):
    bot = await bot_with(oauth, db_url, None)
    try:
        assert (await install(bot, slack_server, "T1")).status == 200
    finally:
        await bot.stop()
    [token] = slack_server.tokens_of("T1")
    assert stored_tokens(db_url) == [token, token]  # no key: stored as bolt's own stores keep them
    key = Fernet.generate_key().decode()
    bot = await bot_with(oauth, db_url, key)  # the key set later: the plain tokens still serve, and are counted
    try:
        assert bot.warnings == ["2 Slack tokens stored before SECRETS_KEY was set are still unencrypted: "
                                "`judgebot secrets rotate` encrypts them"]
        await judged_with(bot, slack_server, token, 1)
    finally:
        await bot.stop()
    code, out = cli(tmp_path, db_url, "secrets", "rotate", key=key)
    assert code == 0 and "2 Slack tokens are encrypted" in out and "dropped" not in out, out
    assert token not in str(raw_rows(db_url))
    bot = await bot_with(oauth, db_url, key)
    try:
        assert bot.warnings == []
        await judged_with(bot, slack_server, token, 2)
    finally:
        await bot.stop()
