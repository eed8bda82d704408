"""Slack's OAuth install of the bot driven over real HTTP, as an admin's browser and Slack's authorize page would."""

from __future__ import annotations

from dataclasses import dataclass
from http.cookies import SimpleCookie

import aiohttp
from pydantic import SecretStr

from bot.config import Settings
from bot.slack.server import RunningBot

COOKIE = "slack-app-oauth-state"  # bolt's cookie of the state an install started with


@dataclass
class Page:
    status: int
    text: str
    cookies: dict[str, str]


def oauth_settings(bot_settings: Settings, slack_server) -> Settings:
    return bot_settings.model_copy(update={"slack_bot_token": None, "slack_client_id": slack_server.client_id,
                                           "slack_client_secret": SecretStr(slack_server.client_secret)})



async def get(url: str, *, params: dict[str, str] | None = None, cookie: str | None = None) -> Page:
    """GET as the installer's browser would (the state cookie sent back by hand: bolt marks it Secure)."""
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session, session.get(
            url, params=params, headers=headers, allow_redirects=False) as response:
        cookies = SimpleCookie()
        for header in response.headers.getall("Set-Cookie", []):
            cookies.load(header)
        return Page(response.status, await response.text(), {name: morsel.value for name, morsel in cookies.items()})


async def start_install(bot: RunningBot) -> tuple[Page, str]:
    """Open /slack/install: the state (as cookie and in the authorize link)."""
    page = await get(f"http://127.0.0.1:{bot.port}/slack/install")
    assert page.status == 200, page.text
    state = page.cookies[COOKIE]
    return page, state


async def install(bot: RunningBot, slack_server, team: str, *, org: bool = False) -> Page:
    """The whole install of workspace `team` (with `org`: of organisation `team`, org-wide): the install page, Slack's
    consent (a code), the redirect back."""
    _, state = await start_install(bot)
    code = slack_server.grant(team, org=org)
    return await get(f"http://127.0.0.1:{bot.port}/slack/oauth_redirect", params={"code": code, "state": state},
                     cookie=state)


