"""Running at a provider's rate limit instead of into it: the requests and tokens a minute an endpoint allows a model,
learned from the `x-ratelimit-*` headers of its replies (or set), and every request waiting for room in the last
minute's budget before it is sent. One limiter per endpoint and model, shared by every run of the process."""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from bot.llm.pacing import duration, header_number
from bot.llm.provider_parts import ProviderParts
from bot.llm.tokens import messages_tokens

if TYPE_CHECKING:
    from bot.llm.limiters import Usage

log = logging.getLogger(__name__)

WINDOW = 60.0  # seconds: limits are per minute, and a provider may count them over any part of it
# A request that waits for one sent a window ago goes this much later (a share of the window, and a little more): the
# provider counts each request from when it arrives, a little after it was sent, and the two clocks differ.
MARGIN_SHARE, MARGIN_SECONDS = 0.005, 0.02
KINDS = ("requests", "tokens")
REPLY_TOKENS = 200  # the reply expected of a request before any reply was seen
FIRST_REPLIES = 8  # replies whose usage teaches the estimates even while no limit is known
# Before an endpoint's first reply (which tells its limits) this many requests go; the rest wait for it, this many
# seconds at most (then none waits again): a provider that holds a sixtieth of 400,000 tokens a minute a second holds
# six requests of 1,000 tokens, and sixteen sent at once would meet ten 429s (eight meet two).
FIRST_WAVE, FIRST_WAIT = 8, 3.0
# The share of each limit requests are paced to: a provider's bucket then fills a little faster than it is emptied
# (the times it sees requests arrive differ from those they were sent at), and tokens are estimates.
HEADROOM = 0.99
# Requests go at the pace of the limits, evenly: a provider may enforce a minute's limit over shorter periods (3,000 a
# minute as 50 a second, a bucket that holds a second's worth), so a burst after a pause holds at most half a
# sixtieth of the window's worth.
PARTS, BURST = 60, 0.5
# The burst where a provider holds its parts on its own clock: enough to make up a late wake-up (else each one is
# lost), too little to crowd a part.
EVEN = 0.1
LEARNING = 0.2  # how far each reply moves the running corrections of the estimates
# The pace a provider holds, learned from its 429s as well as from its headers: a provider may read its minute as
# parts of it on its own clock (no second holding more than a sixtieth of the limit), where even a pace at the limit
# meets a part that holds one request too many. A 429 to a request sent at the pace a known limit allows brings that
# limit's pace down to CUT of what it was (once for the requests sent before it: they were sent at the old pace) and
# makes it even (a burst of EVEN); each reply then takes it back up: by CLIMB up to NEAR of the pace the last 429 came at,
# by CREEP beyond it (where the provider may refuse again), up to the pace the limit itself allows.
CUT, NEAR, CLIMB, CREEP, LOWEST = 0.9, 0.97, 0.005, 0.00005, 0.25
# Where the headers say the provider holds each part of its window on its own clock (what is left of a part's share,
# whole again within a part), its parts are followed instead of an even pace (bot.llm.provider_parts): the part's end
# is the request's send time plus the reset its reply names (a little early: the request arrived after it was sent).
# Requests in flight when limits are known: enough for the pace the limits allow at the latency seen, with this much
# more for replies slower than the mean, and a few spare.
IN_FLIGHT_SLACK, IN_FLIGHT_SPARE = 1.5, 2
# OpenAI's 429 says "Limit 30000, Used 29826, Requested 662": the limit itself, when no header said it.
_LIMIT_NUMBER = re.compile(r"Limit (\d+)")
_NAMED = re.compile(r"\b(requests|tokens) per min", re.IGNORECASE)


