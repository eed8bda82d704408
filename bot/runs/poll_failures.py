"""Looks at background responses that fail, and what comes of them, as of a live run's requests (bot.llm.client).

An outage (502-504, 529, 429, an error object in a 200) pauses the run once no look has gone through for the judge's
outage budget; a refused connection, a timeout, another 5xx or a body that is not a response after as many rounds of
looks in a row as a request has tries. The response ids stay saved: a resume polls them, never sends them again.
One response whose looks keep failing while the endpoint answers the run's other looks is its own failure, as a live
request that fails while others go through: given up on after as many looks in a row as a request has tries."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aiohttp
import openai

from bot.errors import RunStopped
from bot.llm.answers import RESUME, NotACompletion, message_of, one_line, status_text
from bot.llm.client import OUTAGE_STATUSES, JudgeClient
from bot.llm.retries import caused_by, span

KEPT = "the responses are polled again, never sent again"


@dataclass
class _Failing:
    """One response's looks failed in a row: the round of the first, and how many."""

    first: int
    looks: int


class PollFailures:
    """The rounds of looks at a run's open responses in which none went through, since the last that did; and the
    looks in a row that failed at each response."""

    def __init__(self) -> None:
        self.since: float | None = None  # time.monotonic() of the first failed round since a look went through
        self.rounds = 0
        self.round = 0  # rounds of looks so far
        self.answered = 0  # the last round in which a look went through
        self.failing: dict[str, _Failing] = {}

    def looked(self, through: Iterable[str], failed: Sequence[tuple[str, Exception, JudgeClient]]) -> (
            list[tuple[str, str]]):
        """One round of looks: the responses (their ids) whose look went through, and those whose look did not (what
        failed, and the judge asked). The responses given up on, each with why: its looks failed `max_retries` + 1
        times in a row while the endpoint answered other looks (one went through since its first failure), as a live
        request that keeps failing while others go through ends its row as an error. RunStopped when the round
        pauses the run: no look went through, and a look failed that the endpoint's other answers do not set apart
        (an outage; see `failed`)."""
        self.round += 1
        answered = False
        for key in through:
            answered = True
            self.failing.pop(key, None)
        if answered:
            self.answered = self.round
        given_up: list[tuple[str, str]] = []
        outage: tuple[Exception, JudgeClient] | None = None
        for key, err, client in failed:
            before = self.failing.get(key)
            now = self.failing[key] = _Failing(before.first if before else self.round,
                                               (before.looks if before else 0) + 1)
            if self.answered < now.first:  # nothing answered since it began failing: the endpoint's failure
                outage = (err, client)
            elif now.looks > client.max_retries:
                del self.failing[key]
                given_up.append((key, f"the judge endpoint failed {now.looks} looks in a row at background response "
                                      f"{key} while it answered the run's other looks ({_detail(err)}); it was given "
                                      "up on and cancelled, and costs nothing here: the endpoint reported no usage"))
        if answered:
            self.went_through()
        elif outage is not None:
            self.failed(*outage)
        return given_up

    def went_through(self) -> None:
        """A look went through: the endpoint answers, whatever failed before."""
        self.since, self.rounds = None, 0

    def failed(self, err: Exception, client: JudgeClient) -> None:
        """A round in which every look failed (`err` the last): RunStopped, saying why and what to do, once it is
        past what the judge's client allows a request."""
        now = time.monotonic()
        self.since = self.since if self.since is not None else now
        self.rounds += 1
        failing_for = now - self.since
        if _outage(err):
            if failing_for >= client.outage_budget:
                raise RunStopped(f"the judge endpoint has been failing with {_what(err)} for {span(failing_for)} while "
                                 f"its background responses were polled: {_said(err)}; {RESUME} once it answers: "
                                 f"{KEPT}")
            return
        if self.rounds <= client.max_retries:
            return
        if caused_by(err, ConnectionRefusedError, socket.gaierror, aiohttp.ClientConnectorError):
            raise RunStopped(f"cannot reach the judge endpoint {client.endpoint} to poll its background responses "
                             f"({_detail(err)}; {self.rounds} rounds of looks failed in a row); check the endpoint and "
                             f"the network, then {RESUME}: {KEPT}")
        raise RunStopped(f"the judge endpoint failed {self.rounds} rounds of looks at its background responses in a row "
                         f"({_detail(err)}); {RESUME} once it answers: {KEPT}")


def _outage(err: Exception) -> bool:
    """Whether `err` says the endpoint is down or overloaded (waited out for a time), not that it is unreachable."""
    if isinstance(err, NotACompletion):
        return err.outage
    return isinstance(err, openai.APIStatusError) and (err.status_code in OUTAGE_STATUSES or err.status_code == 429)


def _what(err: Exception) -> str:
    return status_text(err.status_code) if isinstance(err, openai.APIStatusError) else "errors in its 200 replies"


def _said(err: Exception) -> str:
    """What the endpoint said of its outage, in one line."""
    if isinstance(err, NotACompletion):
        return err.detail or str(err)
    return message_of(err) if isinstance(err, openai.APIStatusError) else str(err)


def _detail(err: Exception) -> str:
    """What failed: the endpoint's status and words, or what the connection ran into, in one line."""
    if isinstance(err, NotACompletion):
        return one_line(str(err), 300)
    if isinstance(err, openai.APIStatusError):
        return f"{status_text(err.status_code)}: {message_of(err)}"
    cause = err.__cause__ or err.__context__
    return one_line(str(cause or err), 300) or type(err).__name__
