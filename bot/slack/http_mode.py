"""HTTP mode's front door: Slack's signature checked first on the raw bytes, repeats dropped, then the bolt app."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)

# SignatureVerifier accepts a timestamp up to 5 minutes either side of now: a request accepted now may be sent
# again, still valid, for up to 10 minutes. Remembering it that long drops every repeat; forgetting it after
# that keeps the memory to the requests of the last 10 minutes.
RETENTION = 2 * 60 * 5
REFUSED = {"error": "invalid request"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Replays:
    """The (timestamp, signature) of every signed request accepted in the last RETENTION seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.seen: dict[tuple[str, str], float] = {}  # in arrival order, so also in order of expiry

    def __len__(self) -> int:
        return len(self.seen)

    def first_time(self, timestamp: str, signature: str) -> bool:
        """Whether this request is new (and from now on remembered), rather than a repeat of one accepted lately."""
        now = self.clock()
        while self.seen and next(iter(self.seen.values())) <= now:
            del self.seen[next(iter(self.seen))]
        if (timestamp, signature) in self.seen:
            return False
        self.seen[(timestamp, signature)] = now + RETENTION
        return True


def signed(verifier: SignatureVerifier, body: bytes, timestamp: str, signature: str) -> bool:
    """Whether Slack signed `body`: anything malformed (a timestamp that is no number, bytes that are not UTF-8)
    is simply not signed."""
    try:
        return verifier.is_valid(body, timestamp, signature)
    except ValueError:  # UnicodeDecodeError included
        return False


def events_handler(app: AsyncApp, signing_secret: str) -> Handler:
    """The POST handler of the events URL: refuse what Slack did not sign (401), drop repeats, let bolt answer."""
    verifier, replays = SignatureVerifier(signing_secret), Replays()

    async def events(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        if not signed(verifier, body, timestamp, signature):
            log.info("refused a request to %s without a valid Slack signature", request.path)
            return web.json_response(REFUSED, status=401)
        if not replays.first_time(timestamp, signature):
            log.warning("dropped a repeat of a signed request (timestamp %s, Slack's retry number %s)", timestamp,
                        request.headers.get("X-Slack-Retry-Num", "none"))
            return web.Response(status=200)  # acknowledged, so a retry by Slack stops; processed once already
        try:
            bolt_request = AsyncBoltRequest(body=body.decode(), query=request.query_string,
                                            headers=dict(request.headers))
        except (ValueError, AttributeError, TypeError):  # not UTF-8, not JSON, or JSON that is not an object
            log.warning("refused a signed request whose body is not in Slack's format")
            return web.json_response(REFUSED, status=400)
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    return events