class RateLimiter:
    """The requests and tokens a minute one endpoint allows one model, and what was sent in the last minute.

    A request waits until the last WINDOW seconds leave room for it under both limits, then counts as sent; its
    tokens are estimated before it goes and replaced by the usage its reply reports. The limits come from JUDGE_RPM
    and JUDGE_TPM (fixed) or from the `x-ratelimit-limit-*` headers; the `x-ratelimit-remaining-*` headers add what
    others spent of the same limit (another process with the same key), and a 429 teaches both.
    """

    def __init__(self, *, requests: int | None = None, tokens: int | None = None, window: float = WINDOW) -> None:
        self.window = window  # seconds the limits count over: a minute for OpenAI, 10 s for some gateways
        self._margin = window * MARGIN_SHARE + MARGIN_SECONDS
        self.limits: dict[str, float | None] = {"requests": requests, "tokens": tokens}
        self.fixed = {kind: self.limits[kind] is not None for kind in KINDS}
        # [time, requests, tokens, prompt estimate, answered (1.0) or not yet] of what was sent in the last WINDOW
        self._sent: deque[list[float]] = deque()
        self._spent = {"requests": 0.0, "tokens": 0.0}  # their sums
        self._answered = {"requests": 0.0, "tokens": 0.0}  # the sums of those answered
        self._due = dict.fromkeys(KINDS, 0.0)  # when each limit's even pace has room for the next request
        # The share of each limit's pace that 429s left (1: all of it), the share the last 429 came at, when that was,
        # when the limit became known (429s to requests sent before say nothing of the pace), and the burst allowed.
        self.share = dict.fromkeys(KINDS, 1.0)
        self._met: dict[str, float | None] = dict.fromkeys(KINDS, None)
        self._cut_at = dict.fromkeys(KINDS, 0.0)
        self._known_at = dict.fromkeys(KINDS, 0.0)
        self._burst = dict.fromkeys(KINDS, BURST)
        self._parts = ProviderParts(window / PARTS)  # the provider's parts on its clock, once its headers say so
        self._paused_until = 0.0
        self._paused_for = "requests"  # the limit a pause waits for
        self.told: tuple[float, str] | None = None  # the latest pause a 429 set here (wall-clock end, limit), to tell
        self._prompt_scale = 1.0  # the provider's count of a prompt over our estimate of it
        self._reply_tokens = float(REPLY_TOKENS)
        self._replies = 0  # replies learned from: the first ones weigh more
        self._heard = 0  # replies of any kind (with usage or without): the first ones are counted even unlimited
        self._first_sent = 0  # requests sent before any reply (or 429) came
        self._replied = False
        self._prompt = 0.0  # the running mean of the prompts' estimates, and of the replies' latency in seconds
        self._latency = 0.0
        self._lock = asyncio.Lock()
        self.usage: list[Usage] = []  # the runs watching, each told what it sent and waited for

    @property
    def known(self) -> bool:
        """Whether some limit is known: only then are requests counted and held."""
        return any(value is not None for value in self.limits.values())

    @property
    def free(self) -> bool:
        """Whether a request may go at once, counting nothing: no limit known, nothing left to learn, no pause."""
        return not self.known and self._heard >= FIRST_REPLIES and time.monotonic() >= self._paused_until

    def in_flight(self) -> int | None:
        """The requests worth having in flight at once: what the limits allow a second times the seconds a reply
        takes, with some slack; None while no limit (or no reply) tells it."""
        if not self.known or self._replies == 0:
            return None
        requests = self.limits["requests"]
        per_second = [requests * self.share["requests"] / self.window] if requests is not None else []
        if (tokens := self.limits["tokens"]) is not None:
            per_second.append(tokens * HEADROOM * self.share["tokens"] / self.window / self.estimate(self._prompt))
        return math.ceil(min(per_second) * self._latency * IN_FLIGHT_SLACK) + IN_FLIGHT_SPARE

    def estimate(self, prompt_tokens: float) -> float:
        """The tokens a request with a prompt of about `prompt_tokens` will count: the prompt as the provider counts
        it, and the reply expected."""
        return prompt_tokens * self._prompt_scale + self._reply_tokens

    async def acquire(self, messages: list[dict[str, str]]) -> list[float] | None:
        """Wait for room for a request of these messages, then count it as sent; the entry to settle once it is
        answered (None when no limit is known, and nothing is counted)."""
        learning = self._heard < FIRST_REPLIES  # the first replies teach the estimates, known limits or not
        if not self.known and time.monotonic() >= self._paused_until:
            if not learning:
                return None
            await self._first_reply()
            if not self.known and time.monotonic() >= self._paused_until:  # else the reply waited for set a pace
                # Counted all the same: when a reply tells the limits, these are in the window and its last part.
                prompt, now = messages_tokens(messages), time.monotonic()
                self._expire(now)
                entry = [now, 1.0, self.estimate(prompt), prompt, 0.0]
                self._sent.append(entry)
                self._spent["requests"] += 1
                self._spent["tokens"] += entry[2]
                return entry
        prompt = messages_tokens(messages)
        async with self._lock:  # one request waits at a time, in the order they came: no burst when room frees
            while True:
                now = time.monotonic()
                tokens = self.estimate(prompt)  # as the replies that came meanwhile correct it
                wait, kind = self._room(now, tokens)
                if wait <= 0:
                    break
                for usage in self.usage:
                    usage.waited[kind] += wait
                await asyncio.sleep(wait)
            entry = [now, 1.0, tokens, prompt, 0.0]
            self._sent.append(entry)
            for kind, need in (("requests", 1.0), ("tokens", tokens)):
                self._due[kind] = max(self._due[kind], now) + need * self._spacing(kind)
            self._spent["requests"] += 1
            self._spent["tokens"] += tokens
        return entry

    async def _first_reply(self) -> None:
        """Past the first FIRST_WAVE requests, wait for the endpoint's first reply (FIRST_WAIT s at most)."""
        began = time.monotonic()
        while not self._replied and self._first_sent >= FIRST_WAVE:
            if time.monotonic() - began >= FIRST_WAIT:
                self._replied = True  # a slow endpoint, or one that does not answer: waiting longer teaches nothing
                break
            await asyncio.sleep(0.01)
        self._first_sent += 1

    def heard(self) -> None:
        """The endpoint answered a request (whatever it answered): the requests held for its first reply may go."""
        self._replied = True

    def _room(self, now: float, tokens: float) -> tuple[float, str]:
        """How long a request of `tokens` must wait from `now`, and for which limit (0 when it may go)."""
        if now < self._paused_until:
            return self._paused_until - now, self._paused_for
        self._expire(now)
        for kind, need, column in (("requests", 1.0, 1), ("tokens", tokens, 2)):
            limit = self.limits[kind]
            if limit is None:
                continue
            limit *= HEADROOM if kind == "tokens" else 1.0  # requests are counted exactly, tokens estimated
            if self._spent[kind] + need <= limit:
                if self._parts.followed(kind):
                    cap = (self.limits[kind] or 0.0) / PARTS * self.share[kind] * (HEADROOM if kind == "tokens" else 1.0)
                    if (wait := self._parts.wait(now, kind, need, cap, self._sent, 1 if kind == "requests" else 2)) > 0:
                        return wait, kind
                    continue
                # The even pace: a bucket of half a part's worth, refilled at the limit's pace, must hold the request
                # (one larger than the bucket goes when it is full).
                burst = max(self.window / PARTS * self._burst[kind] - need * self._spacing(kind), 0.0)
                if (wait := self._due[kind] - burst - now) > 0:
                    return wait, kind
                continue
            # What was sent leaves the window oldest first: wait until enough of it has.
            freed = self._spent[kind] + need - limit
            for entry in self._sent:
                freed -= entry[column]
                if freed <= 0:
                    return entry[0] + self.window + self._margin - now, kind
            if not self._sent:
                return 0.0, kind  # more than the whole limit, and nothing else in the window: it goes alone
            return self._sent[-1][0] + self.window + self._margin - now, kind
        return 0.0, "requests"

    def _spacing(self, kind: str) -> float:
        """Seconds of the even pace one request (or token) of `kind` takes up: 0 while its limit is not known."""
        limit = self.limits[kind]
        if limit is None:
            return 0.0
        return self.window / (limit * HEADROOM * self.share[kind])

    def _expire(self, now: float) -> None:
        while self._sent and self._sent[0][0] <= now - self.window:
            entry = self._sent.popleft()
            self._spent["requests"] -= entry[1]
            self._spent["tokens"] -= entry[2]
            if entry[4]:
                self._answered["requests"] -= entry[1]
                self._answered["tokens"] -= entry[2]

    def _void(self, entry: list[float] | None) -> None:
        """A request the endpoint refused with a 429 counts as nothing sent (the provider did not count it)."""
        if entry is None:
            return
        now = time.monotonic()
        self._expire(now)  # what is still in the window is in `_sent`, counted; what left it was taken off
        if entry[0] > now - self.window:
            self._spent["requests"] -= entry[1]
            self._spent["tokens"] -= entry[2]
        self._due["requests"] -= entry[1] * self._spacing("requests")
        self._due["tokens"] -= entry[2] * self._spacing("tokens")
        entry[1] = entry[2] = 0.0

    def settle(self, entry: list[float] | None, *, tokens_in: int, tokens_out: int, latency: float = 0.0) -> None:
        """A reply came `latency` s after its request: the request counts the tokens it used, and the estimates of the
        next ones learn from it."""
        prompt_estimate = entry[3] if entry is not None else 0.0
        self._heard += 1
        self._replied = True
        self._recover()
        if tokens_in > 0 or tokens_out > 0:
            self._replies += 1
            weight = max(LEARNING, 1 / self._replies)  # the mean of the first replies, then a moving one
            self._prompt += weight * (prompt_estimate - self._prompt)
            self._latency += weight * (latency - self._latency)
            if tokens_in > 0 and prompt_estimate > 0:
                self._prompt_scale += weight * (tokens_in / prompt_estimate - self._prompt_scale)
            if tokens_out > 0:
                self._reply_tokens += weight * (tokens_out - self._reply_tokens)
        used = float(tokens_in + tokens_out)
        for usage in self.usage:  # what went through, for the pace a run is told it kept
            usage.requests += 1
            usage.tokens += used
        if entry is None or used <= 0 or entry[1] == 0:  # nothing counted for it (no limit was known when it went)
            return
        now = time.monotonic()
        self._expire(now)
        if entry[0] > now - self.window:  # still in the window: counted as used, not as guessed
            self._spent["tokens"] += used - entry[2]
            self._answered["requests"] += entry[1]
            self._answered["tokens"] += used
            entry[4] = 1.0
        self._due["tokens"] += (used - entry[2]) * self._spacing("tokens")
        entry[2] = used
        for usage in self.usage:  # the most the window held of what the endpoint took (not of what it refused)
            for kind in KINDS:
                usage.peak[kind] = max(usage.peak[kind], self._answered[kind])

    def _recover(self) -> None:
        """A reply went through: each pace a 429 brought down goes back up a step (see CUT)."""
        for kind in KINDS:
            share, near = self.share[kind], NEAR * (self._met[kind] or 1.0)
            if share < near:
                self.share[kind] = min(share + CLIMB, near)
            elif share < 1.0:
                self.share[kind] = min(share + CREEP, 1.0)

    def _paced(self, kind: str, entry: list[float] | None) -> bool:
        """Whether the request of `entry` went at the pace the limit of `kind` allows now: counted, sent once the limit
        was known and after the last cut (those before went at the old pace)."""
        return (entry is not None and bool(entry[1]) and self.limits[kind] is not None
                and entry[0] >= self._known_at[kind] and entry[0] > self._cut_at[kind])

    def _cut(self, kind: str) -> None:
        """A 429 to a request sent at the pace the limit of `kind` allows: the provider holds less than that pace
        (over parts of its window on its own clock): bring it down (see CUT)."""
        self._met[kind] = self.share[kind]
        self.share[kind] = max(LOWEST, self.share[kind] * CUT)
        self._burst[kind] = min(self._burst[kind], EVEN)
        self._cut_at[kind] = time.monotonic()
        log.info("the judge endpoint refused a request sent at the pace of its %s limit: paced to %.0f%% of it now",
                 kind, 100 * HEADROOM * self.share[kind] if kind == "tokens" else 100 * self.share[kind])

    def observe(self, headers: Any, *, answered: bool = True, sent: float | None = None) -> None:
        """Learn from a reply's headers (to a request `sent` then, by time.monotonic()): the limits (unless set), and
        from an `answered` request's reply what others spent of them (a 429's "0 remaining" says only that this request
        did not fit: its wait says the rest)."""
        if headers is None:
            return
        for kind in KINDS:
            limit = header_number(headers, f"x-ratelimit-limit-{kind}")
            if limit is not None and limit >= 1 and not self.fixed[kind] and limit != self.limits[kind]:
                log.info("the judge endpoint allows %s %s a minute", f"{limit:,.0f}", kind)
                self._learn(kind, limit)
            remaining = header_number(headers, f"x-ratelimit-remaining-{kind}")
            known = self.limits[kind]
            if answered and remaining is not None and known is not None:
                self._others(kind, known - remaining, headers, sent)
        if header_number(headers, "x-ratelimit-remaining") == 0 and (reset := header_number(headers, "x-ratelimit-reset")):
            # OpenRouter: requests left in its window, and when the window resets (milliseconds since the epoch)
            self.pause(reset / 1000 - time.time())

    def _learn(self, kind: str, limit: float) -> None:
        """The endpoint's limit of `kind`; when it was not known, the even pace starts from what the last part of the
        window holds already (a provider's bucket emptied by the requests sent before the limit was known)."""
        first = self.limits[kind] is None
        self.limits[kind] = limit
        if first:
            now = time.monotonic()
            self._known_at[kind] = now
            column = 1 if kind == "requests" else 2
            recent = sum(entry[column] for entry in self._sent if entry[0] > now - self.window / PARTS)
            self._due[kind] = max(self._due[kind], now) + recent * self._spacing(kind)

    def _others(self, kind: str, used: float, headers: Any, sent: float | None = None) -> None:
        """The provider counts `used` of the limit: what it counts beyond this process's requests (another process
        with the same key spends too) is counted as sent now, until the provider says its limit is whole again
        (`x-ratelimit-reset-*`; at the latest a window from now)."""
        now = time.monotonic()
        self._expire(now)
        limit = self.limits[kind] or 0.0
        reset = duration(str(headers.get(f"x-ratelimit-reset-{kind}") or ""))
        share = limit / PARTS
        if reset is not None and reset <= self.window / PARTS and limit - used <= share:
            # Less left than a part's share, and whole again within a part: the provider counts over a part of the
            # window (a second of its minute), and so is this process's part of it: what the last part sent. Parts on
            # the provider's clock hold little burst: the pace goes even.
            self._burst[kind] = min(self._burst[kind], EVEN)
            self._parts.follow(reset, now if sent is None else sent)
            column = 1 if kind == "requests" else 2
            mine = sum(entry[column] for entry in self._sent if entry[0] > now - self.window / PARTS)
            others = used - (limit - share) - mine
            self._parts.spent_by_others(kind, now, others)
            if others <= 0.05 * share:
                return
        else:
            others = used - self._spent[kind]
            if others <= 0.05 * limit:  # within what estimates and clocks may differ by
                return
        lasts = self.window if reset is None else min(max(reset, 0.0), self.window)
        at = now - self.window + lasts  # when it leaves the window: when the provider's count is back to whole
        entry = [at, others, 0.0, 0.0, 0.0] if kind == "requests" else [at, 0.0, others, 0.0, 0.0]
        # The window is kept in time order: an entry that leaves it sooner than the newest goes where it belongs.
        position = len(self._sent)
        while position and self._sent[position - 1][0] > at:
            position -= 1
        self._sent.insert(position, entry)
        self._spent[kind] += others

    def rate_limited(self, headers: Any, message: str, wait: float, entry: list[float] | None = None) -> None:
        """A 429 to the request of `entry`: it counts as nothing sent; every request waits `wait` s, and the limit the
        message names is learned if no header gave it."""
        self._replied = True
        self.observe(headers, answered=False)
        kind = _NAMED.search(message)
        found = _LIMIT_NUMBER.search(message)
        name = kind.group(1).lower() if kind is not None else "requests"
        if kind is not None and found is not None and int(found.group(1)) >= 1:  # "Limit 0": a model not allowed
            if not self.fixed[name] and self.limits[name] is None:
                self._learn(name, float(found.group(1)))
                log.info("the judge endpoint allows %s %s a minute (said with a 429)", found.group(1), name)
        paced = self._paced(name, entry)
        self._void(entry)
        if paced:
            self._cut(name)
        self.pause(wait, name)

    def pause(self, seconds: float, kind: str = "requests", *, tell: bool = True) -> None:
        """Hold every request for `seconds` (a 429's wait, a window without requests left), waiting for `kind`; kept
        in `told` for the other processes of the endpoint unless it came from them (`tell`)."""
        if 0 < seconds <= 10 * self.window:
            until = time.monotonic() + seconds
            if until > self._paused_until:
                self._paused_until, self._paused_for = until, kind
                if tell:
                    self.told = (time.time() + seconds, kind)

    def hold_until(self, wall: float, kind: str) -> None:
        """Hold every request until `wall` (the clock's time): a pause another process of the endpoint learned."""
        self.pause(wall - time.time(), kind, tell=False)
