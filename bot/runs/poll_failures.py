"""Looks at background responses that fail, and when they pause the run, as a live run's requests pause
(bot.llm.client).

An outage (502-504, 529, 429, an error object in a 200) pauses it once no look has gone through for the judge's outage
budget; a refused connection, a timeout, another 5xx or a body that is not a response after as many rounds of looks
in a row as a request has tries. The response ids stay saved: a resume polls them, never sends them again."""

from __future__ import annotations

import socket
import time

import aiohttp
import openai

from bot.errors import RunStopped
from bot.llm.answers import RESUME, NotACompletion, message_of, one_line, status_text
from bot.llm.client import OUTAGE_STATUSES, JudgeClient
from bot.llm.retries import caused_by, span

KEPT = "the responses are polled again, never sent again"


class PollFailures:
    """The rounds of looks at a run's open responses in which none went through, since the last that did."""

    def __init__(self) -> None:
        self.since: float | None = None  # time.monotonic() of the first failed round since a look went through
        self.rounds = 0

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
