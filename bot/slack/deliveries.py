"""Each delivery from Slack processed once by all the bot's processes together: recorded in the database first."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.slack.context import Context
from bot.store import forget_deliveries, record_delivery, utcnow

log = logging.getLogger(__name__)

# Slack retries an event three times within about 6 minutes, and a signed request is refused once its timestamp is
# more than 5 minutes from the clock, so a replay matters for about 10 minutes: an hour is ample, whatever the clocks.
# A workflow step can be ended only within the 15 minutes of its token, so its execution is kept four times as long.
KEEP = timedelta(hours=1)
FORGET_EVERY = timedelta(minutes=10)
UNRECORDED = ("judgebot cannot reach its database just now, so it did not take this command. "
              "Try again in a minute.")


def delivery_key(req: AsyncBoltRequest) -> str:
    """What is the same in every delivery of one thing and differs between two things.

    An event keeps its event_id through Slack's retries, which are signed anew (another timestamp) and may reach
    another process or Socket Mode connection. A Workflow Builder step is one execution however often it is
    delivered: Slack may send its function_executed event again under a new event_id, so the execution's id is the
    key (one judgment, one card, one bill a step). A command or an interaction is not retried by Slack: over HTTP the
    request it signed (timestamp and body) is the delivery, so that a replay of it is dropped; in Socket Mode,
    where nothing is signed, its payload is (it holds the trigger_id Slack makes for each one).
    """
    event = req.body.get("event")
    if isinstance(event, dict) and event.get("type") == "function_executed":
        execution = event.get("function_execution_id")
        if isinstance(execution, str) and execution:
            return f"step:{execution}"[:80]
    event_id = req.body.get("event_id")
    if isinstance(event_id, str) and event_id:
        return f"event:{event_id}"[:80]
    if req.mode == "http":
        stamp = (req.headers.get("x-slack-request-timestamp") or [""])[0]
        delivered = f"{stamp}:{req.raw_body}"
    else:
        delivered = json.dumps(req.body, sort_keys=True, separators=(",", ":"))
    return f"request:{hashlib.sha256(delivered.encode()).hexdigest()}"


def delivery_kind(body: dict[str, Any]) -> str:
    """The payload's type (event_callback, block_actions, view_submission...), or command for a slash command."""
    kind = body.get("type")
    return str(kind) if kind else "command" if "command" in body else "unknown"


class Deliveries(AsyncMiddleware):
    """The app's first global middleware: it records each delivery before any listener runs, and drops (with an
    empty 200, so that Slack stops retrying) one this or another process recorded before. Its schedule forgets
    records older than `keep`, in batches.
    """

    def __init__(self, ctx: Context, *, keep: timedelta = KEEP, forget_every: timedelta = FORGET_EVERY) -> None:
        self.ctx, self.keep, self.forget_every = ctx, keep, forget_every
        self.scheduler = AsyncIOScheduler(timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1})

    async def async_process(self, *, req: AsyncBoltRequest, resp: BoltResponse,
                            next: Callable[[], Awaitable[BoltResponse]]) -> BoltResponse | None:
        key, kind = delivery_key(req), delivery_kind(req.body)
        try:
            first = await self.ctx.db(record_delivery, key=key, kind=kind)
        except Exception:
            # Unrecorded, it is not taken: taking it could process it twice. Slack retries an event it got no 200
            # for, later or on another process; a person is told to try the command again.
            log.error("could not record a %s delivery; not processed", kind, exc_info=True)
            if kind == "command":
                return BoltResponse(status=200, body={"response_type": "ephemeral", "text": UNRECORDED})
            return BoltResponse(status=503, body="")
        if not first:
            log.info("dropped a %s delivered again (%s, Slack's retry number %s): it was taken already", kind, key,
                     (req.headers.get("x-slack-retry-num") or ["none"])[0])
            return BoltResponse(status=200, body="")
        return await next()

    async def start(self) -> None:
        """Forget old deliveries every `forget_every`, in the running event loop."""
        self.scheduler.start()
        self.scheduler.add_job(self.forget, IntervalTrigger(seconds=self.forget_every.total_seconds()),
                               id="deliveries-forget", replace_existing=True, misfire_grace_time=None)

    def stop(self) -> None:
        """Stop forgetting; a batch under way finishes in its thread."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def forget(self) -> int:
        """Delete the records older than `keep`; return how many went."""
        try:
            gone = await self.ctx.db(forget_deliveries, before=utcnow() - self.keep)
        except Exception:
            log.warning("could not forget old Slack deliveries; the next round tries again", exc_info=True)
            return 0
        if gone:
            log.info("forgot %d Slack deliveries older than %s", gone, self.keep)
        return gone
