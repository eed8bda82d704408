"""A judge request's retries: what a failure calls for and which budget it counts against, the waits, the
notices a progress bar shows, and the causes a dropped request hides."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from bot.errors import RunStopped
from bot.llm.answers import RESUME
from bot.llm.pacing import backoff

RetryKind = Literal["row", "unreachable", "rate_limit", "outage"]
MAX_RETRY_AFTER = 120.0  # a server that asks for a longer wait is not coming back within this run


@dataclass(frozen=True)
class Retry:
    """A failed request worth sending again after `delay` seconds, and which budget its retries count against."""

    delay: float
    failure: str
    gist: str  # the failure in a few words, for a progress bar
    # row: JUDGE_MAX_RETRIES, then the row is an error; unreachable: the same, then the run pauses; rate_limit: the
    # request's 429 time budget, then the run pauses; outage: the endpoint's time budget, then the run pauses.
    kind: RetryKind = "row"
    waited: float = 0.0  # seconds the throttle holds every request for (a 429)
    status: str = ""  # for an outage: what the endpoint answers ("503 Service Unavailable")
    detail: str = ""  # for an outage: the provider's own message


@dataclass
class Tries:
    """One request's retries so far: how many, the 429 waits, and when its outage began."""

    attempt: int = 0
    rate_limited_for: float = 0.0
    outage_since: float | None = None


@dataclass(frozen=True)
class Retrying:
    """A judge request about to be sent again: why, in a few words, and which attempt of how many comes next."""

    gist: str
    attempt: int
    attempts: int
    wait: float = 0.0  # seconds before it goes: its back-off, or the pause a 429 asked of every request

    def __str__(self) -> str:
        if self.attempt > self.attempts:  # waiting out 429s or an outage: bounded by time, not by attempts
            return f"{self.gist}, retrying (attempt {self.attempt})"
        return f"{self.gist}, retrying ({self.attempt}/{self.attempts})"


_retry_observer: ContextVar[Callable[[Retrying], None] | None] = ContextVar("judge_retry_observer", default=None)


def tell_observer(notice: Retrying) -> None:
    """Tell the observer of the current block (see `observing_retries`) that a request is about to be sent again."""
    if (observer := _retry_observer.get()) is not None:
        observer(notice)


@contextmanager
def observing_retries(observer: Callable[[Retrying], None]) -> Iterator[None]:
    """Tell `observer` of every retry of the judge requests made inside this block (and the tasks it starts)."""
    token = _retry_observer.set(observer)
    try:
        yield
    finally:
        _retry_observer.reset(token)


def caused_by(err: BaseException, *types: type[BaseException]) -> bool:
    """Whether `err` or anything in its cause chain is one of `types`.

    The SDK's aiohttp transport reports a refused connection, a dropped one and a slow reply all as
    timeouts; the underlying error tells them apart.
    """
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, types):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def retry_wait(hint: float | None, attempt: int) -> float:
    """The server's Retry-After when it gave one, else our backoff; RunStopped when it asks for too long."""
    if hint is None:
        return backoff(attempt)
    if hint > MAX_RETRY_AFTER:
        raise RunStopped(f"the judge endpoint asks to wait {hint:.0f} s before the next request; {RESUME} later")
    return hint


def wrong_address(err: BaseException, host: str) -> str | None:
    """What a request that no server could have answered ran into (a refused connection, an unknown host), if that."""
    if caused_by(err, socket.gaierror):
        return f"the host name {host!r} does not resolve (DNS)"
    if caused_by(err, ConnectionRefusedError):
        return "the connection was refused (nothing listens on that port)"
    return None


def span(seconds: float) -> str:
    """A wait in words: "2 minutes", "45 s", "0.3 s"."""
    if seconds >= 90:
        return f"{seconds / 60:.0f} minutes"
    if seconds >= 60:
        return "1 minute"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
