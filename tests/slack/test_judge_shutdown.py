"""A judge near its announced shutdown is named, with the date and how to compare a successor, wherever the bot
shows figures: App Home, /judge stats and the digest; a judge far from it, or with no date, is not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import time_machine

from bot.config import Settings
from bot.slack.server import RunningBot, start_bot
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, SlackSide

NEAR = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # 48 days before gpt-4o-mini's 2027-01-14
FAR = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)  # 135 days before it
WARNING = "The judge gpt-4o-mini shuts down on 2027-01-14, in 48 days"


@asynccontextmanager
async def bot_judging_with(bot_settings: Settings, slack_server: FakeSlackServer,
                           judge_model: str) -> AsyncIterator[tuple[RunningBot, SlackSide]]:
    running = await start_bot(bot_settings.model_copy(update={"judge_model": judge_model}), host="127.0.0.1")
    try:
        yield running, SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events",
                                 secret=SIGNING_SECRET)
    finally:
        await running.stop()


def all_text(payload: dict[str, Any]) -> str:
    blocks = payload["blocks"] if isinstance(payload["blocks"], list) else json.loads(payload["blocks"])
    return json.dumps(blocks, ensure_ascii=False)


async def replies(slack: SlackSide, slack_server: FakeSlackServer) -> tuple[str, str, str]:
    """What /judge stats, /judge digest preview and App Home show."""
    await slack.command("stats")
    stats = all_text((await slack_server.await_for("response_url"))[-1].params)
    await slack.command("digest preview")
    digest = all_text((await slack_server.await_for("response_url", count=2))[-1].params)
    await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
    home = json.dumps((await slack_server.await_for("views.publish"))[-1].params["view"])
    return stats, digest, home


async def test_a_judge_near_its_shutdown_is_named_in_stats_digest_and_home(bot_settings, slack_server) -> None:
    with time_machine.travel(NEAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4o-mini") as (_, slack):
            shown = await replies(slack, slack_server)
    for text in shown:
        assert WARNING in text
        assert "OpenAI's deprecations page" in text and "read 2026-11-27" in text
        assert "/judge judges compare MODEL" in text and "judgebot judges compare --rubric NAME --to MODEL" in text


async def test_a_judge_far_from_its_shutdown_is_not_named(bot_settings, slack_server) -> None:
    with time_machine.travel(FAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4o-mini") as (_, slack):
            shown = await replies(slack, slack_server)
    assert all("shuts down" not in text and "judges compare" not in text for text in shown)


async def test_a_judge_with_no_announced_date_is_not_named(bot_settings, slack_server) -> None:
    with time_machine.travel(NEAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4.1-nano") as (_, slack):
            shown = await replies(slack, slack_server)
    assert all("shuts down" not in text for text in shown)
