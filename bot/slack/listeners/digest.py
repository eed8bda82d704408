"""`/judge digest ...`: a channel's schedule shown, turned on or off (admins only), posted now or previewed."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from slack_sdk.errors import SlackApiError

from bot.digest import Period, build_digest
from bot.slack.admins import ADMINS_ONLY, admin_refusal
from bot.slack.commands.digest import DIGEST_USAGE, DigestNow, DigestOff, DigestOn, DigestPreview, DigestShow
from bot.slack.context import Context
from bot.slack.flows.digest_post import DigestSettings, WeeklyDigests
from bot.slack.messenger import post_problem, slack_error
from bot.slack.text import date
from bot.slack.views.blocks import notice
from bot.slack.views.digest import digest_message, schedule_text
from bot.store import DigestSubscription, last_posted, subscribe, subscription, unsubscribe

log = logging.getLogger(__name__)

NOT_ADMIN = (
    f"{ADMINS_ONLY} turn the weekly digest on or off. Ask one of them; `/judge digest preview` shows you what "
    "it says."
)


class DigestCommands:
    """The `/judge digest` subcommands of one bot, over its weekly digests."""

    def __init__(self, ctx: Context, digests: WeeklyDigests, settings: DigestSettings) -> None:
        self.ctx, self.digests, self.settings = ctx, digests, settings

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {DigestShow: self.show, DigestOn: self.turn_on, DigestOff: self.turn_off,
                DigestNow: self.now, DigestPreview: self.preview}

    def _zone(self, sub: DigestSubscription | None) -> ZoneInfo:
        return ZoneInfo(sub.timezone if sub is not None else self.settings.timezone)

    async def show(self, parsed: DigestShow, command: dict[str, Any]) -> None:
        """`/judge digest`: the channel's subscription, when it posts next, and when it last posted."""
        team, channel = command["team_id"], command["channel_id"]
        sub = await self.ctx.db(subscription, team_id=team, channel_id=channel)
        if sub is None:
            await self.ctx.say.tell(command.get("response_url"),
                                f"<#{channel}> gets no weekly digest. An admin turns it on with "
                                f"{DIGEST_USAGE}; `/judge digest preview` shows you what it would say.")
            return
        text = (f"<#{channel}> gets its weekly digest {schedule_text(sub)}: the next one on "
                f"{date(await self.digests.next_digest(sub))}.")
        last = await self.ctx.db(last_posted, channel_id=channel)
        if last is not None and last.posted_at is not None:
            text += f" The last one was posted {date(last.posted_at)}."
        await self.ctx.say.tell(command.get("response_url"), text + " `/judge digest off` stops it (admins).")

    async def turn_on(self, parsed: DigestOn, command: dict[str, Any]) -> None:
        """`/judge digest on ...`: subscribe the channel (admins only), schedule it at once, and say so there."""
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        where = command.get("response_url")
        if (refusal := await self._refusal(user, team)) is not None:
            await self.ctx.say.tell(where, refusal)
            return
        before = await self.ctx.db(subscription, team_id=team, channel_id=channel)
        sub = await self.ctx.db(subscribe, team_id=team, channel_id=channel, weekday=parsed.weekday, hour=parsed.hour,
                                minute=parsed.minute, timezone=parsed.timezone or self.settings.timezone,
                                user_id=user)
        self.digests.scheduler.schedule(sub)
        text = (f"<@{user}> turned on the weekly digest of this channel: {schedule_text(sub)}, with the figures of "
                f"each model under test, their change on the week before, and a trend chart. The first comes on "
                f"{date(await self.digests.next_digest(sub))}. `/judge digest preview` shows what it says.")
        sent = await self.ctx.say.post(channel, notice(text), what="the digest turned on")
        if not sent.ok:  # the bot cannot post here: a digest could not be posted either
            await self._restore(team, channel, before)
            await self.ctx.say.tell(where, f"{post_problem(sent.refusal or '', channel)} The weekly digest stays as "
                                           "it was.")

    async def _restore(self, team: str, channel: str, before: DigestSubscription | None) -> None:
        if before is None:
            await self.ctx.db(unsubscribe, team_id=team, channel_id=channel)
            self.digests.scheduler.unschedule(team, channel)
            return
        sub = await self.ctx.db(subscribe, team_id=team, channel_id=channel, weekday=before.weekday, hour=before.hour,
                                minute=before.minute, timezone=before.timezone, user_id=before.updated_by)
        self.digests.scheduler.schedule(sub)

    async def turn_off(self, parsed: DigestOff, command: dict[str, Any]) -> None:
        """`/judge digest off`: unsubscribe the channel (admins only), at once, and say so there."""
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        where = command.get("response_url")
        if (refusal := await self._refusal(user, team)) is not None:
            await self.ctx.say.tell(where, refusal)
            return
        removed = await self.ctx.db(unsubscribe, team_id=team, channel_id=channel)
        self.digests.scheduler.unschedule(team, channel)
        if not removed:
            await self.ctx.say.tell(where, f"<#{channel}> gets no weekly digest, so there is nothing to turn off.")
            return
        await self.ctx.say.reply(where, {**notice(f"<@{user}> turned off the weekly digest of this channel."),
                                     "response_type": "in_channel"})

    async def now(self, parsed: DigestNow, command: dict[str, Any]) -> None:
        """`/judge digest now`: post the digest of the last 7 days in the channel."""
        channel = command["channel_id"]
        period = await self._last_days(command)
        try:
            await self.digests.poster.post(channel, period, weekly=False)
        except SlackApiError as err:
            await self.ctx.say.tell(command.get("response_url"), post_problem(slack_error(err), channel))

    async def preview(self, parsed: DigestPreview, command: dict[str, Any]) -> None:
        """`/judge digest preview`: the digest of the last 7 days, to the caller only (without the chart)."""
        period = await self._last_days(command)
        digest = await self.ctx.db(build_digest, channel_id=command["channel_id"], period=period,
                                   team_id=command["team_id"], bar=self.digests.settings.trust)
        digest.warnings = await self.ctx.judge_warnings(command["team_id"], command["channel_id"])
        message = digest_message(digest, self.ctx.rubrics, self.ctx.team_url, weekly=False, chart=False,
                                 view_url=self.ctx.view_url)
        await self.ctx.say.reply(command.get("response_url"), message)

    async def _last_days(self, command: dict[str, Any]) -> Period:
        sub = await self.ctx.db(subscription, team_id=command["team_id"], channel_id=command["channel_id"])
        return Period.ending(datetime.now(self._zone(sub)))

    async def _refusal(self, user: str, team: str) -> str | None:
        """Why `user` may not turn digests on or off in workspace `team`, or None if they may."""
        return await admin_refusal(self.ctx.client, self.settings.admins, user=user, team=team, not_admin=NOT_ADMIN)
