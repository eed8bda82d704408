"""Many workspaces: the OAuth install over real HTTP, each request answered with its own workspace's token, the stats
of one workspace never showing another's, and an uninstall that deletes the workspace's tokens."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from pydantic import SecretStr
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from bot.errors import SetupError
from bot.slack.context import NotInstalled
from bot.slack.oauth import BOT_SCOPES
from bot.slack.server import RunningBot, start_bot
from bot.store import BOTS, INSTALLATIONS, OAUTH_STATES, Store, set_reviewers
from tests.support.cli import judgebot
from tests.support.oauth_install import get, install, oauth_settings, start_install
from tests.support.replies import eth_reply
from tests.support.slack_messages import INLINE, card_of, table_dicts
from tests.support.slack_side import SIGNING_SECRET, SlackSide

CHANNEL = {"T1": "C1GENERAL", "T2": "C2GENERAL"}


@pytest.fixture
async def oauth_bot(bot_settings, slack_server):
    """The bot in HTTP mode with the OAuth install (SLACK_CLIENT_ID and SECRET, no SLACK_BOT_TOKEN)."""
    running = await start_bot(oauth_settings(bot_settings, slack_server), host="127.0.0.1")
    yield running
    await running.stop()


@pytest.fixture
def side(oauth_bot: RunningBot, slack_server) -> SlackSide:
    return SlackSide(slack_server, url=f"http://127.0.0.1:{oauth_bot.port}/slack/events", secret=SIGNING_SECRET)


def bots_in(bot: RunningBot) -> list[tuple[str, str]]:
    with bot.context.store.engine.connect() as conn:
        return [(row.team_id, row.bot_token) for row in conn.execute(sa.select(BOTS.c.team_id, BOTS.c.bot_token)
                                                                     .order_by(BOTS.c.team_id))]


def posts_by(slack_server, token: str) -> list[Any]:
    return [call for call in slack_server.calls_to("chat.postMessage") if call.token == token]


async def stats_of(side: SlackSide, slack_server, team: str) -> list[dict[str, str]]:
    before = len(slack_server.calls_to("response_url"))
    assert (await side.command("stats", team=team, channel=CHANNEL[team])).status == 200
    calls = await slack_server.await_for("response_url", count=before + 1)
    return table_dicts(calls[before].params)


async def test_two_workspaces_install_judge_apart_and_one_uninstalls(oauth_bot, side, slack_server, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    for team in ("T1", "T2"):  # Slack's channel ids are unique across workspaces
        slack_server.channels[CHANNEL[team]] = slack_server._channel(CHANNEL[team], team.lower(), is_private=False,
                                                                     is_member=True)
    page, state = await start_install(oauth_bot)
    link = re.search(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', page.text)
    assert link is not None and f"state={state}" in link[1] and f"client_id={slack_server.client_id}" in link[1]
    assert f"&scope={','.join(BOT_SCOPES)}&" in link[1].replace("&amp;", "&")

    for team in ("T1", "T2"):
        done = await install(oauth_bot, slack_server, team)
        assert done.status == 200, done.text
    assert [team for team, _ in bots_in(oauth_bot)] == ["T1", "T2"]
    tokens = {team: slack_server.tokens_of(team) for team in ("T1", "T2")}
    assert all(len(issued) == 1 for issued in tokens.values())
    assert dict(bots_in(oauth_bot)) == {team: issued[0] for team, issued in tokens.items()}

    for team in ("T1", "T2"):
        answer = await side.command(f"eth Question of {team}? || R || A", team=team, channel=CHANNEL[team])
        assert answer.status == 200 and not answer.body
        card = await card_of(slack_server, CHANNEL[team])
        assert f"Question of {team}?" in str(card)
        [post] = posts_by(slack_server, tokens[team][0])  # posted with that workspace's own token
        assert post.params["channel"] == CHANNEL[team]
        updates = [c for c in slack_server.calls_to("chat.update") if c.params.get("ts") == card["ts"]]
        assert updates and {c.token for c in updates} == {tokens[team][0]}
    assert not [c for c in slack_server.calls if c.token == slack_server.bot_token]  # no single token anywhere

    for team in ("T1", "T2"):  # each workspace's stats count its own judgment only
        assert [row["Cases"] for row in await stats_of(side, slack_server, team)] == ["1"]
    for team in ("T1", "T2"):  # and its history links to its own workspace's messages
        before = len(slack_server.calls_to("response_url"))
        assert (await side.command("history", team=team, channel=CHANNEL[team])).status == 200
        shown = str((await slack_server.await_for("response_url", count=before + 1))[before].params)
        assert f"https://{team.lower()}.slack.com/archives/{CHANNEL[team]}/p" in shown

    slack_server.revoke("T2")
    gone = await side.send_event(side.event_payload({"type": "app_uninstalled"}, team="T2"))
    assert gone.status == 200
    def installed() -> tuple[list[str], list[str]]:
        with oauth_bot.context.store.engine.connect() as conn:
            return ([team for team, _ in bots_in(oauth_bot)],
                    [r.team_id for r in conn.execute(sa.select(INSTALLATIONS.c.team_id))])

    for _ in range(300):  # the bot and installation rows go in the listener's own time: up to 15 s on a busy machine
        if installed() == (["T1"], ["T1"]):
            break
        await asyncio.sleep(0.05)
    assert installed() == (["T1"], ["T1"])

    posts_before, asked = len(slack_server.calls_to("chat.postMessage")), len(judge_server.bodies())
    answer = await side.command("eth After the uninstall? || R || A", team="T2", channel=CHANNEL["T2"])
    assert answer.status == 200
    refusal = (await slack_server.await_for("response_url", lambda c: "installation" in c.params.get("text", "")))[0]
    assert "reinstall" in refusal.params["text"]
    await asyncio.sleep(0.3)  # a card would have been posted and judged by now
    assert len(slack_server.calls_to("chat.postMessage")) == posts_before and len(judge_server.bodies()) == asked

    await side.command("eth Still here? || R || A", team="T1", channel=CHANNEL["T1"])  # the other goes on
    await card_of(slack_server, CHANNEL["T1"], count=2)
    assert len(posts_by(slack_server, tokens["T1"][0])) == 2


async def test_work_no_request_started_acts_for_the_workspace_it_handles(oauth_bot, slack_server):
    ctx = oauth_bot.context
    assert (await install(oauth_bot, slack_server, "T1")).status == 200
    [token] = slack_server.tokens_of("T1")
    assert ctx.client.token is None and ctx.team_id is None  # no request: no workspace, no token
    async with ctx.acting_for("T1") as workspace:
        assert (ctx.team_id, ctx.client.token, workspace.bot_user_id) == ("T1", token, "UT1BOT")
        assert ctx.team_url == "https://t1.slack.com/"  # for links in a digest
        sent = await ctx.say.post("C0GENERAL", {"text": "digest"}, what="a test post")
        assert sent.ok
        seen: list[str | None] = []

        async def spawned() -> None:
            seen.append(ctx.client.token)

        await asyncio.create_task(spawned())  # tasks started meanwhile inherit the workspace
        assert seen == [token]
    assert ctx.client.token is None
    assert posts_by(slack_server, token)
    with pytest.raises(NotInstalled):
        async with ctx.acting_for("T9"):
            pass


async def test_an_org_wide_install_serves_its_workspaces_requests_and_their_digests(oauth_bot, side, slack_server,
                                                                                    judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    slack_server.channels["C3GENERAL"] = slack_server._channel("C3GENERAL", "t3", is_private=False, is_member=True)
    assert (await install(oauth_bot, slack_server, "E1", org=True)).status == 200  # Enterprise Grid, org-wide
    [token] = slack_server.tokens_of("E1")
    with oauth_bot.context.store.engine.connect() as conn:
        assert [(r.enterprise_id, r.team_id) for r in conn.execute(sa.select(BOTS.c.enterprise_id, BOTS.c.team_id))] == [
            ("E1", None)]
    answer = await side.command("eth Question of T3? || R || A", team="T3", channel="C3GENERAL", org="E1")
    assert answer.status == 200 and not answer.body
    card = await card_of(slack_server, "C3GENERAL")
    assert "Question of T3?" in str(card) and [post.token for post in posts_by(slack_server, token)] == [token]
    ctx = oauth_bot.context
    async with ctx.acting_for("T3"):  # a digest of T3, no request to name its organisation: the one it said before
        assert (ctx.team_id, ctx.client.token) == ("T3", token)
    with pytest.raises(NotInstalled):
        async with ctx.acting_for("T4"):  # a workspace no request of the organisation ever came from
            pass


async def test_a_bad_or_missing_state_is_refused(oauth_bot, slack_server):
    redirect = f"http://127.0.0.1:{oauth_bot.port}/slack/oauth_redirect"
    _, state = await start_install(oauth_bot)
    code = slack_server.grant("T1")
    refused = [
        await get(redirect, params={"code": code, "state": "forged"}, cookie="forged"),  # not issued by the bot
        await get(redirect, params={"code": code, "state": state}),  # no cookie: another browser
        await get(redirect, params={"code": code, "state": state}, cookie="other"),  # another browser's cookie
        await get(redirect, params={"code": code}, cookie=state),  # no state at all
    ]
    assert [page.status for page in refused] == [401, 400, 400, 400]  # bolt: invalid_state; invalid_browser...
    assert bots_in(oauth_bot) == [] and slack_server.calls_to("oauth.v2.access") == []
    assert (await get(redirect, params={"code": code, "state": state}, cookie=state)).status == 200
    assert [team for team, _ in bots_in(oauth_bot)] == ["T1"]
    again = await get(redirect, params={"code": slack_server.grant("T1"), "state": state}, cookie=state)
    assert again.status == 401  # a state is consumed once


async def test_single_token_mode_has_no_install_pages(http_bot, slack):
    page = await get(f"http://127.0.0.1:{http_bot.port}/slack/install")
    assert page.status in (404, 405)
    assert http_bot.context.installations is None
    async with http_bot.context.acting_for("T0TEST") as workspace:  # one token: nothing changes
        assert workspace is http_bot.context.home
    answer = await slack.event({"type": "app_uninstalled"})  # subscribed: answered, nothing to delete
    assert answer.status == 200


def test_settings_choose_one_mode(bot_settings, slack_server):
    many = oauth_settings(bot_settings, slack_server)
    assert many.oauth_install() == (slack_server.client_id, slack_server.client_secret)
    assert many.slack_tokens() == ("", None, SIGNING_SECRET)
    assert bot_settings.oauth_install() is None
    with pytest.raises(SetupError, match="Both SLACK_BOT_TOKEN"):
        many.model_copy(update={"slack_bot_token": bot_settings.slack_bot_token}).oauth_install()
    with pytest.raises(SetupError, match="SLACK_SIGNING_SECRET"):
        many.model_copy(update={"slack_signing_secret": None}).slack_tokens()
    with pytest.raises(SetupError, match="SLACK_CLIENT_SECRET"):
        many.model_copy(update={"slack_client_secret": None}).oauth_install()
    with pytest.raises(SetupError, match="SLACK_APP_TOKEN"):
        many.model_copy(update={"slack_app_token": SecretStr("xapp-1-x")}).oauth_install()


def test_scopes_are_the_manifests():
    manifest = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())
    assert tuple(manifest["oauth_config"]["scopes"]["bot"]) == BOT_SCOPES
    assert {"app_uninstalled", "tokens_revoked"} <= set(manifest["settings"]["event_subscriptions"]["bot_events"])


def described(table: sa.Table) -> tuple[Any, ...]:
    columns = tuple((c.name, repr(c.type), c.nullable, c.primary_key, c.default is not None) for c in table.columns)
    indexes = sorted((i.name, tuple(c.name for c in i.columns)) for i in table.indexes)
    return table.name, columns, indexes


def test_the_store_declares_slack_sdks_tables_as_it_builds_them(db_url):
    theirs = sa.MetaData()
    assert described(SQLAlchemyInstallationStore.build_installations_table(theirs, "slack_installations")) == \
        described(INSTALLATIONS)
    assert described(SQLAlchemyInstallationStore.build_bots_table(theirs, "slack_bots")) == described(BOTS)
    assert described(SQLAlchemyOAuthStateStore.build_oauth_states_table(theirs, "slack_oauth_states")) == \
        described(OAUTH_STATES)
    store = Store.open(db_url)  # and slack_sdk's stores work on a history the migrations made
    try:
        states = SQLAlchemyOAuthStateStore(expiration_seconds=60, engine=store.engine)
        state = states.issue()
        assert states.consume(state) and not states.consume(state)
    finally:
        store.engine.dispose()


@pytest.mark.slow
async def test_the_terminal_posts_a_digest_through_the_channels_own_workspace(oauth_bot, side, slack_server,
                                                                              judge_server, bot_settings, tmp_path):
    judge_server.responder = lambda body: eth_reply("Correct")
    for team in ("T1", "T2"):
        slack_server.channels[CHANNEL[team]] = slack_server._channel(CHANNEL[team], team.lower(), is_private=False,
                                                                     is_member=True)
        assert (await install(oauth_bot, slack_server, team)).status == 200
    assert (await side.command(INLINE, team="T2", channel=CHANNEL["T2"])).status == 200
    await card_of(slack_server, CHANNEL["T2"])
    with sqlite3.connect(bot_settings.judgebot_db) as db:  # as if judged on Wednesday of 2026-W46
        db.execute("UPDATE judgment SET judged_at = '2026-11-11 12:00:00.000000'")
    oauth = {"JUDGEBOT_DB": str(bot_settings.judgebot_db), "SLACK_CLIENT_ID": slack_server.client_id,
             "SLACK_CLIENT_SECRET": slack_server.client_secret, "SLACK_BOT_TOKEN": None,
             "SLACK_API_URL": slack_server.api_url}
    [token] = slack_server.tokens_of("T2")

    code, out = await asyncio.to_thread(judgebot, tmp_path, "digest", "--channel", CHANNEL["T2"], "--week",
                                        "2026-W46", "--post", **oauth)
    assert code == 0 and f"Posted the digest of {CHANNEL['T2']}" in out, out
    [digest] = [call for call in slack_server.calls_to("chat.postMessage") if "Weekly digest" in call.params["text"]]
    assert digest.token == token and digest.params["channel"] == CHANNEL["T2"]
    # the reviewers of T2's channel are read for T2 (another workspace's setup would have none)
    set_reviewers(oauth_bot.context.store, team_id="T2", channel_id=CHANNEL["T2"], reviewers=["U0USER"],
                  user_id="U0ADMIN")
    code, out = await asyncio.to_thread(judgebot, tmp_path, "review", "--channel", CHANNEL["T2"], "--nudge", **oauth)
    assert code == 0 and f"Nobody of {CHANNEL['T2']} was nudged" in out, out
    assert slack_server.calls_to("auth.test")[-1].token == token
    # an uninstalled workspace's channel is said, not posted to with another's token
    slack_server.revoke("T2")
    with sqlite3.connect(bot_settings.judgebot_db) as db:
        db.execute("DELETE FROM slack_bots WHERE team_id = 'T2'")
    code, out = await asyncio.to_thread(judgebot, tmp_path, "digest", "--channel", CHANNEL["T2"], "--week",
                                        "2026-W47", "--post", **oauth)
    assert code != 0 and "not installed in workspace T2" in out, out
    code, out = await asyncio.to_thread(judgebot, tmp_path, "digest", "--channel", "C9NEVER", "--week", "2026-W46",
                                        "--post", **oauth)
    assert code != 0 and "knows of no workspace with channel C9NEVER" in out
