"""RETENTION_DAYS in the bot: the texts of old judgments removed shortly after it starts, then once a day."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from bot.csvfiles.folders import remove_left_over
from bot.slack.context import Context
from bot.store import Removed, Shapes, remove_old_texts, utcnow

log = logging.getLogger(__name__)

EVERY = timedelta(days=1)
FIRST_AFTER = timedelta(minutes=5)  # after a start, once the bot has settled: a bot restarted daily still runs it


class DailyRetention:
    """Removes the texts of judgments older than `days`, every `every`. Every process on the database may run one:
    a pass changes nothing a second time, and on PostgreSQL two passes skip each other's rows."""

    def __init__(self, ctx: Context, days: int, *, every: timedelta = EVERY, first_after: timedelta = FIRST_AFTER) -> None:
        self.ctx, self.days, self.every, self.first_after = ctx, days, every, first_after
        self.scheduler = AsyncIOScheduler(timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1})

    async def start(self) -> None:
        """Schedule the passes in the running event loop."""
        self.scheduler.start()
        self.scheduler.add_job(self.remove, IntervalTrigger(seconds=self.every.total_seconds()), id="retention",
                               replace_existing=True, misfire_grace_time=None,
                               next_run_time=datetime.now(UTC) + self.first_after)

    def stop(self) -> None:
        """Stop; a batch under way finishes in its thread."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def remove(self) -> Removed | None:
        """One pass; None when it failed (logged: the next pass tries again)."""
        before = utcnow() - timedelta(days=self.days)
        try:
            removed = await self.ctx.db(remove_old_texts, before=before, shapes=Shapes.of(self.ctx.rubrics))
            if folders := await asyncio.to_thread(remove_left_over, before):
                log.info("deleted %d temporary folders a stopped bot left behind", folders)
        except Exception:
            log.warning("could not remove the texts older than %d days; the next pass tries again", self.days,
                        exc_info=True)
            return None
        if removed.total:
            pruned = removed.revisions
            log.info("removed the texts older than %d days: %d judgments, %d samples, %d notes, %d messages; from %d "
                     "revisions of rubrics (%d in force) %d worked examples and %d notes copied from them", self.days,
                     removed.judgments, removed.samples, removed.notes, removed.messages, pruned.revisions,
                     pruned.in_force, pruned.examples, pruned.notes)
        return removed
