"""Rows with the same texts in one run: judged one at a time, each told whether the cache may hold its duplicate's verdict."""

from __future__ import annotations

import asyncio
from collections import Counter

KEEP_AT_LEAST = 256  # settled keys kept before the first pruning


class DuplicateRows:
    """Who judges a cache key now, and which keys settled since a group of rows was looked up in the cache.

    The cache is read for a group of rows at a time (a look, numbered). A row whose key another row settled after
    its group's look (a verdict committed, or none to save) must look in the cache again at its turn. `settled`
    keeps, for each key, the number of looks made when a row with it settled, as long as a row of an earlier or the
    same look has not been through that check (`unchecked` counts those rows by look).
    """

    def __init__(self) -> None:
        self.looks = 0
        self.inflight: dict[str, asyncio.Event] = {}  # key -> set when the row judging it has settled
        self.settled: dict[str, int] = {}
        self.unchecked: Counter[int] = Counter()
        self.cap = KEEP_AT_LEAST

    def look(self, rows: int) -> int:
        """Number a look of the cache for `rows` rows, made from now on."""
        self.looks += 1
        self.unchecked[self.looks] += rows
        return self.looks

    async def claim(self, key: str, look: int, stop: asyncio.Event) -> tuple[asyncio.Event, bool] | None:
        """Wait while another row judges `key`, then take it: (the event to hand to `release`, whether a row with this
        key settled since `look`). None when the run stops meanwhile."""
        try:
            while key in self.inflight:
                await self.inflight[key].wait()
                if stop.is_set():
                    return None
            since = self.settled.get(key, 0) >= look
        finally:
            self.unchecked[look] -= 1
            if not self.unchecked[look]:
                del self.unchecked[look]
        done = self.inflight[key] = asyncio.Event()
        return done, since

    def release(self, key: str, done: asyncio.Event) -> None:
        """The row that claimed `key` has settled: the next row with it may go."""
        if self.inflight.get(key) is done:
            del self.inflight[key]
        self.settled[key] = self.looks
        if len(self.settled) > self.cap:  # forget what no row left to check could need
            oldest = min(self.unchecked, default=self.looks + 1)
            self.settled = {known: look for known, look in self.settled.items() if look >= oldest}
            self.cap = 2 * len(self.settled) + KEEP_AT_LEAST
        done.set()
