"""One message kept up to date while a run goes on, edited no more often than Slack's rate limits allow."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.runs import Progress

log = logging.getLogger(__name__)

EDIT_EVERY = 3.0  # seconds between edits of one message: chat.update allows about one a second per channel


class ProgressMessage:
    """Shows the newest Progress in message `ts`; `update` is cheap, the edits follow `every()` seconds apart."""

    def __init__(self, client: AsyncWebClient, channel: str, ts: str, render: Callable[[Progress], dict[str, Any]],
                 *, every: Callable[[], float] = lambda: EDIT_EVERY) -> None:
        self.client, self.channel, self.ts, self.render, self.every = client, channel, ts, render, every
        self.latest: Progress | None = None
        self.edits = 0
        self._last_edit = 0.0
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin editing in the background."""
        self._task = asyncio.create_task(self._keep_up(), name=f"progress of {self.ts}")

    def update(self, event: Progress) -> None:
        """Note the newest progress; the message shows it at the next allowed edit."""
        self.latest = event
        self._changed.set()

    async def _keep_up(self) -> None:
        while True:
            await self._changed.wait()
            await self.wait_turn()
            self._changed.clear()
            if self.latest is not None:
                await self.edit(self.render(self.latest))

    async def wait_turn(self) -> None:
        """Wait until the next edit is allowed."""
        wait = self._last_edit + self.every() - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    async def edit(self, shown: dict[str, Any]) -> bool:
        """Put `shown` into the message now (failures are logged: progress is never worth a run)."""
        try:
            await self.client.chat_update(channel=self.channel, ts=self.ts, **shown)
        except Exception as err:
            log.warning("could not update the progress message %s in %s: %s", self.ts, self.channel,
                        type(err).__name__)
            return False
        finally:
            # Counted from the answer, so that Slack sees the edits at least `every` seconds apart.
            self._last_edit = time.monotonic()
        self.edits += 1
        return True

    async def close(self, final: dict[str, Any] | None = None) -> None:
        """Stop editing; with `final`, show it as the last edit, still keeping the spacing between edits."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if final is not None:
            await self.wait_turn()
            await self.edit(final)
