"""A judge server that enforces OpenAI-style limits: requests and tokens a minute over a rolling window, held over
shorter periods as one of two readings of OpenAI's quantization, a 429 with OpenAI's body past either, and the
`x-ratelimit-*` headers on every reply. Shared by the tests and the benchmark."""

from __future__ import annotations

import collections
import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any, Literal

from tests.support.openai_server import Reply

WINDOW = 60.0
# How a provider holds a minute's limit over its parts (OpenAI: "60,000 requests/minute may be enforced as 1,000
# requests/second"). minute: a hidden bucket per limit that holds a part's share and refills at the limit's pace, the
# headers counting the rolling window. second: no part of the window (a second of a minute, on the server's clock)
# holds more than its share of either limit, and the `remaining` and `reset` headers count that part.
Reading = Literal["minute", "second"]
READINGS: tuple[Reading, ...] = ("minute", "second")


def prompt_count(body: dict[str, Any]) -> int:
    """The tokens the server counts for a request's messages: a token per four characters, four a message."""
    return sum(len(str(message.get("content") or "")) // 4 + 4 for message in body.get("messages") or [])


def _duration(seconds: float) -> str:
    """A duration as OpenAI writes it: 450ms, 1.2s, 1m3s."""
    if seconds < 1:
        return f"{max(seconds, 0.001) * 1000:.0f}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s" if minutes else f"{rest:.1f}s"


class RateLimited:
    """Wraps a responder with limits a minute over a rolling window (a request counts its prompt and its reply's
    completion tokens from the moment it arrives); past either, a 429 with OpenAI's message, optionally with a
    `retry-after` header in whole seconds. Counts what it answered."""

    def __init__(self, good: Callable[[dict[str, Any]], Reply], *, rpm: int | None = None, tpm: int | None = None,
                 retry_after: bool = False, headers: bool = True, reply_tokens: int = 120,
                 window: float = WINDOW, parts: int = 1, reading: Reading = "minute") -> None:
        self.good, self.rpm, self.tpm, self.span = good, rpm, tpm, window
        # >1: the limits are also enforced over shorter periods, as OpenAI may ("60,000 requests a minute enforced as
        # 1,000 a second"), as `reading` reads it: a bucket per limit that holds a part's share of it and refills at
        # the limit's pace (minute), or each part of the window on the clock holding at most its share (second).
        self.parts, self.reading = parts, reading
        self.part = -1  # the part of the window on the clock (second reading) and what it holds of each limit
        self.held = {"requests": 0, "tokens": 0}
        self.buckets: dict[str, float] = {}  # what each bucket holds, as of `self.filled`
        self.filled = time.monotonic()
        self.retry_after, self.headers, self.reply_tokens = retry_after, headers, reply_tokens
        self.window: collections.deque[tuple[float, int]] = collections.deque()
        self.tokens = 0
        self.answered = 0
        self.limited = 0
        self.limited_at: list[float] = []  # when each 429 was sent

    def _expire(self, now: float) -> None:
        while self.window and self.window[0][0] <= now - self.span:
            self.tokens -= self.window.popleft()[1]

    def _limit_headers(self, now: float) -> dict[str, str]:
        if not self.headers:
            return {}
        found: dict[str, str] = {}
        by_part = self.reading == "second" and self.parts > 1
        for kind, limit, used in (("requests", self.rpm, len(self.window)), ("tokens", self.tpm, self.tokens)):
            if limit is None:
                continue
            if by_part:  # the second reading: what the current part holds, and its end
                self._turn(now)
                # what is left of the part's share, against the minute's limit named
                used = limit - limit / self.parts + self.held[kind]
                reset = _duration((self.part + 1) * self.span / self.parts - now)
            else:
                reset = self._whole_in(now)
            found |= {f"x-ratelimit-limit-{kind}": str(limit),
                      f"x-ratelimit-remaining-{kind}": str(max(int(limit - used), 0)),
                      f"x-ratelimit-reset-{kind}": reset}
        return found

    def _whole_in(self, now: float) -> str:
        """When the limit is whole again (OpenAI's `x-ratelimit-reset-*`): the newest request leaves the window."""
        return _duration(self.window[-1][0] + self.span - now if self.window else 0)

    def _wait(self, now: float, kind: str, need: int) -> float:
        """When the oldest requests will have left the window enough for this one."""
        freed = (len(self.window) + 1 - (self.rpm or 0)) if kind == "requests" else self.tokens + need - (self.tpm or 0)
        for arrived, tokens in self.window:
            freed -= 1 if kind == "requests" else tokens
            if freed <= 0:
                return arrived + self.span - now
        return self.span

    def _part(self, now: float, need: int) -> tuple[list[str], float | None]:
        """The limits whose bucket (a part's share) cannot hold this request, and when it could; else takes from them."""
        costs = {kind: (limit, 1 if kind == "requests" else need)
                 for kind, limit in (("requests", self.rpm), ("tokens", self.tpm)) if limit is not None}
        for kind, (limit, _) in costs.items():
            share = limit / self.parts
            self.buckets[kind] = min(share, self.buckets.get(kind, share) + (now - self.filled) * limit / self.span)
        self.filled = now
        short = {kind: (cost - self.buckets[kind]) * self.span / limit for kind, (limit, cost) in costs.items()
                 if cost > self.buckets[kind] and self.buckets[kind] < limit / self.parts}  # a full bucket lets any go
        if short:
            return list(short), max(short.values())
        for kind, (_, cost) in costs.items():
            self.buckets[kind] -= cost
        return [], None

    def _turn(self, now: float) -> None:
        """Start a new part of the window when the clock has reached one (second reading): it holds nothing yet."""
        part = math.floor(now / (self.span / self.parts))
        if part != self.part:
            self.part, self.held = part, {"requests": 0, "tokens": 0}

    def _second(self, now: float, need: int) -> tuple[list[str], float | None]:
        """The limits whose share the current part of the window (on the clock) cannot hold this request in, and when
        the next part starts; else counts it in the part (a request larger than a share goes into an empty part)."""
        self._turn(now)
        costs = {kind: (limit, 1 if kind == "requests" else need)
                 for kind, limit in (("requests", self.rpm), ("tokens", self.tpm)) if limit is not None}
        over = [kind for kind, (limit, cost) in costs.items()
                if self.held[kind] + cost > limit / self.parts and self.held[kind] > 0]
        if over:
            return over, (self.part + 1) * self.span / self.parts - now
        for kind, (_, cost) in costs.items():
            self.held[kind] += cost
        return [], None

    def __call__(self, body: dict[str, Any]) -> Reply:
        now = time.monotonic()
        self._expire(now)
        need = prompt_count(body) + self.reply_tokens
        over = [kind for kind, limit, used in (("requests", self.rpm, len(self.window) + 1),
                                               ("tokens", self.tpm, self.tokens + need)) if limit is not None and used > limit]
        part_wait = None
        if not over and self.parts > 1:
            over, part_wait = self._second(now, need) if self.reading == "second" else self._part(now, need)
        if over:
            self.limited += 1
            self.limited_at.append(now)
            kind = over[0]
            wait = part_wait if part_wait is not None else self._wait(now, kind, need)
            limit = self.rpm if kind == "requests" else self.tpm
            used = len(self.window) if kind == "requests" else self.tokens
            if part_wait is not None and self.reading == "second":
                used = self.held[kind]  # the part's count: what the second reading's headers say too
            label = "requests per min (RPM)" if kind == "requests" else "tokens per min (TPM)"
            message = (f"Rate limit reached for judge-bench in organization org-judgebot on {label}: Limit {limit}, "
                       f"Used {used}, Requested {1 if kind == 'requests' else need}. Please try again in "
                       f"{_duration(wait)}. Visit https://platform.openai.com/account/rate-limits to learn more.")
            headers = self._limit_headers(now)
            if self.retry_after:
                headers["retry-after"] = str(max(1, int(wait + 0.999)))
            error = {"message": message, "type": kind, "param": None, "code": "rate_limit_exceeded"}
            return Reply(status=429, error=error, headers=headers)
        self.window.append((now, need))
        self.tokens += need
        self.answered += 1
        reply = dataclasses.replace(self.good(body))  # a copy: the responder may hand out one reply again and again
        reply.tokens_in, reply.tokens_out = prompt_count(body), self.reply_tokens
        reply.headers = {**reply.headers, **self._limit_headers(now)}
        return reply
