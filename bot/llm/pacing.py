"""How fast a run may ask the judge: the shared throttle, the server's Retry-After and rate-limit hints, and jittered
backoff."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
import time
from typing import Any

log = logging.getLogger(__name__)

MAX_BACKOFF = 30.0
OUTAGE_GAP = 90.0  # a failure this long after the previous one starts a new outage (the run paused, or went quiet)
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_TRY_AGAIN = re.compile(r"try again in ((?:\d+(?:\.\d+)?(?:ms|us|µs|ns|h|m|s))+)", re.IGNORECASE)


class Throttle:
    """A concurrency limit shared by a run that halves on 429 and pauses everyone for the Retry-After time.

    It grows back by one slot after `limit` successes in a row (additive increase,
    multiplicative decrease), so a run slows down while 429s keep coming. The `ceilings` (for each endpoint and model
    asked through it, the requests its known limits keep busy) hold it lower still: their sum, while each is known.
    """

    def __init__(self, limit: int, *, outage_gap: float = OUTAGE_GAP) -> None:
        self.max_limit = limit
        self.outage_gap = outage_gap
        self.limit = limit
        self.ceilings: dict[object, int | None] = {}  # per limiter (an endpoint and model): None while not known
        self.active = 0
        self.rate_limited_count = 0
        self.failing_since: float | None = None  # monotonic time of the first failure with no success since
        self._resume_at = 0.0
        self._successes = 0
        self._failures = 0
        self._last_failure = 0.0
        self._condition = asyncio.Condition()

    async def __aenter__(self) -> Throttle:
        async with self._condition:
            while True:
                pause = self._resume_at - time.monotonic()
                if pause <= 0 and self.active < self.allowed:
                    break
                # Each waiter wakes at a moment of its own, so the end of a pause is not a burst.
                timeout = pause + random.uniform(0, min(1.0, pause / 4)) if pause > 0 else None
                try:
                    await asyncio.wait_for(self._condition.wait(), timeout)
                except TimeoutError:
                    pass
            self.active += 1
        return self

    @property
    def allowed(self) -> int:
        """Requests that may be in flight now."""
        known = list(self.ceilings.values())
        if not known or None in known:
            return self.limit
        return max(1, min(self.limit, sum(ceiling or 0 for ceiling in known)))

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

    def failed(self) -> float:
        """Count a request the endpoint failed (an outage: 502-504, 529) and return how long it has failed, in seconds.

        After `limit` such failures in a row the limit halves, so an endpoint that keeps failing is asked less and
        less; a single failure between successes changes nothing.
        """
        now = time.monotonic()
        if self.failing_since is None or now - self._last_failure > self.outage_gap:
            self.failing_since = now
        self._last_failure = now
        self._successes = 0
        self._failures += 1
        if self._failures >= self.limit > 1:
            self.limit //= 2
            self._failures = 0
        return now - self.failing_since

    def succeeded(self) -> None:
        """Count a success (the endpoint works: any outage is over); after `limit` in a row, allow one more request."""
        self.failing_since = None
        self._failures = 0
        self._successes += 1
        if self.limit < self.max_limit and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date), if present: the shorter of
    the two when both are (Retry-After is whole seconds)."""
    if headers is None:
        return None
    found = []
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            found.append(max(0.0, float(value) / 1000))
        except ValueError:
            pass
    if (seconds := _retry_after_seconds(headers)) is not None:
        found.append(seconds)
    return min(found) if found else None


def _retry_after_seconds(headers: Any) -> float | None:
    """The `Retry-After` header: seconds, or an HTTP date."""
    if (value := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def duration(text: str) -> float | None:
    """Seconds in a duration as OpenAI writes them (`450ms`, `1.2s`, `6m0s`, `1m30.5s`); None when it is not one."""
    text = text.strip()
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def rate_limit_wait(headers: Any, message: str) -> float | None:
    """Seconds a 429 asks to wait: the shortest credible one of its `retry-after-ms`, the message's "try again in
    450ms", the `x-ratelimit-reset-*` header of the limit the message names (tokens or requests; the longer of the two
    when it names none) and `retry-after` (whole seconds, often rounded up); None when it gives none."""
    candidates = [retry_after(headers)]
    if (match := _TRY_AGAIN.search(message)) is not None:
        candidates.append(duration(match.group(1)))
    resets = {kind: duration(headers.get(f"x-ratelimit-reset-{kind}") or "") if headers is not None else None
              for kind in ("requests", "tokens")}
    named = [kind for kind in resets if f"{kind} per" in message.lower()]
    if len(named) == 1:
        candidates.append(resets[named[0]])
    else:
        candidates.append(max((seconds for seconds in resets.values() if seconds is not None), default=None))
    known = [seconds for seconds in candidates if seconds is not None]
    return min(known) if known else None


def backoff(attempt: int) -> float:
    """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ... capped."""
    return random.uniform(0.5, 1.0) * min(MAX_BACKOFF, 0.5 * 2**attempt)


def header_number(headers: Any, name: str) -> float | None:
    """A header's non-negative number, or None when it is missing or nonsense (Azure sends -1 for "not known")."""
    value = headers.get(name) if headers is not None else None
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        log.debug("ignored the header %s: %r is not a number", name, value)
        return None
    if not 0 <= number < 1e12:
        log.debug("ignored the header %s: %r is out of range", name, value)
        return None
    return number
