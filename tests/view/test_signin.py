"""The view inside `judgebot serve`: Sign in with Slack over real HTTP (the bot, the local Slack's authorize page and
openid.connect.token, an RS256 ID token checked against the keys it publishes), each person seeing only the channels
they are in; a wrong state or a forged ID token refused; and without sign-in, nothing served beyond this machine."""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest

from bot.cli.serve import view_of
from bot.config import Settings
from bot.slack.server import RunningBot, start_bot
from bot.view.security import LOCAL_ONLY
from tests.support.history_rows import Row, add
from tests.support.oauth_install import install, oauth_settings


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def started(settings: Settings) -> RunningBot:
    return await start_bot(settings, host="127.0.0.1", view=view_of(settings))


@pytest.fixture
async def signing_bot(bot_settings: Settings, slack_server, rubrics) -> AsyncIterator[tuple[RunningBot, dict]]:
    """The bot in HTTP mode with the OAuth install and VIEW_URL: Sign in with Slack on; workspace T0TEST installed;
    a run in #general (U0USER is in it) and one in #other (U0USER is not)."""
    port = free_port()
    settings = oauth_settings(bot_settings, slack_server).model_copy(
        update={"port": port, "view_url": f"http://127.0.0.1:{port}/view"})
    running = await started(settings)
    assert (await install(running, slack_server, slack_server.team_id)).status == 200
    rubric = rubrics.get("academic")
    ids = {channel: add(running.context.store, rubric, [Row(f"bot-{channel}", "scored", 80, True)], channel=channel,
                        user="U0ADMIN", team=slack_server.team_id)[0] for channel in ("C0GENERAL", "C0OTHER")}
    yield running, ids
    await running.stop()


def browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def test_a_person_signs_in_with_slack_and_sees_only_the_channels_they_are_in(signing_bot, slack_server) -> None:
    running, ids = signing_bot
    view = f"http://127.0.0.1:{running.port}/view"
    slack_server.sign_in_as("U0USER")
    async with browser() as http:
        async with http.get(f"{view}/runs", allow_redirects=False) as first:  # nobody signed in yet: to /signin
            assert first.status == 302 and first.headers["Location"] == "/view/signin"
        async with http.get(f"{view}/runs") as signed:  # /signin, Slack's authorize page, the callback
            text = await signed.text()
            assert signed.status == 200 and "You are signed in with Slack" in text, text
        authorize = slack_server.calls_to("openid.authorize")[-1].params
        assert authorize["scope"] == "openid profile" and authorize["redirect_uri"] == f"{view}/signin/callback"
        assert authorize["state"] and authorize["nonce"] and authorize["state"] != authorize["nonce"]
        token_call = slack_server.calls_to("openid.connect.token")[-1]
        assert token_call.params["redirect_uri"] == f"{view}/signin/callback"

        async with http.get(f"{view}/runs") as runs:
            text = await runs.text()
            assert runs.status == 200 and "U0USER" in text
            assert "bot-C0GENERAL" in text and "bot-C0OTHER" not in text
        async with http.get(f"{view}/rows/{ids['C0GENERAL']}") as mine:
            assert mine.status == 200
        async with http.get(f"{view}/rows/{ids['C0OTHER']}") as theirs:
            assert theirs.status == 404
        asked = [call.params for call in slack_server.calls_to("users.conversations")]
        assert asked and all(params["user"] == "U0USER" for params in asked)
        async with http.get(f"{view}/runs"):  # the membership is kept for the session: Slack is not asked again
            assert len(slack_server.calls_to("users.conversations")) == len(asked)

        csrf = re.search(r'name="csrf_token" value="([^"]+)"', text)
        assert csrf is not None
        async with http.post(f"{view}/signout", data={}) as forged:  # without the session's token
            assert forged.status == 403
        async with http.post(f"{view}/signout", data={"csrf_token": csrf[1]}) as out:
            assert out.status == 200 and "signed out" in await out.text()
        async with http.get(f"{view}/runs", allow_redirects=False) as after:
            assert after.status == 302 and after.headers["Location"] == "/view/signin"


async def test_a_sign_in_with_a_wrong_state_or_a_forged_id_token_is_refused(signing_bot, slack_server) -> None:
    running, _ = signing_bot
    view = f"http://127.0.0.1:{running.port}/view"
    slack_server.sign_in_as("U0ADMIN")
    async with browser() as http:
        async with http.get(f"{view}/signin", allow_redirects=False) as start:
            authorize = start.headers["Location"]
        async with http.get(authorize, allow_redirects=False) as slack:  # Slack's page: back with a code
            back = slack.headers["Location"]
        forged = re.sub(r"state=[^&]+", "state=someone-elses", back)
        async with http.get(forged) as refused:
            assert refused.status == 400 and "sign in again" in await refused.text()
        async with http.get(f"{view}/runs", allow_redirects=False) as still:
            assert still.status == 302  # nobody signed in

        slack_server.id_token_changes = {"aud": "another-app"}  # an ID token made for another app
        async with http.get(f"{view}/signin") as other_app:
            assert other_app.status == 403 and "could not be verified" in await other_app.text()
        slack_server.id_token_changes = {"nonce": "replayed"}  # another sign-in's token
        async with http.get(f"{view}/signin") as replayed:
            assert replayed.status == 403
        slack_server.id_token_changes = None
        slack_server.signing_in = None  # the person says no at Slack
        async with http.get(f"{view}/signin") as denied:
            assert denied.status == 403 and "access_denied" in await denied.text()


async def test_without_sign_in_the_served_view_answers_this_machine_only(bot_settings, slack_server) -> None:
    running = await started(bot_settings)  # one workspace, no VIEW_URL: no sign-in
    try:
        view = f"http://127.0.0.1:{running.port}/view"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{view}/runs") as local:
                assert local.status == 200 and "every channel" in await local.text()
            async with http.get(f"{view}/runs", headers={"X-Forwarded-For": "203.0.113.7"}) as proxied:
                assert proxied.status == 403 and await proxied.text() == LOCAL_ONLY
            async with http.get(f"{view}/runs", headers={"Host": "judgebot.example.com"}) as renamed:
                assert renamed.status == 421
            async with http.get(f"{view}/signin") as no_signin:
                assert no_signin.status == 404
            async with http.get(f"http://127.0.0.1:{running.port}/view", allow_redirects=False) as bare:
                assert bare.status == 302 and bare.headers["Location"] == "/view/"
    finally:
        await running.stop()
