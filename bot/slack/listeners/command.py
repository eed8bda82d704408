"""`/judge ...`: parsed, acknowledged at once, and answered by the handler of its kind in a task of its own.

A new subcommand is a dataclass and a few lines of parsing in slack/commands.py, and one handler here (or in the
listener of its own area, registered through `handlers()`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.errors import CommandError
from bot.runs import Origin
from bot.slack.commands.parsing import (
    CalibrationCheck,
    Help,
    History,
    Inline,
    ListRubrics,
    OpenForm,
    SetDefault,
    ShowDefault,
    Stats,
    parse_command,
)
from bot.slack.context import Context
from bot.slack.flows.card import CARD_SOURCE, show_judgment
from bot.slack.listeners.clicks import OTHER_WORKSPACE, QUICK_READ, from_team, named_teams
from bot.slack.messenger import failure_text, slack_error
from bot.slack.text import escape
from bot.slack.views.blocks import notice
from bot.slack.views.calibration import calibration_message
from bot.slack.views.commands import (
    FormContext,
    FormSeal,
    form_view,
    help_message,
    history_message,
    rubrics_message,
    stats_message,
)
from bot.store import (
    channel_stats,
    default_rubric,
    default_samples,
    labeled_rubric_names,
    recent_in_channel,
    remembered_model,
    set_default_rubric,
    utcnow,
)
from bot.trust.report import RubricTrust, TrustBar, rubric_trust

log = logging.getLogger(__name__)


Handler = Callable[[Any, dict[str, Any]], Coroutine[Any, Any, None]]


class CommandListener:
    """`/judge`: help and the rubric list in the ack itself, the form right after it, everything else in a task."""

    def __init__(self, ctx: Context, seal: FormSeal, *more: dict[type, Handler], trust: TrustBar | None = None) -> None:
        self.ctx, self.seal = ctx, seal
        self.trust = trust or TrustBar()
        self.handlers: dict[type, Handler] = {
            Inline: self._inline, History: self._history, Stats: self._stats,
            ShowDefault: self._show_default, SetDefault: self._set_default,
            CalibrationCheck: self._calibration,
        }
        for handlers in more:
            self.handlers.update(handlers)

    async def on_command(self, ack: AsyncAck, command: dict[str, Any]) -> None:
        """`/judge ...`: answer help at once; open the form; or do the work after the ack."""
        if not from_team(command, self.ctx.team_id):  # a person of another organisation, in a shared channel
            log.warning("/judge refused for user %s in channel %s of team(s) %s", command.get("user_id"),
                        command.get("channel_id"), named_teams(command))
            await ack(response_type="ephemeral", text=OTHER_WORKSPACE)
            return
        try:
            parsed = parse_command(command.get("text") or "", self.ctx.rubrics)
        except CommandError as err:
            await ack(response_type="ephemeral", text=str(err))
            return
        if isinstance(parsed, Help):
            await ack(response_type="ephemeral", **help_message(self.ctx.rubrics))
        elif isinstance(parsed, ListRubrics):
            await ack(response_type="ephemeral", **rubrics_message(self.ctx.rubrics))
        elif isinstance(parsed, OpenForm):
            await ack()
            await self._open_form(parsed, command)
        else:
            await ack()
            where = command.get("response_url")
            self.ctx.tasks.spawn(self.handlers[type(parsed)](parsed, command), f"/judge {type(parsed).__name__.lower()}",
                                 on_failure=lambda err: self.ctx.say.tell(where, failure_text(err)))

    async def remembered_model(self, team: str, user: str, *, within: float | None = None) -> str | None:
        """The model under test this person named last; None when the history cannot say (in time)."""
        try:
            return await asyncio.wait_for(self.ctx.db(remembered_model, team_id=team, user_id=user), within)
        except Exception:
            log.warning("could not read the remembered model of %s", user, exc_info=True)
            return None

    async def _open_form(self, parsed: OpenForm, command: dict[str, Any]) -> None:
        model = await self.remembered_model(command["team_id"], command["user_id"], within=QUICK_READ)
        context = FormContext(team_id=command["team_id"], channel_id=command["channel_id"],
                              response_url=command.get("response_url"))
        view = form_view(self.ctx.rubrics, parsed.rubric, model_name=model, metadata=self.seal.seal(context))
        try:
            await self.ctx.client.views_open(trigger_id=command["trigger_id"], view=view)
        except Exception as err:
            log.warning("views.open failed: %s", slack_error(err))
            await self.ctx.say.tell(command.get("response_url"), f"I could not open the form (`{slack_error(err)}`). "
                                    f"Please try again, or judge at once: `/judge {parsed.rubric.name} question || "
                                    "reference || answer`.")

    async def _inline(self, parsed: Inline, command: dict[str, Any]) -> None:
        model = await self.remembered_model(command["team_id"], command["user_id"])
        origin = Origin(source=CARD_SOURCE, team_id=command["team_id"], channel_id=command["channel_id"],
                        user_id=command["user_id"])
        await show_judgment(self.ctx, rubric=parsed.rubric, triple=parsed.triple, origin=origin, model_name=model,
                            response_url=command.get("response_url"), samples=parsed.samples)

    async def _history(self, parsed: History, command: dict[str, Any]) -> None:
        rows = await self.ctx.db(recent_in_channel, channel_id=command["channel_id"], limit=parsed.limit)
        await self.ctx.say.reply(command.get("response_url"),
                                 history_message(rows, command["channel_id"], self.ctx.team_url))

    async def _stats(self, parsed: Stats, command: dict[str, Any]) -> None:
        since = utcnow() - timedelta(days=parsed.days) if parsed.days else None
        figures = await self.ctx.db(channel_stats, channel_id=command["channel_id"], since=since, model=parsed.model)
        warnings = await self.ctx.judge_warnings(command["team_id"], command["channel_id"])
        await self.ctx.say.reply(command.get("response_url"), stats_message(
            figures, command["channel_id"], days=parsed.days, model=parsed.model, warnings=warnings))

    async def _calibration(self, parsed: CalibrationCheck, command: dict[str, Any]) -> None:
        team, channel = command["team_id"], command["channel_id"]
        since = utcnow() - timedelta(days=parsed.days) if parsed.days else None
        names = await self._rubrics_to_calibrate(parsed, team, channel, since)
        reports: list[RubricTrust] = []
        for name in names:
            reports.append(await self.ctx.db(rubric_trust, rubric_name=name, rubric=self.ctx.rubrics.find(name),
                                             channel_id=channel, team_id=team, since=since, bar=self.trust))
        only = names[0] if len(names) == 1 else None
        await self.ctx.say.reply(command.get("response_url"),
                                 calibration_message(reports, self.ctx.rubrics, channel, days=parsed.days, rubric_name=only))

    async def _rubrics_to_calibrate(self, parsed: CalibrationCheck, team: str, channel: str,
                                    since: datetime | None) -> list[str]:
        """The rubric named; else the channel's default rubric; else every rubric with labels in the channel."""
        if parsed.rubric is not None:
            return [parsed.rubric.name]
        name = await self.ctx.db(default_rubric, team_id=team, channel_id=channel)
        if name and (rubric := self.ctx.rubrics.find(name)) is not None:
            return [rubric.name]
        return await self.ctx.db(labeled_rubric_names, channel_id=channel, team_id=team, since=since)

    async def _show_default(self, parsed: ShowDefault, command: dict[str, Any]) -> None:
        name = await self.ctx.db(default_rubric, team_id=command["team_id"], channel_id=command["channel_id"])
        rubric = self.ctx.rubrics.find(name) if name else None
        if rubric is not None:
            text = (f"CSV files shared in <#{command['channel_id']}> are judged with *{escape(rubric.title)}* "
                    f"(`{rubric.name}`) unless their message names another rubric. `/judge default none` clears it.")
        else:
            text = (f"<#{command['channel_id']}> has no default rubric: a CSV shared here is judged with the rubric "
                    "its message names (such as `eth`), or I ask. `/judge default <rubric>` sets one.")
        samples = await self.ctx.db(default_samples, team_id=command["team_id"], channel_id=command["channel_id"])
        if samples and samples > 1:
            text += (f"\nEach row judged here is judged {samples} times (`/judge default samples 1`: once), unless a "
                     "message or command says `samples=N`.")
        await self.ctx.say.tell(command.get("response_url"), text)

    async def _set_default(self, parsed: SetDefault, command: dict[str, Any]) -> None:
        name = parsed.rubric.name if parsed.rubric else None
        await self.ctx.db(set_default_rubric, team_id=command["team_id"], channel_id=command["channel_id"], rubric_name=name,
                          user_id=command["user_id"])
        who = f"<@{command['user_id']}>"
        text = (f"{who} set the default rubric of this channel to *{escape(parsed.rubric.title)}* (`{name}`): CSV "
                "files shared here are judged with it unless their message names another." if parsed.rubric else
                f"{who} cleared the default rubric of this channel.")
        await self.ctx.say.reply(command.get("response_url"), {**notice(text), "response_type": "in_channel"})
