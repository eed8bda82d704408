"""Calls gathered into groups: items asked for close together are served by one call, up to a size or a wait."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class Grouped(Generic[Item, Result]):
    """One function over many items, called once per group of the items asked for meanwhile.

    A group goes once it holds `limit` items, or `wait` seconds after its first item was asked for (at once with no
    wait); the items asked for while a group is being served go in the next. Each caller gets its own item's
    result, or the group's error (kept in `failure` too). `room` waits while a full group (`limit` items) waits
    behind the one being served: at most about twice `limit` items are then not served.
    """

    def __init__(self, serve: Callable[[list[Item]], Awaitable[Sequence[Result]]], *, limit: int,
                 wait: float = 0.0) -> None:
        self.serve = serve
        self.limit = limit
        self.wait = wait
        self.waiting: list[tuple[Item, asyncio.Future[Result], float]] = []  # with when each was asked for
        self.full = asyncio.Event()
        self.not_full = asyncio.Event()
        self.not_full.set()
        self.failure: Exception | None = None  # the first error of a group
        self.task: asyncio.Task[None] | None = None

    def submit(self, item: Item) -> asyncio.Future[Result]:
        """Ask for `item` to be served; its result (or error) comes in the future returned."""
        result: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self.waiting.append((item, result, time.monotonic()))
        if len(self.waiting) >= self.limit:
            self.full.set()
            self.not_full.clear()
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self.drain())
        return result

    async def __call__(self, item: Item) -> Result:
        return await self.submit(item)

    async def room(self) -> None:
        """Return once fewer than `limit` items wait besides the group being served: callers that ask faster than
        groups are served wait, but not merely while one is (they would all start again at once when it ends)."""
        await self.not_full.wait()

    async def drain(self) -> None:
        """Serve the items waiting, a group at a time, until none is left."""
        while self.waiting:
            left = self.waiting[0][2] + self.wait - time.monotonic()  # counted from the first item's arrival
            if left > 0 and len(self.waiting) < self.limit:
                try:
                    await asyncio.wait_for(self.full.wait(), left)
                except TimeoutError:
                    pass
            group, self.waiting = self.waiting[:self.limit], self.waiting[self.limit:]
            if len(self.waiting) < self.limit:
                self.full.clear()
                self.not_full.set()
            try:
                results = await self.serve([item for item, _, _ in group])
            except asyncio.CancelledError:
                for _, result, _ in group:
                    result.cancel()
                raise
            except Exception as err:
                self.failure = self.failure or err
                for _, result, _ in group:
                    if not result.done():
                        result.set_exception(err)
            else:
                for (_, result, _), value in zip(group, results, strict=True):
                    if not result.done():
                        result.set_result(value)

    async def close(self) -> None:
        """Serve what is waiting now, without waiting for a group to fill, and return when it is done."""
        self.wait = 0.0
        self.full.set()
        if self.task is not None:
            await self.task
