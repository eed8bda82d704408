"""Schedules of channels: one APScheduler job per channel's entry (a digest subscription, a review nudge), in the bot's
event loop, kept in step with the database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Generic, Protocol, TypeVar
from zoneinfo import ZoneInfo

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.store import DigestSubscription, Store, all_subscriptions, subscription

log = logging.getLogger(__name__)

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SYNC_SECONDS = 60.0  # how soon an entry changed by another process is followed here


class ChannelEntry(Protocol):
    """What a channel's schedule is kept for: the channel it belongs to."""

    @property
    def team_id(self) -> str: ...

    @property
    def channel_id(self) -> str: ...


Entry = TypeVar("Entry", bound=ChannelEntry)


def trigger_of(sub: DigestSubscription) -> CronTrigger:
    """The weekly trigger of a subscription, at its local day and time (DST included)."""
    return CronTrigger(day_of_week=DAYS[sub.weekday], hour=sub.hour, minute=sub.minute,
                       timezone=ZoneInfo(sub.timezone))


def next_posting(sub: DigestSubscription, now: datetime | None = None) -> datetime:
    """When the subscription's next digest is due, in its timezone."""
    found = trigger_of(sub).get_next_fire_time(None, now or datetime.now(UTC))
    assert found is not None  # a weekly cron trigger always has a next time
    return found


