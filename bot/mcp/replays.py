"""Each request Slack signed for the MCP server taken once by every replica together: remembered in the database
(`slack_delivery`, beside Slack's deliveries to the bot) before any tool runs, so that a replay is refused."""

from __future__ import annotations

import asyncio
import hashlib
import time
from datetime import timedelta

from bot.store import Store, forget_deliveries, record_delivery, utcnow

# A signature older than five minutes is refused anyway (bot.mcp.gate.SIGNED_WITHIN), so a request needs remembering
# for about five minutes either side of the clock: an hour is ample, whatever the replicas' clocks say.
KEEP = timedelta(hours=1)
FORGET_EVERY = 600.0  # seconds between two clean-ups of what is older than KEEP
KIND = "mcp"


def signed_key(timestamp: str, body: bytes) -> str:
    """What Slack signed (the timestamp and the raw body), as the key a replay of it has too."""
    return "mcp:" + hashlib.sha256(timestamp.encode() + b":" + body).hexdigest()


class SignedOnce:
    """Records each signed request in the history's database; the first to record one takes it."""

    def __init__(self, store: Store, *, keep: timedelta = KEEP, forget_every: float = FORGET_EVERY) -> None:
        self.store, self.keep, self.forget_every = store, keep, forget_every
        self._forget_at = 0.0  # monotonic: the first request forgets what an earlier run left

    async def first(self, timestamp: str, body: bytes) -> bool:
        """True if this call recorded the request (take it); False if this or another process recorded it before.
        Raises what the database raises when it cannot be reached (the request is then not taken)."""
        forget = time.monotonic() >= self._forget_at
        if forget:
            self._forget_at = time.monotonic() + self.forget_every
        return await asyncio.to_thread(self._record, signed_key(timestamp, body), forget)

    def _record(self, key: str, forget: bool) -> bool:
        if forget:
            forget_deliveries(self.store, before=utcnow() - self.keep)
        return record_delivery(self.store, key=key, kind=KIND)
