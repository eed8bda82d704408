"""The digest schedule: one APScheduler job per subscription, in the bot's event loop, kept in step with the database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.store import DigestSubscription, Store, all_subscriptions, subscription

log = logging.getLogger(__name__)

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SYNC_JOB = "digest-subscriptions"
SYNC_SECONDS = 60.0  # how soon a subscription changed by another process is followed here

Post = Callable[[DigestSubscription, datetime], Awaitable[None]]


def trigger_of(sub: DigestSubscription) -> CronTrigger:
    """The weekly trigger of a subscription, at its local day and time (DST included)."""
    return CronTrigger(day_of_week=DAYS[sub.weekday], hour=sub.hour, minute=sub.minute,
                       timezone=ZoneInfo(sub.timezone))


def next_posting(sub: DigestSubscription, now: datetime | None = None) -> datetime:
    """When the subscription's next digest is due, in its timezone."""
    found = trigger_of(sub).get_next_fire_time(None, now or datetime.now(UTC))
    assert found is not None  # a weekly cron trigger always has a next time
    return found


def last_due(sub: DigestSubscription, now: datetime, grace: timedelta) -> datetime | None:
    """The posting time of the subscription within the last `grace` before `now`, if there was one."""
    found = trigger_of(sub).get_next_fire_time(None, now - grace)
    return found if found is not None and found <= now else None


def job_id(team_id: str, channel_id: str) -> str:
    """A stable job id: the same channel's job is replaced, never doubled."""
    return f"digest:{team_id}:{channel_id}"


def _signature(sub: DigestSubscription) -> tuple[object, ...]:
    return sub.weekday, sub.hour, sub.minute, sub.timezone, sub.updated_at


class DigestScheduler:
    """Posts each subscribed channel's digest at its time, through `post(subscription, due)`.

    Every process on the database runs one; the database, not the job store, decides who posts (see
    subscriptions.claim_week). A bot that was down when a digest was due posts it when it is back
    within `grace`, once.
    """

    def __init__(self, store: Store, post: Post, *, grace: timedelta, sync_seconds: float = SYNC_SECONDS) -> None:
        self.store, self.post, self.grace, self.sync_seconds = store, post, grace, sync_seconds
        self.scheduler = AsyncIOScheduler(timezone=UTC, job_defaults={
            "misfire_grace_time": int(grace.total_seconds()), "coalesce": True, "max_instances": 1})
        self._scheduled: dict[str, tuple[object, ...]] = {}

    async def start(self) -> None:
        """Start in the running event loop with every subscription of the database."""
        self.scheduler.start()
        await self.sync()
        self.scheduler.add_job(self.sync, IntervalTrigger(seconds=self.sync_seconds), id=SYNC_JOB,
                               replace_existing=True, misfire_grace_time=None)

    def stop(self) -> None:
        """Stop firing; a digest being posted is left to finish (or to be posted again after a restart)."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def sync(self) -> None:
        """Follow the database: schedule new and changed subscriptions, drop removed ones."""
        try:
            subs = await asyncio.to_thread(all_subscriptions, self.store)
        except Exception:
            log.warning("could not read the digest subscriptions; the schedule stays as it was", exc_info=True)
            return
        wanted = {job_id(sub.team_id, sub.channel_id): sub for sub in subs}
        for gone in set(self._scheduled) - set(wanted):
            self._remove(gone)
        for ident, sub in wanted.items():
            if self._scheduled.get(ident) != _signature(sub):
                try:
                    self.schedule(sub)
                except Exception:  # one bad row (a timezone this machine lacks) must not stop the others
                    log.warning("could not schedule the digest of %s", sub.channel_id, exc_info=True)

    def schedule(self, sub: DigestSubscription) -> datetime:
        """(Re)schedule a subscription at once; return when it posts next.

        A posting time missed within the grace period, after the subscription was last set, comes first:
        that is the catch-up of a bot that was down.
        """
        trigger, now = trigger_of(sub), datetime.now(UTC)
        missed = last_due(sub, now, self.grace)
        if missed is not None and missed > sub.updated_at.replace(tzinfo=UTC):
            first = missed
        else:
            first = next_posting(sub, now)
        self.scheduler.add_job(self._fire, trigger, args=(sub.team_id, sub.channel_id),
                               id=job_id(sub.team_id, sub.channel_id), name=f"digest of {sub.channel_id}",
                               replace_existing=True, next_run_time=first)
        self._scheduled[job_id(sub.team_id, sub.channel_id)] = _signature(sub)
        return first

    def unschedule(self, team_id: str, channel_id: str) -> None:
        """Drop a channel's job at once."""
        self._remove(job_id(team_id, channel_id))

    def next_run(self, team_id: str, channel_id: str) -> datetime | None:
        """When this process will post the channel's digest next, if it is scheduled here."""
        job = self.scheduler.get_job(job_id(team_id, channel_id))
        return job.next_run_time if job is not None else None

    def _remove(self, ident: str) -> None:
        self._scheduled.pop(ident, None)
        try:
            self.scheduler.remove_job(ident)
        except JobLookupError:
            pass

    async def _fire(self, team_id: str, channel_id: str) -> None:
        """A digest is due: read the subscription as it is now, and post if it is still due."""
        sub = await asyncio.to_thread(subscription, self.store, team_id=team_id, channel_id=channel_id)
        if sub is None:  # turned off by another process
            self.unschedule(team_id, channel_id)
            return
        due = last_due(sub, datetime.now(UTC), self.grace)
        if self._scheduled.get(job_id(team_id, channel_id)) != _signature(sub):
            self.schedule(sub)  # changed by another process: follow it
        if due is None or due <= sub.updated_at.replace(tzinfo=UTC):
            return  # not due any more, or due before the subscription was set as it is now
        await self.post(sub, due.astimezone(ZoneInfo(sub.timezone)))
