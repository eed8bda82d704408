"""The reviewers' nudge: on weekdays at the time a channel chose, each of its reviewers with cases waiting gets one
direct message, once a day however many processes run and however often they restart."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.digest.schedule import ChannelScheduler
from bot.errors import SetupError
from bot.slack.context import Context
from bot.slack.flows.earlier_posts import earlier_post
from bot.slack.messenger import once_client, refused, slack_error
from bot.slack.terminal_workspace import workspace_of
from bot.slack.views.review import nudge_message
from bot.store import (
    ReviewSetup,
    Store,
    claim_nudge,
    mark_nudged,
    nudged_channels,
    release_nudge,
    review_setup,
    unanswered_nudge,
    utcnow,
    waiting_for,
)

log = logging.getLogger(__name__)

NUDGE_EVENT = "judgebot_review_nudge"  # message metadata that marks a nudge sent
GRACE = timedelta(hours=6)  # a nudge missed while the bot was down is still sent this long after its time


class NudgeScheduler(ChannelScheduler[ReviewSetup]):
    """Fires each nudged channel's nudge on weekdays at its local time."""

    kind = "review-nudge"

    def entries(self) -> list[ReviewSetup]:
        return [setup for setup in nudged_channels(self.store) if setup.nudges]

    def entry(self, team_id: str, channel_id: str) -> ReviewSetup | None:
        setup = review_setup(self.store, team_id=team_id, channel_id=channel_id)
        return setup if setup.nudges else None

    def trigger_of(self, entry: ReviewSetup) -> CronTrigger:
        return CronTrigger(day_of_week="mon-fri", hour=entry.nudge_hour, minute=entry.nudge_minute,
                           timezone=ZoneInfo(entry.nudge_timezone or "UTC"))

    def set_at(self, entry: ReviewSetup) -> datetime:
        return entry.nudge_set_at or datetime.min

    def signature(self, entry: ReviewSetup) -> tuple[object, ...]:
        return entry.nudge_hour, entry.nudge_minute, entry.nudge_timezone, entry.nudge_set_at


@dataclass
class Nudger:
    """Sends a channel's nudges of a day through a Web API client: each reviewer with cases waiting, once, whichever
    process asks (a claim in the database decides; a nudge that reached Slack unrecorded is found there)."""

    store: Store
    client: AsyncWebClient

    async def nudge(self, setup: ReviewSetup, day: str) -> int:
        """Nudge each reviewer of a channel who has cases waiting, once on `day`; how many this process nudged."""
        sent = 0
        for user in await self.reviewers(setup):
            waiting = await asyncio.to_thread(waiting_for, self.store, team_id=setup.team_id,
                                              channel_id=setup.channel_id, user_id=user, now=utcnow())
            if waiting and await self._nudge_one(setup, user, day, waiting):
                sent += 1
        return sent

    async def reviewers(self, setup: ReviewSetup) -> list[str]:
        """The members a channel's reviewers name: its people, and the members of its user groups."""
        members: list[str] = []
        for ident in setup.reviewers:
            if not ident.startswith("S"):
                members.append(ident)
                continue
            try:
                members.extend((await self.client.usergroups_users_list(usergroup=ident)).get("users") or [])
            except Exception as err:
                log.warning("could not list the members of user group %s: %s", ident, slack_error(err))
        return list(dict.fromkeys(members))

    async def _nudge_one(self, setup: ReviewSetup, user: str, day: str, waiting: int) -> bool:
        claim = await asyncio.to_thread(claim_nudge, self.store, team_id=setup.team_id, channel_id=setup.channel_id,
                                        user_id=user, day=day)
        if claim is None:
            return False  # sent today already, or being sent by another process
        try:
            opened = await self.client.conversations_open(users=user)
            dm = str((opened.get("channel") or {})["id"])
            # Only an earlier try that may have sent it (no answer came, or its process died) is looked for
            if claim.earlier is not None and (found := await earlier_post(
                    self.client, dm, claim.earlier, NUDGE_EVENT,
                    lambda payload: payload == {"channel": setup.channel_id, "day": day})):
                await asyncio.to_thread(mark_nudged, self.store, claim_id=claim.id, message_ts=found)
                return False
            posted = await once_client(self.client).chat_postMessage(  # a dropped call is not sent again blindly
                channel=dm, **nudge_message(setup.channel_id, waiting),
                metadata={"event_type": NUDGE_EVENT, "event_payload": {"channel": setup.channel_id, "day": day}})
        except Exception as err:
            # Refused: nothing was sent, the claim is given up; no answer: it may be there, the next try looks
            settle = release_nudge if refused(err) else unanswered_nudge
            await asyncio.to_thread(settle, self.store, claim_id=claim.id)
            log.warning("could not nudge %s for %s: %s", user, setup.channel_id, slack_error(err))
            return False
        await asyncio.to_thread(mark_nudged, self.store, claim_id=claim.id, message_ts=str(posted["ts"]))
        return True


def today_of(setup: ReviewSetup) -> str:
    """The channel's local day now, as its nudges are claimed."""
    return datetime.now(ZoneInfo(setup.nudge_timezone or "UTC")).date().isoformat()


class ReviewNudges:
    """Sends the nudges of every channel that asks for them, at their times."""

    def __init__(self, ctx: Context, *, grace: timedelta = GRACE) -> None:
        self.ctx = ctx
        self.scheduler = NudgeScheduler(ctx.store, self.on_due, grace=grace)

    async def start(self) -> None:
        """Start the schedule of every nudged channel."""
        await self.scheduler.start()

    def stop(self) -> None:
        """Stop the schedule; nudges being sent finish while the bot drains."""
        self.scheduler.stop()

    async def on_due(self, setup: ReviewSetup, due: datetime) -> None:
        """A channel's nudge is due (called by the schedule): nudge its reviewers of that local day."""
        self.ctx.tasks.spawn(self.nudge(setup, due.date().isoformat()), f"review nudge of {setup.channel_id}")

    async def nudge(self, setup: ReviewSetup, day: str) -> int:
        """Nudge a channel's reviewers of `day` (see Nudger.nudge), for the channel's workspace."""
        async with self.ctx.acting_for(setup.team_id):
            return await Nudger(self.ctx.store, self.ctx.client).nudge(setup, day)


async def nudge_from_terminal(settings: Settings, store: Store, channel_id: str) -> str:
    """`judgebot review --channel ID --nudge`: today's nudge of a channel's reviewers, through the bot's token; each
    reviewer gets it once a day, whoever sends it."""
    found = await workspace_of(settings, store, channel_id)
    setup = await asyncio.to_thread(review_setup, store, team_id=found.team_id or "", channel_id=channel_id)
    if not setup.reviewers:
        raise SetupError(f"{channel_id} has no reviewers: `/judge reviewers @a @b` in the channel names them.")
    sent = await Nudger(store, found.client).nudge(setup, today_of(setup))
    return (f"Nudged {sent} reviewer(s) of {channel_id}." if sent else
            f"Nobody of {channel_id} was nudged: no reviewer has cases waiting, or each was nudged today already.")
