"""One message kept up to date while a run goes on, edited no more often than Slack's rate limits allow."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from bot.runs import Progress
from bot.slack.messenger import Messenger
from bot.slack.views.run_stream import Ending

EDIT_EVERY = 3.0  # seconds between edits of one message: chat.update allows about one a second per channel


class ProgressMessage:
    """Shows the newest Progress in message `ts`; `update` is cheap, the edits follow `every()` seconds apart."""

    def __init__(self, say: Messenger, channel: str, ts: str, render: Callable[[Progress], dict[str, Any]],
                 *, every: Callable[[], float] = lambda: EDIT_EVERY) -> None:
        self.say, self.channel, self.ts, self.render, self.every = say, channel, ts, render, every
        self.latest: Progress | None = None
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
        """Put `shown` into the message now (a refusal is logged: progress is never worth a run)."""
        try:
            return (await self.say.edit(self.channel, self.ts, shown, what="the progress message")).ok
        finally:
            # Counted from the answer, so that Slack sees the edits at least `every` seconds apart.
            self._last_edit = time.monotonic()

    async def stop_following(self) -> None:
        """Stop showing new progress (the message stays as it is, for `close` to end)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def close(self, final: dict[str, Any] | None = None, *, ending: Ending | None = None) -> None:
        """Stop editing; with `final`, show it as the last edit, still keeping the spacing between edits (`ending`
        words the end of a streamed progress: this message has none)."""
        await self.stop_following()
        if final is not None:
            await self.wait_turn()
            await self.edit(final)
