"""A run's progress streamed into its thread (chat.startStream / appendStream / stopStream) as tasks that advance,
falling back to the edited progress message wherever Slack refuses a stream."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.runs import Progress
from bot.slack.flows.progress import ProgressMessage
from bot.slack.messenger import Messenger, slack_error
from bot.slack.views.run_stream import Ending, RunStream, moved_up, restarted

log = logging.getLogger(__name__)

APPEND_EVERY = 1.0  # seconds between appends to one stream, at the least (chat.appendStream is Tier 4: 100+ a minute)


class StreamedProgress(ProgressMessage):
    """The progress of a run as a stream below its progress message, which is edited only when the stream starts and
    ends; if Slack refuses the stream (or drops it part way) the progress message is edited as it always was."""

    def __init__(self, say: Messenger, channel: str, ts: str, render: Callable[[Progress], dict[str, Any]], *,
                 stream: RunStream, thread_ts: str, team: str, user: str,
                 every: Callable[[], float], append_every: Callable[[], float] = lambda: APPEND_EVERY,
                 on_stream: Callable[[str | None], Awaitable[None]] | None = None) -> None:
        super().__init__(say, channel, ts, render, every=every)
        self.stream, self.thread_ts, self.team, self.user = stream, thread_ts, team, user
        self.append_every, self.on_stream = append_every, on_stream  # told the stream's ts, then None once ended
        self.stream_ts: str | None = None
        self.fell_back = False  # Slack refused the stream: the progress message shows the progress instead
        self._sent: dict[str, dict[str, Any]] = {}  # each task as last appended, so only changes are sent
        self._last_append = 0.0

    async def _keep_up(self) -> None:
        while True:
            await self._changed.wait()
            if self.fell_back:
                await self.wait_turn()
            else:
                await self._append_turn()
            self._changed.clear()
            if self.latest is None:
                continue
            if self.fell_back:
                await self.edit(self.render(self.latest))
            elif self.stream_ts is None:
                await self._open(self.latest)
            else:
                await self._append(self.latest)

    async def _append_turn(self) -> None:
        wait = self._last_append + self.append_every() - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    def _changes(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        changed = [chunk for chunk in chunks if chunk.get("type") != "task_update" or self._sent.get(chunk["id"]) != chunk]
        self._sent.update({chunk["id"]: chunk for chunk in changed if chunk.get("type") == "task_update"})
        return changed

    async def _open(self, event: Progress) -> None:
        chunks = self._changes([*self.stream.opening(), *self.stream.moving(event)])
        try:
            started = await self.say.client.chat_startStream(
                channel=self.channel, thread_ts=self.thread_ts, recipient_team_id=self.team,
                recipient_user_id=self.user, task_display_mode="plan", chunks=chunks)
        except Exception as err:
            log.warning("Slack refused to stream the progress in %s (%s): the progress message is edited instead",
                        self.channel, slack_error(err))
            await self._fall_back(event)
            return
        finally:
            self._last_append = time.monotonic()
        self.stream_ts = str(started["ts"])
        if self.on_stream is not None:
            await self.on_stream(self.stream_ts)
        await self.edit(self.stream.head())

    async def _append(self, event: Progress) -> None:
        chunks = self._changes(self.stream.moving(event))
        if not chunks or self.stream_ts is None:
            return
        try:
            await self.say.client.chat_appendStream(channel=self.channel, ts=self.stream_ts, chunks=chunks)
        except Exception as err:
            log.warning("the progress stream %s in %s ended early (%s): the progress message is edited instead",
                        self.stream_ts, self.channel, slack_error(err))
            await self._fall_back(event)
        finally:
            self._last_append = time.monotonic()

    async def _fall_back(self, event: Progress) -> None:
        self.fell_back = True
        if self.stream_ts is not None:  # dropped part way: ended if Slack still lets it be, pointing up
            await self._stop(moved_up())
        await self.wait_turn()
        await self.edit(self.render(event))

    async def _stop(self, chunks: list[dict[str, Any]]) -> None:
        ts, self.stream_ts = self.stream_ts, None  # ended once, whatever Slack answers
        if ts is not None and await end_stream(self.say, self.channel, ts, chunks) and self.on_stream is not None:
            await self.on_stream(None)

    async def close(self, final: dict[str, Any] | None = None, *, ending: Ending | None = None) -> None:
        """Stop following the run; end the stream with `ending`'s words on its tasks, and show `final` in the progress
        message."""
        await self.stop_following()
        if self.stream_ts is not None and not self.fell_back:
            await self._stop(self.stream.ending(self.latest, ending) if ending is not None else [])
        if final is not None:
            await self.wait_turn()
            await self.edit(final)


async def end_stream(say: Messenger, channel: str, ts: str, chunks: list[dict[str, Any]] | None = None) -> bool:
    """End a progress stream with `chunks` as its last word (by default: an earlier process's stream, whose progress
    goes on in a new one); False when Slack would not (it may have ended the stream itself, which is as good)."""
    try:
        await say.client.chat_stopStream(channel=channel, ts=ts, chunks=(restarted() if chunks is None else chunks)
                                         or None)
    except Exception as err:
        log.info("the progress stream %s in %s could not be ended (%s)", ts, channel, slack_error(err))
        return False
    return True
