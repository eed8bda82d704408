"""A judge near its announced shutdown is named, with the date and how to compare a successor, wherever the bot
shows figures: App Home, /judge stats and the digest; a judge far from it, or with no date, is not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
import time_machine

from bot.config import Settings
from bot.slack.server import RunningBot, start_bot
from bot.store import add_rows, create_run, first_judgment, listed_shutdowns, save_verdict
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
        assert "OpenAI's deprecations page" in text and "read 2026-12-07" in text
        assert "its named replacement is gpt-6-luna" in text
        assert "/judge judges compare MODEL" in text and "judgebot judges compare --rubric NAME --to MODEL" in text


async def test_a_judge_far_from_its_shutdown_is_not_named(bot_settings, slack_server) -> None:
    with time_machine.travel(FAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4o-mini") as (_, slack):
            shown = await replies(slack, slack_server)
    assert all("shuts down" not in text and "judges compare MODEL" not in text for text in shown)  # the warning's words


async def test_a_judge_with_no_announced_date_is_not_named(bot_settings, slack_server) -> None:
    with time_machine.travel(NEAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4.1-nano") as (_, slack):
            shown = await replies(slack, slack_server)
    assert all("shuts down" not in text for text in shown)


async def test_a_card_judged_by_a_judge_near_its_shutdown_says_so_as_a_file_does(bot_settings, slack_server,
                                                                                 judge_server) -> None:
    from tests.support.replies import eth_reply
    from tests.support.slack_messages import card_of

    judge_server.responder = lambda body: eth_reply("Correct")
    with time_machine.travel(NEAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4o-mini") as (_, slack):
            await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.")
            card = all_text(await card_of(slack_server))
    assert WARNING in card and "OpenAI's deprecations page" in card
    assert "/judge judges compare MODEL" in card and "judgebot judges compare --rubric NAME --to MODEL" in card
    assert '"type": "alert"' in card and "*Correct" in card  # a warning beside the verdict, not instead of it


async def test_a_card_says_the_shutdown_date_the_endpoints_model_list_gives(bot_settings, slack_server,
                                                                            judge_server) -> None:
    from tests.support.replies import eth_reply
    from tests.support.slack_messages import card_of

    judge_server.responder = lambda body: eth_reply("Correct")
    when = (datetime.now(UTC).date() + timedelta(days=30)).isoformat()
    judge_server.list_models({"gpt-4.1-nano": when, "gpt-4o-mini": None})
    async with bot_judging_with(bot_settings, slack_server, "gpt-4.1-nano") as (running, slack):
        await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.")
        card = all_text(await card_of(slack_server))
        kept = listed_shutdowns(running.context.store)
    assert f"The judge gpt-4.1-nano shuts down on {when}, in 30 days" in card
    assert f"({judge_server.base_url}/models), read" in card and '"type": "alert"' in card and "*Correct" in card
    # read by whichever came first, the bot's start or the card's run, and kept for the other processes
    assert [entry.dates for entry in kept.values()] == [{"gpt-4.1-nano": date.fromisoformat(when)}]


async def test_a_bots_endpoint_whose_list_has_no_dates_names_nothing(bot_settings, slack_server, judge_server) -> None:
    judge_server.discovery["/v1/models"] = 404
    with time_machine.travel(FAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4o-mini") as (running, slack):
            shown = await replies(slack, slack_server)
            kept = listed_shutdowns(running.context.store)
    assert all("shuts down" not in text for text in shown)
    assert [entry.dates for entry in kept.values()] == [{}]  # read, nothing dated: not asked again today


async def test_a_card_judged_by_a_judge_far_from_its_shutdown_or_with_no_date_says_nothing(bot_settings, slack_server,
                                                                                          judge_server) -> None:
    from tests.support.replies import eth_reply
    from tests.support.slack_messages import card_of

    judge_server.responder = lambda body: eth_reply("Correct")
    cards = []
    for moment, judge in ((FAR, "gpt-4o-mini"), (NEAR, "gpt-4.1-nano")):
        with time_machine.travel(moment, tick=True):
            async with bot_judging_with(bot_settings, slack_server, judge) as (_, slack):
                await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.")
                cards.append(all_text(await card_of(slack_server, count=len(cards) + 1)))
    assert all("*Correct" in card and "shuts down" not in card and '"type": "alert"' not in card for card in cards)


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
async def test_a_file_judged_by_a_judge_near_its_shutdown_says_so_in_its_summary(bot_settings, slack_server,
                                                                                 judge_server) -> None:
    from tests.support.replies import eth_reply
    from tests.support.slack_files import finished_thread, share, summaries

    judge_server.responder = lambda body: eth_reply("Correct")
    rows = b"question,reference,answer\nWhere?,In myStudies.,Use myStudies.\n"
    found = []
    for moment, judge in ((NEAR, "gpt-4o-mini"), (FAR, "gpt-4o-mini"), (NEAR, "gpt-4.1-nano")):
        with time_machine.travel(moment, tick=True):
            async with bot_judging_with(bot_settings, slack_server, judge) as (_, slack):
                event = await share(slack, slack_server, rows.replace(b"Where?", f"Where ({len(found)})?".encode()))
                await finished_thread(slack_server, "C0GENERAL", event["ts"])
                found.append(all_text(summaries(slack_server, "C0GENERAL", event["ts"])[0]))
    near, far, undated = found
    assert WARNING in near and "OpenAI's deprecations page" in near
    assert "/judge judges compare MODEL" in near and "judgebot judges compare --rubric NAME --to MODEL" in near
    assert '"type": "alert"' in near and "Pass rate" in near  # a warning beside the figures, not instead of them
    assert all("shuts down" not in text and '"type": "alert"' not in text for text in (far, undated))


# -- a channel's own judge --------------------------------------------------------------------------------------------


async def test_an_admin_sets_a_channels_judge_and_cards_there_use_it(slack, slack_server, judge_server,
                                                                     http_bot) -> None:
    from bot.store import channel_judge
    from tests.support.replies import eth_reply
    from tests.support.slack_messages import card_of

    store = http_bot.context.store
    await slack.command("default judge gpt-5.4-mini", user="U0USER")
    refused = (await slack_server.await_for("response_url"))[-1].params
    assert "Only the workspace's admins" in refused["text"]
    assert channel_judge(store, team_id="T0TEST", channel_id="C0GENERAL") is None

    await slack.command("default judge gpt-5.4-mini", user="U0ADMIN")
    said = (await slack_server.await_for("chat.postMessage"))[-1].params
    assert said["channel"] == "C0GENERAL"
    assert "<@U0ADMIN> set this channel's judge to `gpt-5.4-mini` (it was the bot's judge (`judge-test`))" in \
        said["text"]
    choice = channel_judge(store, team_id="T0TEST", channel_id="C0GENERAL")
    assert choice is not None and (choice.judge_model, choice.previous, choice.set_by) == ("gpt-5.4-mini", None,
                                                                                          "U0ADMIN")
    await slack.command("default judge")
    shown = (await slack_server.await_for("response_url", count=2))[-1].params["text"]
    assert "judged by its own judge, `gpt-5.4-mini`, set by <@U0ADMIN>" in shown

    # after the switch, a card here is judged by the channel's judge; another channel keeps the bot's
    judge_server.responder = lambda body: eth_reply("Correct")
    await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.")
    await card_of(slack_server)
    await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.", channel="C0OTHER")
    await card_of(slack_server, "C0OTHER")
    assert [body["model"] for body in judge_server.bodies()] == ["gpt-5.4-mini", "judge-test"]
    with store.session() as session:
        from sqlmodel import select

        from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
        judges = {j.channel_id: j.judge_model for j in session.exec(select(JudgmentTable))}
    assert judges == {"C0GENERAL": "gpt-5.4-mini", "C0OTHER": "judge-test"}


async def test_a_channels_own_judge_near_its_shutdown_is_warned_of_there_only(bot_settings, slack_server) -> None:
    from bot.store import set_channel_judge

    with time_machine.travel(NEAR, tick=True):
        async with bot_judging_with(bot_settings, slack_server, "gpt-4.1-nano") as (running, slack):
            set_channel_judge(running.context.store, team_id="T0TEST", channel_id="C0GENERAL",
                              judge_model="gpt-4o-mini", user_id="U0ADMIN")
            await slack.command("stats")
            here = all_text((await slack_server.await_for("response_url"))[-1].params)
            await slack.command("stats", channel="C0OTHER")
            there = all_text((await slack_server.await_for("response_url", count=2))[-1].params)
    assert WARNING in here
    assert "shuts down" not in there


def test_the_digest_marks_the_week_a_channels_judge_changed(store) -> None:
    from datetime import timedelta

    from sqlmodel import update

    from bot.digest import Period, build_digest, trend_png
    from bot.records import Verdict
    from bot.store import ChannelJudge, set_channel_judge, utcnow

    common = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "a" * 16, "judge_model": "judge-test"}
    run = create_run(store, **common, channel_id="C0GENERAL", team_id="T0TEST")
    add_rows(store, [{**common, "run_id": run.id, "row_number": 1, "status": "pending", "question": "q",
                     "reference": "r", "answer": "a", "channel_id": "C0GENERAL", "team_id": "T0TEST"}])
    row = first_judgment(store, run.id)
    assert row is not None
    assert save_verdict(store, row.id, Verdict(status="scored", output={"result_tag": "Correct"}, headline=100.0,
                                              passed=True, label="Correct", tag="Correct", raw_reply="{}",
                                              prompt_hash="p" * 32, **common), cache_key="k1")
    set_channel_judge(store, team_id="T0TEST", channel_id="C0GENERAL", judge_model="gpt-5.4-mini", user_id="U0ADMIN")
    set_channel_judge(store, team_id="T0TEST", channel_id="C0OTHER", judge_model="gpt-4.1", user_id="U0ADMIN")
    with store.session() as session:  # the other channel's choice three weeks ago: not this channel's mark
        session.exec(update(ChannelJudge).where(ChannelJudge.channel_id == "C0OTHER")
                     .values(set_at=utcnow() - timedelta(days=21)))
        session.commit()
    period = Period.ending(datetime.now(UTC) + timedelta(seconds=1))
    digest = build_digest(store, channel_id="C0GENERAL", period=period)
    assert digest.judge_marks == [(len(digest.weeks) - 1, "judge: gpt-5.4-mini")]
    assert build_digest(store, channel_id="C0OTHER", period=period).judge_marks == []
    weeks = [str(n) for n in range(len(digest.weeks))]
    marked = trend_png("t", weeks, digest.series(), digest.judge_marks)
    assert marked.startswith(b"\x89PNG") and marked != trend_png("t", weeks, digest.series())
