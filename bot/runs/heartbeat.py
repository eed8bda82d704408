"""A run's sign of life while it is judged: the heartbeat beaten, the claims on its rows refreshed, and everything in
flight dropped when the run is cancelled (here or through another process), taken over, or no longer judged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.records import RunState
from bot.runs.ownership import HEARTBEAT_SECONDS
from bot.store import Store, beat_run, cancel_requested, get_run, judged_elsewhere, refresh_claims

log = logging.getLogger(__name__)

JOINED_LOOK = 1.0  # seconds between a helping process's looks at whether the run is still being judged


class Heartbeat:
    """The part of a run's execution that shows life and listens for a stop (mixed into bot.runs.execute's)."""

    store: Store
    run_id: int
    owner: str
    joining: bool
    since: datetime
    cancel: asyncio.Event
    stop: asyncio.Event
    stop_reason: str | None
    cancelled_by: str | None
    elsewhere: tuple[int, int, float]
    tasks: list[asyncio.Task[None]]
    in_db: Callable[..., Any]
    over_budget: Callable[[], None]
    report: Callable[[], None]

    async def watch(self) -> None:
        """Beat the heartbeat, and drop everything in flight when asked to cancel or when the run is taken over; a
        process helping another drops it too as soon as the run is no longer being judged (cancelled, paused)."""
        every = JOINED_LOOK if self.joining else HEARTBEAT_SECONDS
        looks = 0
        while True:
            try:
                await asyncio.wait_for(self.cancel.wait(), every)
                self.halt(None)
                return
            except TimeoutError:
                pass
            looks += 1
            try:
                if self.joining:
                    current = await self.in_db(get_run, self.store, self.run_id)
                    if current is None or current.status != RunState.RUNNING:
                        self.halt(None)
                        return
                elif not await self.in_db(beat_run, self.store, self.run_id, self.owner):
                    self.halt("another judgebot process took the run over")
                    return
                elif (asked := await self.in_db(cancel_requested, self.store, self.run_id)) is not None:
                    self.cancelled_by = asked  # a Cancel that reached another process of the bot
                    self.cancel.set()
                    self.halt(None)
                    return
                if looks * every >= HEARTBEAT_SECONDS:
                    looks = 0
                    await self.in_db(refresh_claims, self.store, self.run_id, self.owner)
                if not self.joining:
                    self.elsewhere = await self.in_db(judged_elsewhere, self.store, self.run_id, self.owner, self.since)
                    self.over_budget()
                    self.report()
            except Exception:  # a missed beat is not fatal; the next one may go through
                log.warning("could not record the heartbeat of run %s", self.run_id, exc_info=True)

    def halt(self, reason: str | None) -> None:
        """Stop taking rows and drop the rows in flight; the first reason given is the one the run ends with."""
        self.stop_reason = self.stop_reason or reason
        self.stop.set()
        for task in self.tasks:
            task.cancel()
