"""The weekly digest schedule, time travelled: local times and DST, catch-up, live changes, one post a week."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import update
from sqlmodel import select

from bot.config import Settings
from bot.digest import Period
from bot.digest.schedule import DigestScheduler
from bot.rubric import Rubric
from bot.slack.flows.digest_post import DIGEST_EVENT, DigestPoster
from bot.slack.server import RunningBot, start_bot
from bot.store import (
    DigestPost,
    DigestSubscription,
    Store,
    claim_week,
    mark_posted,
    process_name,
    release_week,
    subscribe,
    subscription,
    unfinished_runs,
    unsubscribe,
    update_run,
    utcnow,
)
from tests.support.history_rows import Row, add
from tests.support.slack_server import FakeSlackServer

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
MON, TUE, WED, FRI, SUN = 0, 1, 2, 4, 6
TEAM, CHANNEL = "T0TEST", "C0GENERAL"
GRACE = timedelta(hours=12)
SETTLE = 0.3  # seconds the loop gets after a wakeup before "nothing happened" is believed


def at(zone: ZoneInfo, *fields: int) -> datetime:
    """An aware datetime in `zone`."""
    return datetime(*fields, tzinfo=zone)


def set_digest(store: Store, weekday: int, hour: int, minute: int, zone: ZoneInfo,
               channel: str = CHANNEL) -> DigestSubscription:
    """Subscribe `channel` (stamped with the travelled now), as `/judge digest on` or another process would."""
    return subscribe(store, team_id=TEAM, channel_id=channel, weekday=weekday, hour=hour, minute=minute, timezone=str(zone),
                     user_id="U0ADMIN")


class Posts:
    """A post callback that records every (channel, due) it is called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, datetime]] = []

    async def __call__(self, sub: DigestSubscription, due: datetime) -> None:
        self.calls.append((sub.channel_id, due))