class ChannelScheduler(Generic[Entry]):
    """Fires `post(entry, due)` for each channel's entry at the times of its trigger, in the bot's event loop, and
    follows the database: entries changed or removed by another process are followed within `sync_seconds`.

    Every process on the database runs one; the database, not the job store, decides who posts (through a claim).
    An entry missed while the bot was down is posted when it is back within `grace`, once. Subclasses say what the
    entries are and when each fires.
    """

    kind = "job"

    def __init__(self, store: Store, post: Callable[[Entry, datetime], Awaitable[None]], *, grace: timedelta,
                 sync_seconds: float = SYNC_SECONDS) -> None:
        self.store, self.post, self.grace, self.sync_seconds = store, post, grace, sync_seconds
        self.scheduler = AsyncIOScheduler(timezone=UTC, job_defaults={
            "misfire_grace_time": int(grace.total_seconds()), "coalesce": True, "max_instances": 1})
        self._scheduled: dict[str, tuple[object, ...]] = {}

    # -- what a subclass says -----------------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        """Every channel's entry in the database."""
        raise NotImplementedError

    def entry(self, team_id: str, channel_id: str) -> Entry | None:
        """One channel's entry as it is now, if it has one."""
        raise NotImplementedError

    def trigger_of(self, entry: Entry) -> CronTrigger:
        """When the entry fires."""
        raise NotImplementedError

    def set_at(self, entry: Entry) -> datetime:
        """When the entry was last set (naive UTC): a time missed before that is not caught up."""
        raise NotImplementedError

    def signature(self, entry: Entry) -> tuple[object, ...]:
        """What tells an entry changed."""
        return (self.set_at(entry),)

    # -- the schedule ---------------------------------------------------------------------------------------------

    def job_id(self, team_id: str, channel_id: str) -> str:
        """A stable job id: the same channel's job is replaced, never doubled."""
        return f"{self.kind}:{team_id}:{channel_id}"

    def next_fire(self, entry: Entry, now: datetime | None = None) -> datetime:
        """When the entry fires next, in its timezone."""
        found = self.trigger_of(entry).get_next_fire_time(None, now or datetime.now(UTC))
        assert found is not None  # a weekly or weekday cron trigger always has a next time
        return found

    def last_due(self, entry: Entry, now: datetime) -> datetime | None:
        """The entry's fire time within the last `grace` before `now`, if there was one."""
        found = self.trigger_of(entry).get_next_fire_time(None, now - self.grace)
        return found if found is not None and found <= now else None

    async def start(self) -> None:
        """Start in the running event loop with every entry of the database."""
        self.scheduler.start()
        await self.sync()
        self.scheduler.add_job(self.sync, IntervalTrigger(seconds=self.sync_seconds), id=f"{self.kind}-sync",
                               replace_existing=True, misfire_grace_time=None)

    def stop(self) -> None:
        """Stop firing; a post under way is left to finish (or to be made again after a restart)."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def sync(self) -> None:
        """Follow the database: schedule new and changed entries, drop removed ones."""
        try:
            found = await asyncio.to_thread(self.entries)
        except Exception:
            log.warning("could not read the %s schedule; it stays as it was", self.kind, exc_info=True)
            return
        wanted = {self.job_id(entry.team_id, entry.channel_id): entry for entry in found}
        for gone in set(self._scheduled) - set(wanted):
            self._remove(gone)
        for ident, entry in wanted.items():
            if self._scheduled.get(ident) != self.signature(entry):
                try:
                    self.schedule(entry)
                except Exception:  # one bad row (a timezone this machine lacks) must not stop the others
                    log.warning("could not schedule the %s of %s", self.kind, entry.channel_id, exc_info=True)

    def schedule(self, entry: Entry) -> datetime:
        """(Re)schedule an entry at once; return when it fires next.

        A time missed within the grace period, after the entry was last set, comes first: that is the catch-up of a
        bot that was down.
        """
        now = datetime.now(UTC)
        missed = self.last_due(entry, now)
        first = missed if missed is not None and missed > self.set_at(entry).replace(tzinfo=UTC) else \
            self.next_fire(entry, now)
        ident = self.job_id(entry.team_id, entry.channel_id)
        self.scheduler.add_job(self._fire, self.trigger_of(entry), args=(entry.team_id, entry.channel_id), id=ident,
                               name=f"{self.kind} of {entry.channel_id}", replace_existing=True, next_run_time=first)
        self._scheduled[ident] = self.signature(entry)
        return first

    def unschedule(self, team_id: str, channel_id: str) -> None:
        """Drop a channel's job at once."""
        self._remove(self.job_id(team_id, channel_id))

    def next_run(self, team_id: str, channel_id: str) -> datetime | None:
        """When this process fires the channel's job next, if it is scheduled here."""
        job = self.scheduler.get_job(self.job_id(team_id, channel_id))
        return job.next_run_time if job is not None else None

    def _remove(self, ident: str) -> None:
        self._scheduled.pop(ident, None)
        try:
            self.scheduler.remove_job(ident)
        except JobLookupError:
            pass

    async def _fire(self, team_id: str, channel_id: str) -> None:
        """The entry is due: read it as it is now, and post if it is still due."""
        entry = await asyncio.to_thread(self.entry, team_id, channel_id)
        if entry is None:  # turned off by another process
            self.unschedule(team_id, channel_id)
            return
        due = self.last_due(entry, datetime.now(UTC))
        if self._scheduled.get(self.job_id(team_id, channel_id)) != self.signature(entry):
            self.schedule(entry)  # changed by another process: follow it
        if due is None or due <= self.set_at(entry).replace(tzinfo=UTC):
            return  # not due any more, or due before the entry was set as it is now
        await self.post(entry, due.astimezone(self.trigger_of(entry).timezone))


class DigestScheduler(ChannelScheduler[DigestSubscription]):
    """Posts each subscribed channel's digest at its weekly time, through `post(subscription, due)` (due in the
    subscription's timezone); subscriptions.claim_week decides which process posts."""

    kind = "digest"

    def entries(self) -> list[DigestSubscription]:
        return all_subscriptions(self.store)

    def entry(self, team_id: str, channel_id: str) -> DigestSubscription | None:
        return subscription(self.store, team_id=team_id, channel_id=channel_id)

    def trigger_of(self, entry: DigestSubscription) -> CronTrigger:
        return trigger_of(entry)

    def set_at(self, entry: DigestSubscription) -> datetime:
        return entry.updated_at

    def signature(self, entry: DigestSubscription) -> tuple[object, ...]:
        return entry.weekday, entry.hour, entry.minute, entry.timezone, entry.updated_at
