"""The listeners: each acknowledges Slack at once, then does its work in a task of its own."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.records import Triple
from bot.rubric import RubricError
from bot.runs import Origin
from bot.slack import commands
from bot.slack.blocks import notice
from bot.slack.cards import AGREE, reply_view, result_card
from bot.slack.commands import CommandError, parse_command
from bot.slack.digests import Digests
from bot.slack.judging import CARD_SOURCE, OUR_FAULT, Judgebot, slack_error
from bot.slack.text import escape
from bot.slack.views import (
    HOME_JUDGMENTS,
    FormContext,
    form_context,
    form_values,
    form_view,
    help_message,
    history_message,
    home_view,
    rubrics_message,
    stats_message,
)
from bot.store.feedback import feedback_tally, record_feedback, remember_model, remembered_model
from bot.store.history import channel_stats, newest_on_message, recent_by_user, recent_in_channel
from bot.store.models import Judgment, utcnow
from bot.store.shares import default_rubric, set_default_rubric

log = logging.getLogger(__name__)

QUICK_READ = 1.5  # seconds a database read may take before a trigger_id (valid ~3 s) must be used
NOT_HERE = "I cannot find this judgment in this channel's history."


class Listeners:
    """Every listener of the app, as bound methods over the shared `Judgebot`."""

    def __init__(self, bot: Judgebot, digests: Digests) -> None:
        self.bot, self.digests = bot, digests

    # -- /judge ---------------------------------------------------------------------------------------------

    async def on_command(self, ack: AsyncAck, command: dict[str, Any]) -> None:
        """`/judge ...`: answer help at once; open the form; or judge after the ack."""
        try:
            parsed = parse_command(command.get("text") or "", self.bot.rubrics)
        except CommandError as err:
            await ack(response_type="ephemeral", text=str(err))
            return
        if isinstance(parsed, commands.Help):
            await ack(response_type="ephemeral", **help_message(self.bot.rubrics))
        elif isinstance(parsed, commands.ListRubrics):
            await ack(response_type="ephemeral", **rubrics_message(self.bot.rubrics))
        elif isinstance(parsed, commands.OpenForm):
            await ack()
            await self._open_form(parsed, command)
        else:
            await ack()
            work = {commands.Inline: self._inline, commands.History: self._history, commands.Stats: self._stats,
                    commands.ShowDefault: self._show_default, commands.SetDefault: self._set_default,
                    commands.DigestShow: self.digests.show, commands.DigestOn: self.digests.turn_on,
                    commands.DigestOff: self.digests.turn_off, commands.DigestNow: self.digests.now,
                    commands.DigestPreview: self.digests.preview}
            handler = work[type(parsed)]  # type: ignore[index]
            self.bot.spawn(handler(parsed, command), f"/judge {type(parsed).__name__.lower()}",
                           response_url=command.get("response_url"))

    async def _remembered_model(self, team: str, user: str, *, within: float | None = None) -> str | None:
        """The model under test this person named last; None when the history cannot say (in time)."""
        try:
            return await asyncio.wait_for(self.bot.db(remembered_model, self.bot.store, team, user), within)
        except Exception:
            log.warning("could not read the remembered model of %s", user, exc_info=True)
            return None

    async def _open_form(self, parsed: commands.OpenForm, command: dict[str, Any]) -> None:
        model = await self._remembered_model(command["team_id"], command["user_id"], within=QUICK_READ)
        context = FormContext(channel_id=command["channel_id"], response_url=command.get("response_url"))
        view = form_view(self.bot.rubrics, parsed.rubric, model_name=model, context=context)
        try:
            await self.bot.client.views_open(trigger_id=command["trigger_id"], view=view)
        except Exception as err:
            log.warning("views.open failed: %s", slack_error(err))
            await self.bot.tell(command.get("response_url"), f"I could not open the form (`{slack_error(err)}`). "
                                f"Please try again, or judge at once: `/judge {parsed.rubric.name} question || "
                                "reference || answer`.")

    async def _inline(self, parsed: commands.Inline, command: dict[str, Any]) -> None:
        model = await self._remembered_model(command["team_id"], command["user_id"])
        origin = Origin(source=CARD_SOURCE, team_id=command["team_id"], channel_id=command["channel_id"],
                        user_id=command["user_id"])
        await self.bot.show_judgment(rubric=parsed.rubric, triple=parsed.triple, origin=origin, model_name=model,
                                     response_url=command.get("response_url"))

    async def _history(self, parsed: commands.History, command: dict[str, Any]) -> None:
        rows = await self.bot.db(recent_in_channel, self.bot.store, command["channel_id"], limit=parsed.limit)
        await self.bot.reply(command.get("response_url"),
                             history_message(rows, command["channel_id"], self.bot.team_url))

    async def _stats(self, parsed: commands.Stats, command: dict[str, Any]) -> None:
        since = utcnow() - timedelta(days=parsed.days) if parsed.days else None
        figures = await self.bot.db(channel_stats, self.bot.store, command["channel_id"], since=since,
                                    model=parsed.model)
        await self.bot.reply(command.get("response_url"),
                             stats_message(figures, command["channel_id"], days=parsed.days, model=parsed.model))

    async def _show_default(self, parsed: commands.ShowDefault, command: dict[str, Any]) -> None:
        name = await self.bot.db(default_rubric, self.bot.store, command["team_id"], command["channel_id"])
        rubric = self.bot.rubrics.find(name) if name else None
        if rubric is not None:
            text = (f"CSV files shared in <#{command['channel_id']}> are judged with *{escape(rubric.title)}* "
                    f"(`{rubric.name}`) unless their message names another rubric. `/judge default none` clears it.")
        else:
            text = (f"<#{command['channel_id']}> has no default rubric: a CSV shared here is judged with the rubric "
                    "its message names (such as `eth`), or I ask. `/judge default <rubric>` sets one.")
        await self.bot.tell(command.get("response_url"), text)

    async def _set_default(self, parsed: commands.SetDefault, command: dict[str, Any]) -> None:
        name = parsed.rubric.name if parsed.rubric else None
        await self.bot.db(set_default_rubric, self.bot.store, command["team_id"], command["channel_id"], name,
                          command["user_id"])
        who = f"<@{command['user_id']}>"
        text = (f"{who} set the default rubric of this channel to *{escape(parsed.rubric.title)}* (`{name}`): CSV "
                "files shared here are judged with it unless their message names another." if parsed.rubric else
                f"{who} cleared the default rubric of this channel.")
        await self.bot.reply(command.get("response_url"), {**notice(text), "response_type": "in_channel"})

    # -- the form -------------------------------------------------------------------------------------------

    async def on_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """The form was submitted: point at empty fields, else close it and judge."""
        values = form_values(view)
        missing = {name: "Please fill this in." for name in ("question", "reference", "answer") if not values[name]}
        try:
            rubric = self.bot.rubrics.get(values["rubric"])
        except RubricError as err:
            missing["rubric"] = str(err)[:150]
        if missing:
            await ack(response_action="errors", errors=missing)
            return
        await ack()
        context = form_context(view)
        user, team = body["user"]["id"], body["user"].get("team_id") or body["team"]["id"]
        origin = Origin(source=CARD_SOURCE, team_id=team, channel_id=context.channel_id, user_id=user)
        triple = Triple(question=values["question"], reference=values["reference"], answer=values["answer"])
        model = values["model"] or None

        async def remember_and_judge() -> None:
            try:  # remembering is a convenience: it never stands in the way of the judgment
                await self.bot.db(remember_model, self.bot.store, team, user, model)
            except Exception:
                log.warning("could not remember the model of %s", user, exc_info=True)
            await self.bot.show_judgment(rubric=rubric, triple=triple, origin=origin, model_name=model,
                                         response_url=context.response_url)

        self.bot.spawn(remember_and_judge(), "form judgment", response_url=context.response_url)

    # -- buttons on a card ----------------------------------------------------------------------------------

    async def on_vote(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Agree / Disagree: keep the person's vote (a new click replaces it) and show the tally on the card."""
        await ack()
        self.bot.spawn(self._vote(body, action), "vote", response_url=body.get("response_url"))

    async def _vote(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        judgment = await self._card_judgment(body, action)
        if judgment is None:
            return
        agree, where = action["action_id"] == AGREE, body.get("response_url")
        async with self.bot.one_at_a_time(judgment.id):  # type: ignore[arg-type]
            before = await self.bot.db(record_feedback, self.bot.store, judgment.id, body["user"]["id"], agree=agree)
            votes = await self.bot.db(feedback_tally, self.bot.store, judgment.id)
            card = result_card(judgment, self.bot.rubric_of(judgment), votes=votes)
            try:
                await self.bot.client.chat_update(channel=judgment.channel_id, ts=_message_ts(body, judgment),
                                                  **card.as_message())
            except Exception as err:
                log.warning("could not show the tally on judgment %s: %s", judgment.id, slack_error(err))
        verb = "agree" if agree else "disagree"
        if before is None:
            text = f"Thanks: you {verb} with the judge on #{judgment.id}."
        elif before == agree:
            text = f"You already {verb} with the judge on #{judgment.id}."
        else:
            text = f"Changed: you now {verb} with the judge on #{judgment.id}."
        await self.bot.tell(where, text)

    async def on_rejudge(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Re-judge: a fresh judgment of the same texts (the cache is skipped), as a new card in the thread."""
        await ack()
        self.bot.spawn(self._again(body, action, fresh=True), "re-judge", response_url=body.get("response_url"))

    async def on_retry(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Retry on an error card: judge the same texts again, in place of the error."""
        await ack()
        self.bot.spawn(self._again(body, action, fresh=False), "retry", response_url=body.get("response_url"))

    async def _again(self, body: dict[str, Any], action: dict[str, Any], *, fresh: bool) -> None:
        judgment = await self._card_judgment(body, action)
        if judgment is None:
            return
        where = body.get("response_url")
        try:
            rubric = self.bot.rubrics.get(judgment.rubric_name)
        except RubricError:
            await self.bot.tell(where, f"The rubric `{escape(judgment.rubric_name)}` is no longer loaded, so I "
                                       "cannot judge this again. `/judge rubrics` lists the ones I have.")
            return
        if judgment.id in self.bot.rejudging:
            await self.bot.tell(where, f"#{judgment.id} is being judged again already; its card follows shortly.")
            return
        self.bot.rejudging.add(judgment.id)  # type: ignore[arg-type]
        try:
            card_ts = _message_ts(body, judgment)
            if not fresh:  # a late second Retry must not replace the card the first one put here
                newest = await self.bot.db(newest_on_message, self.bot.store, judgment.channel_id, card_ts)
                if newest is not None and newest.id != judgment.id:
                    await self.bot.tell(where, f"This card was judged again already (#{newest.id}).")
                    return
            thread = (judgment.thread_ts or card_ts) if fresh else judgment.thread_ts  # a new card: in the thread
            origin = Origin(source=CARD_SOURCE, team_id=judgment.team_id, channel_id=judgment.channel_id,
                            thread_ts=thread, user_id=body["user"]["id"])
            triple = Triple(question=judgment.question, reference=judgment.reference, answer=judgment.answer)
            await self.bot.show_judgment(rubric=rubric, triple=triple, origin=origin, model_name=judgment.model_name,
                                         response_url=where, fresh=fresh, replace_ts=None if fresh else card_ts)
        finally:
            self.bot.rejudging.discard(judgment.id)  # type: ignore[arg-type]

    async def on_details(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Details: the judge's full reply in a modal, opened while the trigger is fresh."""
        await ack()
        try:
            judgment = await asyncio.wait_for(self._lookup(body, action), QUICK_READ)
        except TimeoutError:
            await self.bot.tell(body.get("response_url"), "The history is busy right now; please click *Details* "
                                                          "again.")
            return
        if judgment is None:
            await self.bot.tell(body.get("response_url"), NOT_HERE)
            return
        await self.bot.client.views_open(trigger_id=body["trigger_id"], view=reply_view(judgment))

    async def _card_judgment(self, body: dict[str, Any], action: dict[str, Any]) -> Judgment | None:
        """The judgment a button belongs to, if it was made where the button was clicked; else the person is told."""
        judgment = await self._lookup(body, action)
        if judgment is None:
            await self.bot.tell(body.get("response_url"), NOT_HERE)
        return judgment

    async def _lookup(self, body: dict[str, Any], action: dict[str, Any]) -> Judgment | None:
        """The judgment a button belongs to, only if it was made in the channel (and workspace) of the click."""
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        try:
            judgment = await self.bot.db(self.bot.store.get_judgment, int(action.get("value") or 0))
        except ValueError:
            judgment = None
        team = (body.get("team") or {}).get("id")
        if judgment is None or judgment.channel_id != channel or (judgment.team_id and team != judgment.team_id):
            log.warning("button %s for judgment %r refused in channel %s", action.get("action_id"),
                        action.get("value"), channel)
            return None
        return judgment

    # -- App Home -------------------------------------------------------------------------------------------

    async def on_home_opened(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """The App Home tab: this person's recent judgments, the rubrics, and how to use the bot."""
        if event.get("tab") != "home":
            return
        user, team = event["user"], body.get("team_id") or ""
        judgments = await self.bot.db(recent_by_user, self.bot.store, team, user, limit=HOME_JUDGMENTS)
        await self.bot.client.views_publish(user_id=user,
                                            view=home_view(self.bot.rubrics, judgments, self.bot.team_url))

    # -- errors ---------------------------------------------------------------------------------------------

    async def on_error(self, error: Exception, body: dict[str, Any]) -> None:
        """A listener failed: log it with where and for whom, and tell the person in a sentence."""
        event = body.get("event") or {}
        where = body.get("channel_id") or (body.get("channel") or {}).get("id") or event.get("channel")
        user = body.get("user_id") or (body.get("user") or {}).get("id") or event.get("user")
        kind = body.get("command") or body.get("type") or event.get("type")
        log.error("%s failed for user %s in %s", kind, user, where, exc_info=error)
        await self.bot.tell(body.get("response_url"), f":warning: {OUR_FAULT}")


def _message_ts(body: dict[str, Any], judgment: Judgment) -> str:
    return (body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts") or \
        judgment.message_ts or ""