class ClaimingPosts(Posts):
    """A post callback that, like DigestPoster.post_weekly, posts only what it could claim in the database."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store, self.refused = store, 0

    async def __call__(self, sub: DigestSubscription, due: datetime) -> None:
        week = Period.before_day_of(due).posting_week
        claim = await asyncio.to_thread(claim_week, self.store, team_id=sub.team_id, channel_id=sub.channel_id, week=week)
        if claim is None:
            self.refused += 1
        else:
            await asyncio.to_thread(mark_posted, self.store, claim_id=claim.id, message_ts=f"ts-{week}")
            await super().__call__(sub, due)


def posted_weeks(store: Store, channel: str) -> list[DigestPost]:
    """The week claims of one channel, newest first."""
    with store.session() as session:
        return list(session.exec(select(DigestPost).where(DigestPost.channel_id == channel)
                                 .order_by(DigestPost.id.desc())))


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    """A new SQLite history (the scheduler logic does not depend on the database; the real bots below do both)."""
    opened = Store.open(f"sqlite:///{tmp_path / 'digests.db'}")
    yield opened
    opened.engine.dispose()


@asynccontextmanager
async def scheduler_of(store: Store, post: Posts, **options: float) -> AsyncIterator[DigestScheduler]:
    """A started DigestScheduler with a 12 h grace, stopped afterwards."""
    scheduler = DigestScheduler(store, post, grace=GRACE, **options)
    await scheduler.start()
    try:
        yield scheduler
    finally:
        scheduler.stop()


async def wake_at(traveller: time_machine.Coordinates, moment: datetime, *schedulers: DigestScheduler) -> None:
    """Move the clock to `moment` and let the schedulers look at their jobs again."""
    traveller.move_to(moment)
    for scheduler in schedulers:
        scheduler.scheduler.wakeup()
    await asyncio.sleep(SETTLE)


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Poll `condition` without blocking the loop; fail saying `what` did not happen."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def fired(posts: Posts, count: int) -> list[tuple[str, datetime]]:
    """Wait for the `count`th post, check none follows at once, and return all of them."""
    await until(lambda: len(posts.calls) >= count, f"{count} post(s), got {posts.calls}")
    await asyncio.sleep(SETTLE)  # and no more than that
    assert len(posts.calls) == count, posts.calls
    return posts.calls


# -- 1. the right local time ----------------------------------------------------------------------------------


async def test_fires_at_the_local_time_of_the_subscription(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(BERLIN, 2026, 11, 15, 12, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN, channel="C0BERLIN")
        set_digest(store, FRI, 17, 30, NEW_YORK, channel="C0NEWYORK")
        traveller.move_to(at(BERLIN, 2026, 11, 16, 8, 59, 50))
        async with scheduler_of(store, posts) as scheduler:
            await asyncio.sleep(SETTLE)
            assert posts.calls == []  # 08:59:50 in Berlin: not yet

            await wake_at(traveller, at(BERLIN, 2026, 11, 16, 9, 0, 1), scheduler)
            [(channel, due)] = await fired(posts, 1)
            assert channel == "C0BERLIN"
            assert due == at(BERLIN, 2026, 11, 16, 9, 0) and due.tzinfo == BERLIN
            assert due.astimezone(UTC) == datetime(2026, 11, 16, 8, 0, tzinfo=UTC)
            assert scheduler.next_run(TEAM, "C0BERLIN") == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
            assert scheduler.next_run(TEAM, "C0NEWYORK") == datetime(2026, 11, 20, 22, 30, tzinfo=UTC)

            await wake_at(traveller, datetime(2026, 11, 20, 22, 29, 50, tzinfo=UTC), scheduler)
            assert len(posts.calls) == 1  # 17:29:50 in New York
            await wake_at(traveller, datetime(2026, 11, 20, 22, 30, 1, tzinfo=UTC), scheduler)
            channel, due = (await fired(posts, 2))[1]
            assert channel == "C0NEWYORK"
            assert due == at(NEW_YORK, 2026, 11, 20, 17, 30)
            assert due.astimezone(UTC) == datetime(2026, 11, 20, 22, 30, tzinfo=UTC)


# -- 2. across DST changes ------------------------------------------------------------------------------------


async def test_a_week_across_the_end_of_summer_time_posts_at_09_00_local_both_mondays(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(BERLIN, 2026, 10, 18, 12, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN)
        async with scheduler_of(store, posts) as scheduler:
            await wake_at(traveller, datetime(2026, 10, 19, 7, 0, 1, tzinfo=UTC), scheduler)
            [(_, before)] = await fired(posts, 1)
            assert before == at(BERLIN, 2026, 10, 19, 9, 0)
            assert before.astimezone(UTC) == datetime(2026, 10, 19, 7, 0, tzinfo=UTC)  # CEST, UTC+2
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 10, 26, 8, 0, tzinfo=UTC)

            await wake_at(traveller, datetime(2026, 10, 26, 7, 0, 1, tzinfo=UTC), scheduler)
            assert len(posts.calls) == 1  # 07:00 UTC is 08:00 in Berlin after the change on 25 Oct
            await wake_at(traveller, datetime(2026, 10, 26, 8, 0, 1, tzinfo=UTC), scheduler)
            _, after = (await fired(posts, 2))[1]
            assert after == at(BERLIN, 2026, 10, 26, 9, 0)
            assert after.astimezone(UTC) == datetime(2026, 10, 26, 8, 0, tzinfo=UTC)  # CET, UTC+1

    week = Period.before_day_of(after)
    assert (week.start, week.end) == (at(BERLIN, 2026, 10, 19, 0, 0), at(BERLIN, 2026, 10, 26, 0, 0))
    start, end = week.utc  # what the history is queried with
    assert end - start == timedelta(hours=169)
    assert week.week == "2026-W43"


async def test_a_week_across_the_start_of_us_daylight_time(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(NEW_YORK, 2026, 3, 2, 12, 0), tick=True) as traveller:
        set_digest(store, FRI, 17, 30, NEW_YORK)
        set_digest(store, SUN, 2, 30, NEW_YORK, channel="C0OTHER")  # a time that does not exist on 8 March
        async with scheduler_of(store, posts) as scheduler:
            await wake_at(traveller, datetime(2026, 3, 6, 22, 30, 1, tzinfo=UTC), scheduler)  # EST, UTC-5
            assert await fired(posts, 1) == [(CHANNEL, at(NEW_YORK, 2026, 3, 6, 17, 30))]
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 3, 13, 21, 30, tzinfo=UTC)

            # 02:00 jumps to 03:00 that Sunday: its digest comes at 03:30 EDT, an hour later, not a week later.
            await wake_at(traveller, datetime(2026, 3, 8, 7, 30, 1, tzinfo=UTC), scheduler)
            channel, at_night = (await fired(posts, 2))[1]
            assert channel == "C0OTHER"
            assert at_night.astimezone(UTC) == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
            assert Period.before_day_of(at_night).week == "2026-W10"

            await wake_at(traveller, datetime(2026, 3, 13, 21, 30, 1, tzinfo=UTC), scheduler)  # EDT, UTC-4
            assert (await fired(posts, 3))[2] == (CHANNEL, at(NEW_YORK, 2026, 3, 13, 17, 30))

    start, end = Period.before_day_of(posts.calls[2][1]).utc
    assert (start, end) == (datetime(2026, 3, 6, 5, 0), datetime(2026, 3, 13, 4, 0))  # 167 hours


# -- 3. catch-up after downtime -------------------------------------------------------------------------------


async def test_a_digest_missed_while_down_is_posted_once_when_back_within_the_grace(store: Store) -> None:
    posts = ClaimingPosts(store)
    with time_machine.travel(at(BERLIN, 2026, 11, 9, 12, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN)  # a week before
        traveller.move_to(at(BERLIN, 2026, 11, 16, 11, 0))  # down at 09:00, back at 11:00
        async with scheduler_of(store, posts) as scheduler:
            [(_, due)] = await fired(posts, 1)
            assert due == at(BERLIN, 2026, 11, 16, 9, 0)
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)

        traveller.move_to(at(BERLIN, 2026, 11, 16, 11, 30))  # another process on the database, or a restart
        again = ClaimingPosts(store)
        async with scheduler_of(store, again) as scheduler:
            await until(lambda: again.refused == 1, "the second scheduler to try, and find the week claimed")
            assert again.calls == []
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)

    [claim] = posted_weeks(store, CHANNEL)
    assert (claim.week, claim.state) == ("2026-W47", "posted")  # claimed as the week it is posted in


async def test_a_digest_missed_by_more_than_the_grace_is_not_posted(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(BERLIN, 2026, 11, 9, 12, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN)
        traveller.move_to(at(BERLIN, 2026, 11, 16, 22, 0))  # 13 hours late
        async with scheduler_of(store, posts) as scheduler:
            await asyncio.sleep(SETTLE)
            assert posts.calls == []
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


async def test_a_subscription_made_after_its_time_today_starts_next_week(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(BERLIN, 2026, 11, 16, 10, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN)  # at 10:00 on Monday, for 09:00
        async with scheduler_of(store, posts) as scheduler:
            await asyncio.sleep(SETTLE)
            assert posts.calls == []
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
            await wake_at(traveller, at(BERLIN, 2026, 11, 23, 9, 0, 1), scheduler)
            [(_, due)] = await fired(posts, 1)
            assert due == at(BERLIN, 2026, 11, 23, 9, 0)


# -- 4. changes take effect at once ---------------------------------------------------------------------------


async def test_schedule_and_unschedule_change_the_next_run_at_once(store: Store) -> None:
    with time_machine.travel(at(BERLIN, 2026, 11, 15, 12, 0), tick=True):
        async with scheduler_of(store, Posts()) as scheduler:
            assert scheduler.next_run(TEAM, CHANNEL) is None
            first = scheduler.schedule(set_digest(store, MON, 9, 0, BERLIN))
            assert first == scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 16, 8, 0, tzinfo=UTC)

            moved = scheduler.schedule(set_digest(store, TUE, 14, 15, BERLIN))
            assert moved == scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 17, 13, 15, tzinfo=UTC)
            assert len([job for job in scheduler.scheduler.get_jobs() if job.id.startswith("digest:")]) == 1

            scheduler.unschedule(TEAM, CHANNEL)
            assert scheduler.next_run(TEAM, CHANNEL) is None


async def test_sync_follows_changes_made_by_another_process(store: Store) -> None:
    with time_machine.travel(at(BERLIN, 2026, 11, 15, 12, 0), tick=True):
        set_digest(store, MON, 9, 0, BERLIN)
        async with scheduler_of(store, Posts()) as scheduler:
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 16, 8, 0, tzinfo=UTC)

            set_digest(store, WED, 11, 0, NEW_YORK)  # changed directly in the database
            set_digest(store, FRI, 8, 0, BERLIN, channel="C0OTHER")  # and a new channel
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 16, 8, 0, tzinfo=UTC)
            await scheduler.sync()
            assert scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 18, 16, 0, tzinfo=UTC)
            assert scheduler.next_run(TEAM, "C0OTHER") == datetime(2026, 11, 20, 7, 0, tzinfo=UTC)

            assert unsubscribe(store, team_id=TEAM, channel_id=CHANNEL)
            await scheduler.sync()
            assert scheduler.next_run(TEAM, CHANNEL) is None
            assert scheduler.next_run(TEAM, "C0OTHER") == datetime(2026, 11, 20, 7, 0, tzinfo=UTC)


async def test_the_old_job_does_not_post_at_the_old_time_after_a_change_in_the_database(store: Store) -> None:
    posts = Posts()
    with time_machine.travel(at(BERLIN, 2026, 11, 15, 12, 0), tick=True) as traveller:
        set_digest(store, MON, 9, 0, BERLIN)
        set_digest(store, MON, 9, 0, BERLIN, channel="C0OTHER")
        # No sync before the old time: only the firing job itself can notice the changes.
        async with scheduler_of(store, posts, sync_seconds=30 * 86400) as scheduler:
            traveller.move_to(at(BERLIN, 2026, 11, 16, 8, 0))
            set_digest(store, MON, 10, 0, BERLIN)  # another process moves it to 10:00
            assert unsubscribe(store, team_id=TEAM, channel_id="C0OTHER")  # and turns the other channel off

            await wake_at(traveller, at(BERLIN, 2026, 11, 16, 9, 0, 1), scheduler)
            await until(lambda: scheduler.next_run(TEAM, CHANNEL) == datetime(2026, 11, 16, 9, 0, tzinfo=UTC),
                        "the job to follow the new time")
            assert scheduler.next_run(TEAM, "C0OTHER") is None
            assert posts.calls == []

            await wake_at(traveller, at(BERLIN, 2026, 11, 16, 10, 0, 1), scheduler)
            assert await fired(posts, 1) == [(CHANNEL, at(BERLIN, 2026, 11, 16, 10, 0))]
            assert subscription(store, team_id=TEAM, channel_id=CHANNEL).hour == 10


# -- 5. and 6. real bots: one post per channel and week -------------------------------------------------------


@asynccontextmanager
async def bots(settings: Settings, db_url: str, count: int) -> AsyncIterator[list[RunningBot]]:
    """`count` real bots in HTTP mode on one database, stopped afterwards."""
    started: list[RunningBot] = []
    try:
        for _ in range(count):
            started.append(await start_bot(settings.model_copy(update={"database_url": db_url, "port": 0}),
                                           host="127.0.0.1"))
        yield started
    finally:
        for running in started:
            await running.stop(drain=5)


def judged(store: Store, rubric: Rubric, rows: list[Row], *, days_ago: int = 0) -> None:
    """Judgments made in CHANNEL `days_ago` days before now, in runs that are done (no bot takes them up)."""
    add(store, rubric, [replace(row, days_ago=days_ago) for row in rows], channel=CHANNEL, user="U0USER", team=TEAM)
    for run in unfinished_runs(store, source="slack"):
        update_run(store, run.id, status="done")


def digests_in(slack_server: FakeSlackServer, channel: str) -> list[dict]:
    """The digest messages posted in a channel (marked by their metadata)."""
    return [m for (ch, _), m in sorted(slack_server.messages.items())
            if ch == channel and (m.get("metadata") or {}).get("event_type") == DIGEST_EVENT]


async def test_two_bots_on_one_database_post_one_digest_with_its_chart(
        bot_settings: Settings, db_url: str, slack_server: FakeSlackServer, rubrics, caplog) -> None:
    caplog.set_level(logging.INFO, logger="bot.slack.flows.digest_post")
    eth = rubrics.get("eth")
    store = Store.open(db_url)
    try:
        with time_machine.travel(at(BERLIN, 2026, 11, 15, 12, 0), tick=True) as traveller:
            judged(store, eth, [Row("campus-bot-v1", "scored", 40, False, "Generic")] * 2, days_ago=7)
            judged(store, eth, [Row("campus-bot-v1", "scored", 60, True, "Correct"),
                                Row("campus-bot-v2", "scored", 100, True, "Correct")])
            set_digest(store, MON, 9, 0, BERLIN)
            async with bots(bot_settings, db_url, 2) as both:
                schedulers = [running.digests.scheduler for running in both]
                assert [s.next_run(TEAM, CHANNEL) for s in schedulers] == [datetime(2026, 11, 16, 8, 0, tzinfo=UTC)] * 2

                await wake_at(traveller, at(BERLIN, 2026, 11, 16, 9, 0, 1), *schedulers)
                await until(lambda: digests_in(slack_server, CHANNEL), "the digest")
                await until(lambda: "is posted already" in caplog.text, "the other bot to find the week claimed")
                await until(lambda: not any(running.context.tasks for running in both), "both bots to finish")

        [digest] = digests_in(slack_server, CHANNEL)
        assert digest["metadata"]["event_payload"] == {"week": "2026-W46", "weekly": True, "posted_in": "2026-W47"}
        assert "campus-bot-v2" in str(digest["blocks"])  # this week's judgments, not a quiet week
        [claim] = posted_weeks(store, CHANNEL)
        assert (claim.week, claim.state, claim.message_ts) == ("2026-W47", "posted", digest["ts"])  # posted in W47
        [chart] = slack_server.uploads(CHANNEL, digest["ts"])
        assert chart["name"] == "judgebot-trend-2026-W46.png"
        assert chart["content"].startswith(b"\x89PNG\r\n\x1a\n")
        assert len(slack_server.uploads(CHANNEL)) == 1
    finally:
        store.engine.dispose()


async def test_moving_the_digest_from_tuesday_to_monday_posts_on_the_first_monday(
        bot_settings: Settings, slack_server: FakeSlackServer, caplog) -> None:
    caplog.set_level(logging.INFO, logger="bot.slack.flows.digest_post")
    with time_machine.travel(at(BERLIN, 2026, 11, 8, 12, 0), tick=True) as traveller:
        async with bots(bot_settings, bot_settings.db_url, 1) as [running]:
            scheduler = running.digests.scheduler
            scheduler.schedule(set_digest(running.context.store, TUE, 9, 0, BERLIN))
            await wake_at(traveller, at(BERLIN, 2026, 11, 10, 9, 0, 1), scheduler)
            await until(lambda: len(digests_in(slack_server, CHANNEL)) == 1, "Tuesday's digest (3-9 Nov)")

            traveller.move_to(at(BERLIN, 2026, 11, 11, 12, 0))  # /judge digest on monday 09:00, as turn_on does it
            assert scheduler.schedule(set_digest(running.context.store, MON, 9, 0, BERLIN)) == at(BERLIN, 2026, 11, 16, 9)
            await wake_at(traveller, at(BERLIN, 2026, 11, 16, 9, 0, 1), scheduler)
            await until(lambda: len(digests_in(slack_server, CHANNEL)) == 2 or "is posted already" in caplog.text,
                        "Monday's digest (9-15 Nov), or its refusal")
            await until(lambda: not running.context.tasks, "the bot to finish")

    # Without it, 10-15 Nov are in no digest and the channel gets none between 10 and 23 Nov.
    assert len(digests_in(slack_server, CHANNEL)) == 2


@pytest.mark.slow
async def test_a_failed_post_gives_the_claim_up_and_a_posted_week_is_not_posted_again(
        bot_settings: Settings, db_url: str, slack_server: FakeSlackServer) -> None:
    week = Period.of_week("2026-W46", BERLIN)
    async with bots(bot_settings, db_url, 1) as [running]:
        poster, store = running.digests.poster, running.context.store
        slack_server.fail("chat.postMessage", "rate_limited")  # Slack refused it: nothing was posted
        with pytest.raises(SlackApiError, match="rate_limited"):  # no `until`: not tried again
            await poster.post_weekly(TEAM, CHANNEL, week)
        assert len(slack_server.calls_to("chat.postMessage")) == 1
        assert posted_weeks(store, CHANNEL) == []  # given up: the next try may post
        slack_server.fail("chat.postMessage", "fatal_error")  # Slack's own failure: it may have been posted
        with pytest.raises(SlackApiError, match="fatal_error"):
            await poster.post_weekly(TEAM, CHANNEL, week)
        assert [claim.state for claim in posted_weeks(store, CHANNEL)] == ["unknown"]  # the next try looks first
        slack_server.fail("chat.postMessage", "internal_error", status=503)  # the same, as an HTTP error
        with pytest.raises(SlackApiError):
            await poster.post_weekly(TEAM, CHANNEL, week)
        assert len(slack_server.calls_to("chat.postMessage")) == 3  # not sent again by the client on its own
        assert [claim.state for claim in posted_weeks(store, CHANNEL)] == ["unknown"]

        ts = await poster.post_weekly(TEAM, CHANNEL, week)
        assert ts is not None
        [claim] = posted_weeks(store, CHANNEL)
        assert (claim.week, claim.state, claim.message_ts) == ("2026-W47", "posted", ts)  # W46, posted in W47
        assert [m["ts"] for m in digests_in(slack_server, CHANNEL)] == [ts]

        assert len(slack_server.calls_to("conversations.history")) == 2  # it looked each time, found none, posted
        assert await poster.post_weekly(TEAM, CHANNEL, week) is None
        assert len(slack_server.calls_to("chat.postMessage")) == 4
        assert [m["ts"] for m in digests_in(slack_server, CHANNEL)] == [ts]


async def test_a_refusal_that_waiting_cannot_cure_is_not_retried(bot_settings: Settings, db_url: str,
                                                                 slack_server: FakeSlackServer) -> None:
    week = Period.of_week("2026-W46", BERLIN)
    async with bots(bot_settings, db_url, 1) as [running]:
        started = asyncio.get_running_loop().time()
        with pytest.raises(SlackApiError, match="not_in_channel"):  # within the grace, yet not tried again
            await running.digests.poster.post_weekly(TEAM, "C0NOBOT", week,
                                                     until=datetime.now(UTC) + timedelta(hours=12))
        assert asyncio.get_running_loop().time() - started < 5
        assert len(slack_server.calls_to("chat.postMessage")) == 1
        assert posted_weeks(running.context.store, "C0NOBOT") == []


def test_only_the_process_that_claimed_a_week_releases_or_completes_it(store: Store) -> None:
    claim = claim_week(store, team_id=TEAM, channel_id=CHANNEL, week="2026-W47")
    assert claim is not None and claim_week(store, team_id=TEAM, channel_id=CHANNEL, week="2026-W47") is None
    with store.session() as session:  # as if a process on another host had taken the claim over
        session.execute(update(DigestPost).where(DigestPost.id == claim.id).values(owner="elsewhere:1:abc"))
        session.commit()
    release_week(store, claim_id=claim.id)
    mark_posted(store, claim_id=claim.id, message_ts="1.2")
    [held] = posted_weeks(store, CHANNEL)
    assert (held.owner, held.state, held.message_ts) == ("elsewhere:1:abc", "posting", None)


async def test_a_digest_whose_answer_was_lost_is_found_in_the_channel_not_posted_again(
        bot_settings: Settings, db_url: str, slack_server: FakeSlackServer) -> None:
    week = Period.of_week("2026-W46", BERLIN)
    with time_machine.travel(at(BERLIN, 2026, 11, 16, 9, 0), tick=True):
        async with bots(bot_settings, db_url, 1) as [running]:
            store = running.context.store
            impatient = AsyncWebClient(token=slack_server.bot_token, base_url=slack_server.api_url, timeout=1)
            poster = DigestPoster(store, running.context.rubrics, impatient)
            slack_server.distributed = True  # history read a call a minute, 15 messages a call
            slack_server.answer_late("chat.postMessage", 3)
            with pytest.raises(TimeoutError):
                await poster.post_weekly(TEAM, CHANNEL, week)
            [posted] = digests_in(slack_server, CHANNEL)  # in the channel; the bot never learnt it
            [claim] = posted_weeks(store, CHANNEL)
            assert claim.state == "unknown" and slack_server.calls_to("conversations.history") == []

            assert await poster.post_weekly(TEAM, CHANNEL, week) is None  # the next try looks first, once
            assert len(slack_server.calls_to("chat.postMessage")) == 1
            [claim] = posted_weeks(store, CHANNEL)
            assert (claim.week, claim.state, claim.message_ts) == ("2026-W47", "posted", posted["ts"])
            assert await running.digests.poster.post_weekly(TEAM, CHANNEL, week) is None
            assert digests_in(slack_server, CHANNEL) == [posted]
            assert len(slack_server.calls_to("conversations.history")) == 1 and slack_server.read_refused == []


async def test_a_claim_taken_over_from_a_process_killed_after_posting_does_not_post_again(
        bot_settings: Settings, db_url: str, slack_server: FakeSlackServer) -> None:
    week, other = Period.of_week("2026-W46", BERLIN), Period.of_week("2026-W45", BERLIN)
    with time_machine.travel(at(BERLIN, 2026, 11, 16, 9, 30), tick=True):
        async with bots(bot_settings, db_url, 1) as [running]:
            store, poster = running.context.store, running.digests.poster
            slack_server.distributed = True  # history read a call a minute, 15 messages a call
            with store.session() as session:  # a process on another host claims the week...
                session.add(DigestPost(team_id=TEAM, channel_id=CHANNEL, week=week.posting_week,
                                       owner="gone-host:1:dead", claimed_at=utcnow()))
                session.commit()
            await poster.post(CHANNEL, week, weekly=False)  # `/judge digest now`: not the weekly digest
            ts = await poster.post(CHANNEL, week, weekly=True)  # ...posts, then is killed before it records it
            await poster.post(CHANNEL, other, weekly=True)  # a digest of another week: not this one
            with time_machine.travel(at(BERLIN, 2026, 11, 16, 9, 45), tick=True):  # its claim is stale by now
                assert await poster.post_weekly(TEAM, CHANNEL, week) is None
            assert len(slack_server.calls_to("conversations.history")) == 1 and slack_server.read_refused == []
            assert len(slack_server.calls_to("chat.postMessage")) == 3
            [claim] = posted_weeks(store, CHANNEL)
            assert (claim.state, claim.message_ts, claim.owner) == ("posted", ts, process_name())

            # A week with no digest in the channel is posted, searching past what is not its own.
            later = Period.of_week("2026-W47", BERLIN)
            with time_machine.travel(at(BERLIN, 2026, 11, 23, 9, 0), tick=True):
                posted = await poster.post_weekly(TEAM, CHANNEL, later)
            assert posted is not None and len(slack_server.calls_to("chat.postMessage")) == 4
