"""JUDGEBOT_ADMINS through the real bolt app: the people it names change every setting of a channel without being
workspace admins, anyone else is refused with the setting's name, and the former DIGEST_ADMINS is still read with a
notice at start."""

from __future__ import annotations

import asyncio
import json

from bot.slack.server import start_bot
from bot.store import cost_limits, default_samples, judge_of_channel, review_setup, subscription
from tests.support.slack_side import SIGNING_SECRET, SlackSide

TEAM, CHANNEL = "T0TEST", "C0GENERAL"
SETTINGS = ["budget 5", "default samples 3", "default judge judge-other", "review blind on", "digest on"]


async def settled(condition, what: str) -> None:
    """Wait (a few seconds at most) until `condition()` holds: a setting is saved once Slack was told."""
    for _ in range(200):
        if await asyncio.to_thread(condition):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never saw {what}")


async def test_the_people_judgebot_admins_names_change_every_setting_of_a_channel(bot_settings, slack_server):
    running = await start_bot(bot_settings.model_copy(update={"judgebot_admins": "U0OTHER, U0USER"}), host="127.0.0.1")
    store = running.context.store
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        for text in SETTINGS:  # U0USER is no workspace admin; the setting names them
            assert (await slack.command(text, user="U0USER")).status == 200
        await settled(lambda: subscription(store, team_id=TEAM, channel_id=CHANNEL) is not None, "the digest on")
        await settled(lambda: review_setup(store, team_id=TEAM, channel_id=CHANNEL).blind, "reviews made blind")
        assert cost_limits(store, team_id=TEAM, channel_id=CHANNEL).monthly_budget == 5.0
        assert default_samples(store, team_id=TEAM, channel_id=CHANNEL) == 3
        assert judge_of_channel(store, team_id=TEAM, channel_id=CHANNEL) == "judge-other"
        assert not slack_server.calls_to("users.info")  # the setting answered; Slack was never asked
        assert running.warnings == []  # the new name: nothing to rename
    finally:
        await running.stop()


async def test_anyone_else_is_refused_with_the_settings_name(bot_settings, slack_server):
    running = await start_bot(bot_settings.model_copy(update={"judgebot_admins": "U0OTHER"}), host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        for count, text in enumerate(SETTINGS, start=1):
            await slack.command(text, user="U0USER")
            refused = json.dumps((await slack_server.await_for("response_url", count=count))[-1].params)
            assert "the people the bot's JUDGEBOT_ADMINS setting names" in refused, (text, refused)
        store = running.context.store
        assert cost_limits(store, team_id=TEAM, channel_id=CHANNEL).monthly_budget is None
        assert subscription(store, team_id=TEAM, channel_id=CHANNEL) is None
    finally:
        await running.stop()


async def test_the_former_digest_admins_is_still_read_and_said_at_start(bot_settings, slack_server):
    running = await start_bot(bot_settings.model_copy(update={"digest_admins": "U0USER"}), host="127.0.0.1")
    try:
        assert running.warnings == ["DIGEST_ADMINS is now called JUDGEBOT_ADMINS (the people who may change a "
                                    "channel's settings, not only its digest): rename it in the environment or .env; "
                                    "it is still read for now."]
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        await slack.command("budget 7", user="U0USER")
        store = running.context.store
        await settled(lambda: cost_limits(store, team_id=TEAM, channel_id=CHANNEL).monthly_budget == 7.0,
                      "the budget set")
        assert not slack_server.calls_to("users.info")
    finally:
        await running.stop()
