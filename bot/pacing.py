"""How fast a run may ask the judge: the shared throttle, the server's Retry-After, and jittered backoff."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from typing import Any

MAX_BACKOFF = 30.0


class Throttle:
    """A concurrency limit shared by a run that halves on 429 and pauses everyone for the Retry-After time.

    It grows back by one slot after `limit` successes in a row (additive increase,
    multiplicative decrease), so a run slows down while 429s keep coming.
    """

    def __init__(self, limit: int) -> None:
        self.max_limit = limit
        self.limit = limit
        self.active = 0
        self.rate_limited_count = 0
        self._resume_at = 0.0
        self._successes = 0
        self._condition = asyncio.Condition()

    async def __aenter__(self) -> Throttle:
        async with self._condition:
            while True:
                pause = self._resume_at - time.monotonic()
                if pause <= 0 and self.active < self.limit:
                    break
                # Each waiter wakes at a moment of its own, so the end of a pause is not a burst.
                timeout = pause + random.uniform(0, min(1.0, pause / 4)) if pause > 0 else None
                try:
                    await asyncio.wait_for(self._condition.wait(), timeout)
                except TimeoutError:
                    pass
            self.active += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._condition:
            self.active -= 1
            self._condition.notify_all()

    def rate_limited(self, delay: float) -> None:
        """Back off: halve the limit (once per pause, not once per 429 of a burst) and hold requests `delay` s."""
        now = time.monotonic()
        self.rate_limited_count += 1
        if now >= self._resume_at:
            self.limit = max(1, self.limit // 2)
        self._successes = 0
        self._resume_at = max(self._resume_at, now + delay)

    def succeeded(self) -> None:
        """Count a success; after `limit` of them in a row, allow one more request in flight."""
        self._successes += 1
        if self.limit < self.max_limit and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date), if present."""
    if headers is None:
        return None
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def backoff(attempt: int) -> float:
    """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ... capped."""
    return random.uniform(0.5, 1.0) * min(MAX_BACKOFF, 0.5 * 2**attempt)
