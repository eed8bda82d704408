"""`/judge digest ...` through the real bolt app: admins only for on/off, the schedule, posting now, the preview."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.digest import WEEK, Period
from bot.slack.flows.digest_post import DIGEST_EVENT
from bot.slack.server import RunningBot, start_bot
from bot.store import DigestSubscription, Store, claim_week, subscribe, subscription
from tests.support.history_rows import Row, add
from tests.support.slack_messages import said, table_dicts
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, SlackSide

BERLIN = ZoneInfo("Europe/Berlin")


def channel_messages(slack_server: FakeSlackServer, channel: str) -> list[dict]:
    with slack_server._lock:
        return [m for (ch, _), m in sorted(slack_server.messages.items()) if ch == channel and not m.get("thread_ts")]


def sub_of(bot: RunningBot, channel: str = "C0GENERAL") -> DigestSubscription | None:
    return subscription(bot.context.store, team_id="T0TEST", channel_id=channel)


async def test_digest_shows_that_none_is_set(slack: SlackSide, slack_server: FakeSlackServer) -> None:
    answer = await slack.command("digest")
    assert answer.status == 200
    text = await said(slack_server)
    assert "gets no weekly digest" in text and "/judge digest on" in text


async def test_only_admins_turn_digests_on_and_off(slack: SlackSide, slack_server: FakeSlackServer,
                                                   http_bot: RunningBot) -> None:
    await slack.command("digest on friday 17:30 Europe/Berlin", user="U0USER")
    assert "Only the workspace's admins and owners" in await said(slack_server)
    assert sub_of(http_bot) is None
    assert http_bot.digests.scheduler.next_run("T0TEST", "C0GENERAL") is None

    await slack.command("digest on friday 17:30 Europe/Berlin", user="U0ADMIN")
    announced = (await slack_server.await_for("chat.postMessage"))[-1].params
    assert announced["channel"] == "C0GENERAL" and "<@U0ADMIN> turned on the weekly digest" in announced["text"]
    assert "every Friday at 17:30 (Europe/Berlin)" in announced["text"]
    sub = sub_of(http_bot)
    assert sub is not None and (sub.weekday, sub.hour, sub.minute, sub.timezone) == (4, 17, 30, "Europe/Berlin")
    first = http_bot.digests.scheduler.next_run("T0TEST", "C0GENERAL")
    assert first is not None and first > datetime.now(UTC)
    local = first.astimezone(BERLIN)
    assert (local.weekday(), local.hour, local.minute) == (4, 17, 30) and first - datetime.now(UTC) <= WEEK

    await slack.command("digest")
    shown = await said(slack_server, count=2)
    assert "every Friday at 17:30 (Europe/Berlin)" in shown and "the next one on <!date^" in shown
    assert f"<!date^{int(first.timestamp())}^" in shown

    await slack.command("digest off", user="U0USER")
    assert "Only the workspace's admins and owners" in await said(slack_server, count=3)
    assert sub_of(http_bot) is not None

    await slack.command("digest off", user="U0ADMIN")
    off = (await slack_server.await_for("response_url", count=4))[-1].params
    assert off["response_type"] == "in_channel" and "turned off the weekly digest" in off["text"]
    assert sub_of(http_bot) is None
    assert http_bot.digests.scheduler.next_run("T0TEST", "C0GENERAL") is None


async def test_digest_on_takes_the_default_day_time_and_timezone(bot_settings, slack_server: FakeSlackServer) -> None:
    running = await start_bot(bot_settings.model_copy(update={"digest_timezone": "America/New_York",
                                                              "judgebot_admins": "U0USER, U0OTHER"}), host="127.0.0.1")
    try:
        side = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        await side.command("digest on", user="U0USER")  # listed in JUDGEBOT_ADMINS, though not a workspace admin
        await slack_server.await_for("chat.postMessage")
        sub = sub_of(running)
        assert sub is not None and (sub.weekday, sub.hour, sub.minute, sub.timezone) == \
            (0, 9, 0, "America/New_York")
        assert not slack_server.calls_to("users.info")  # the setting answered; Slack was not asked
    finally:
        await running.stop()


async def test_an_admin_of_another_organisation_in_a_shared_channel_is_refused(
        slack: SlackSide, slack_server: FakeSlackServer, http_bot: RunningBot) -> None:
    await slack.command("digest on", user="U0GUEST")  # is_admin, but of their own workspace
    assert "Only the workspace's admins and owners" in await said(slack_server)
    assert sub_of(http_bot) is None


async def test_an_admin_check_that_slack_refuses_is_explained(slack: SlackSide, slack_server: FakeSlackServer,
                                                              http_bot: RunningBot) -> None:
    slack_server.fail("users.info", "missing_scope")
    await slack.command("digest on", user="U0ADMIN")
    text = await said(slack_server)
    assert "missing_scope" in text and "users:read" in text
    assert sub_of(http_bot) is None


async def test_digest_on_in_a_channel_without_the_bot_changes_nothing(slack: SlackSide, slack_server: FakeSlackServer,
                                                                      http_bot: RunningBot) -> None:
    await slack.command("digest on monday 08:00 UTC", channel="C0NOBOT", user="U0ADMIN")
    text = await said(slack_server)
    assert "/invite @judgebot" in text and "stays as it was" in text
    assert sub_of(http_bot, "C0NOBOT") is None
    assert http_bot.digests.scheduler.next_run("T0TEST", "C0NOBOT") is None


async def test_a_change_refused_by_slack_keeps_the_earlier_schedule(slack: SlackSide, slack_server: FakeSlackServer,
                                                                    http_bot: RunningBot) -> None:
    await slack.command("digest on tuesday 10:00 UTC", user="U0ADMIN")
    await slack_server.await_for("chat.postMessage")
    slack_server.fail("chat.postMessage", "is_archived")
    await slack.command("digest on sunday 20:00 UTC", user="U0ADMIN")
    assert "archived" in await said(slack_server)
    sub = sub_of(http_bot)
    assert sub is not None and (sub.weekday, sub.hour) == (1, 10)
    assert http_bot.digests.scheduler.next_run("T0TEST", "C0GENERAL").weekday() == 1


@pytest.mark.parametrize("text, problem", [
    ("digest on someday", "timezone `someday`"),
    ("digest on 25:00", "not a time of day"),
    ("digest on monday Europe/Berln", "Did you mean `Europe/Berlin`"),
    ("digest sometimes", "knows `on`, `off`, `now` and `preview`"),
])
async def test_a_digest_command_written_wrongly_says_how_to_write_it(slack: SlackSide, http_bot: RunningBot,
                                                                    text: str, problem: str) -> None:
    answer = await slack.command(text, user="U0ADMIN")
    assert answer.status == 200 and problem in answer.text()
    assert sub_of(http_bot) is None


def seed(store: Store, rubrics) -> None:
    """Judgments of this week in C0GENERAL, and in the private channel G0PRIVATE under a model name of its own."""
    eth = rubrics.get("eth")
    add(store, eth, [Row("gpt-public", "scored", 100.0, True, "Correct"), Row("gpt-public", "scored", 25.0, False,
                     "Hallucination"), Row("gpt-public", "error")], channel="C0GENERAL", user="U0USER", team="T0TEST")
    add(store, eth, [Row("secret-model", "scored", 0.0, False, "Refusal")], channel="G0PRIVATE", user="U0USER",
        team="T0TEST")


async def test_digest_now_posts_this_channels_figures_and_the_chart(slack: SlackSide, slack_server: FakeSlackServer,
                                                                    http_bot: RunningBot, rubrics) -> None:
    seed(http_bot.context.store, rubrics)
    await slack.command("digest now")
    post = (await slack_server.await_for("chat.postMessage"))[-1].params
    assert post["channel"] == "C0GENERAL"
    meta = post["metadata"] if isinstance(post["metadata"], dict) else json.loads(post["metadata"])
    assert meta["event_type"] == DIGEST_EVENT and meta["event_payload"]["weekly"] is False
    text = json.dumps(post["blocks"], ensure_ascii=False)
    assert "Digest of the last 7 days" in text and "*3 cases*" in text
    [row] = table_dicts(post)
    assert (row["Model"], row["Rubric"], row["Mean /100"], row["Pass"], row["Judge errors"]) == (
        "gpt-public", "eth", "62.5", "50%", "33% (1)")
    assert "correct 50%" in row["Tags"] and "hallucination 50%" in row["Tags"] and "refusal 0%" in row["Tags"]
    assert "secret-model" not in text and "G0PRIVATE" not in text  # another channel's data never shows here
    digest = channel_messages(slack_server, "C0GENERAL")[-1]
    await slack_server.await_for("files.completeUploadExternal")
    uploads = slack_server.uploads("C0GENERAL", digest["ts"])
    assert len(uploads) == 1 and uploads[0]["content"][:8] == b"\x89PNG\r\n\x1a\n"


async def test_a_quiet_week_is_one_line(slack: SlackSide, slack_server: FakeSlackServer, http_bot: RunningBot) -> None:
    await slack.command("digest now", channel="C0OTHER")
    post = (await slack_server.await_for("chat.postMessage"))[-1].params
    assert post["channel"] == "C0OTHER" and "no judgments in <#C0OTHER>" in post["text"]
    assert len(post["blocks"] if isinstance(post["blocks"], list) else json.loads(post["blocks"])) == 1
    assert not slack_server.calls_to("files.getUploadURLExternal")  # no chart of nothing


async def test_the_preview_is_for_the_caller_only(slack: SlackSide, slack_server: FakeSlackServer,
                                                  http_bot: RunningBot, rubrics) -> None:
    seed(http_bot.context.store, rubrics)
    await slack.command("digest preview", channel="G0PRIVATE")
    reply = (await slack_server.await_for("response_url"))[-1].params
    assert reply["response_type"] == "ephemeral"
    text = json.dumps(reply["blocks"], ensure_ascii=False)
    assert "secret-model" in text and "gpt-public" not in text
    assert not slack_server.calls_to("chat.postMessage")


async def test_digest_now_where_the_bot_is_not_says_so(slack: SlackSide, slack_server: FakeSlackServer,
                                                       http_bot: RunningBot) -> None:
    await slack.command("digest now", channel="C0NOBOT")
    assert "/invite @judgebot" in await said(slack_server)


async def test_the_schedule_starts_with_the_bot(bot_settings, slack_server: FakeSlackServer) -> None:
    store = Store.open(bot_settings.db_url)
    subscribe(store, team_id="T0TEST", channel_id="C0OTHER", weekday=2, hour=6, minute=45, timezone="Asia/Tokyo",
              user_id="U0ADMIN")
    store.engine.dispose()
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        when = running.digests.scheduler.next_run("T0TEST", "C0OTHER")
        assert when is not None
        local = when.astimezone(ZoneInfo("Asia/Tokyo"))
        assert (local.weekday(), local.hour, local.minute) == (2, 6, 45)
    finally:
        await running.stop()
    assert not running.digests.scheduler.scheduler.running


async def test_the_next_digest_shown_skips_a_week_posted_in_already(slack: SlackSide, slack_server: FakeSlackServer,
                                                                   http_bot: RunningBot) -> None:
    await slack.command("digest on friday 17:30 Europe/Berlin", user="U0ADMIN")
    await slack_server.await_for("chat.postMessage")
    first = http_bot.digests.scheduler.next_run("T0TEST", "C0GENERAL")
    # this week's digest went out already (say on Monday, before the day was changed)
    assert claim_week(http_bot.context.store, team_id="T0TEST", channel_id="C0GENERAL",
                      week=Period.before_day_of(first).posting_week)
    await slack.command("digest")
    shown = await said(slack_server)
    assert f"<!date^{int((first + WEEK).timestamp())}^" in shown
    assert f"<!date^{int(first.timestamp())}^" not in shown
