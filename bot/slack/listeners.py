"""The listeners: each acknowledges Slack at once, then does its work in a task of its own."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.history import channel_stats, recent_by_user, recent_in_channel
from bot.judge import Triple
from bot.models import Judgment, utcnow
from bot.rubrics import RubricError
from bot.runs import Origin
from bot.slack import commands
from bot.slack.cards import AGREE, reply_view, result_card
from bot.slack.commands import CommandError, parse_command
from bot.slack.judging import Judgebot, Respond
from bot.slack.views import (
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

log = logging.getLogger(__name__)

QUICK_READ = 1.5  # seconds a database read may take before a trigger_id (valid ~3 s) must be used


class Listeners:
    """Every listener of the app, as bound methods over the shared `Judgebot`."""

    def __init__(self, bot: Judgebot) -> None:
        self.bot = bot

    # -- /judge ---------------------------------------------------------------------------------------------

    async def on_command(self, ack: AsyncAck, command: dict[str, Any], respond: Respond,
                         client: AsyncWebClient) -> None:
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
            await self._open_form(parsed, command, respond, client)
        else:
            await ack()
            work = {commands.Inline: self._inline, commands.History: self._history, commands.Stats: self._stats}
            handler = work[type(parsed)]  # type: ignore[index]
            self.bot.spawn(handler(parsed, command, respond, client), f"/judge {type(parsed).__name__.lower()}")

    async def _open_form(self, parsed: commands.OpenForm, command: dict[str, Any], respond: Respond,
                         client: AsyncWebClient) -> None:
        try:  # the form shows the model this person named last, unless the database is slow right now
            model = await asyncio.wait_for(
                self.bot.db(self.bot.store.remembered_model, command["team_id"], command["user_id"]), QUICK_READ)
        except Exception:
            log.warning("could not read the remembered model in time", exc_info=True)
            model = None
        context = FormContext(channel_id=command["channel_id"], thread_ts=command.get("thread_ts"),
                              response_url=command.get("response_url"))
        view = form_view(self.bot.rubrics, parsed.rubric, model_name=model, context=context)
        try:
            await client.views_open(trigger_id=command["trigger_id"], view=view)
        except SlackApiError as err:
            log.warning("views.open failed: %s", err.response.get("error") if err.response else err)
            await self.bot.tell(respond, "I could not open the form (Slack said "
                                f"`{err.response.get('error') if err.response else 'no answer'}`). Please try again, "
                                f"or judge at once: `/judge {parsed.rubric.name} question || reference || answer`.")

    async def _inline(self, parsed: commands.Inline, command: dict[str, Any], respond: Respond,
                      client: AsyncWebClient) -> None:
        model = await self.bot.db(self.bot.store.remembered_model, command["team_id"], command["user_id"])
        origin = Origin(source="slack", team_id=command["team_id"], channel_id=command["channel_id"],
                        thread_ts=command.get("thread_ts"), user_id=command["user_id"])
        await self.bot.show_judgment(client, respond, rubric=parsed.rubric, triple=parsed.triple, origin=origin,
                                     model_name=model)

    async def _history(self, parsed: commands.History, command: dict[str, Any], respond: Respond,
                       _client: AsyncWebClient) -> None:
        rows = await self.bot.db(recent_in_channel, self.bot.store, command["channel_id"], limit=parsed.limit)
        await respond(response_type="ephemeral", **history_message(rows, command["channel_id"], self.bot.team_url))

    async def _stats(self, parsed: commands.Stats, command: dict[str, Any], respond: Respond,
                     _client: AsyncWebClient) -> None:
        since = utcnow() - timedelta(days=parsed.days) if parsed.days else None
        figures = await self.bot.db(channel_stats, self.bot.store, command["channel_id"], since=since,
                                    model=parsed.model)
        await respond(response_type="ephemeral",
                      **stats_message(figures, command["channel_id"], days=parsed.days, model=parsed.model))

    # -- the form -------------------------------------------------------------------------------------------

    async def on_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any],
                      client: AsyncWebClient) -> None:
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
        origin = Origin(source="slack", team_id=team, channel_id=context.channel_id, thread_ts=context.thread_ts,
                        user_id=user)
        respond = _responder(client, context)
        triple = Triple(question=values["question"], reference=values["reference"], answer=values["answer"])

        async def remember_and_judge() -> None:
            await self.bot.db(self.bot.store.remember_model, team, user, values["model"] or None)
            await self.bot.show_judgment(client, respond, rubric=rubric, triple=triple, origin=origin,
                                         model_name=values["model"] or None)

        self.bot.spawn(remember_and_judge(), "form judgment")

    # -- buttons on a card ----------------------------------------------------------------------------------

    async def on_vote(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                      client: AsyncWebClient) -> None:
        """Agree / Disagree: keep the person's vote (a new click replaces it) and show the tally on the card."""
        await ack()
        self.bot.spawn(self._vote(body, action, respond, client), "vote")

    async def _vote(self, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                    client: AsyncWebClient) -> None:
        judgment = await self._card_judgment(body, action, respond)
        if judgment is None:
            return
        agree = action["action_id"] == AGREE
        before = await self.bot.db(self.bot.store.record_feedback, judgment.id, body["user"]["id"], agree=agree)
        votes = await self.bot.db(self.bot.store.feedback_tally, judgment.id)
        card = result_card(judgment, self.bot.rubric_of(judgment), votes=votes)
        await client.chat_update(channel=judgment.channel_id, ts=_message_ts(body, judgment), **card.as_message())
        verb = "agree" if agree else "disagree"
        if before is None:
            text = f"Thanks: you {verb} with the judge on #{judgment.id}."
        elif before == agree:
            text = f"You already {verb} with the judge on #{judgment.id}."
        else:
            text = f"Changed: you now {verb} with the judge on #{judgment.id}."
        await self.bot.tell(respond, text)

    async def on_rejudge(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                         client: AsyncWebClient) -> None:
        """Re-judge: a fresh judgment of the same texts (the cache is skipped), as a new card in the thread."""
        await ack()
        self.bot.spawn(self._again(body, action, respond, client, fresh=True), "re-judge")

    async def on_retry(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                       client: AsyncWebClient) -> None:
        """Retry on an error card: judge the same texts again, in place of the error."""
        await ack()
        self.bot.spawn(self._again(body, action, respond, client, fresh=False), "retry")

    async def _again(self, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                     client: AsyncWebClient, *, fresh: bool) -> None:
        judgment = await self._card_judgment(body, action, respond)
        if judgment is None:
            return
        rubric = self.bot.rubric_of(judgment)
        if rubric is None:
            await self.bot.tell(respond, f"The rubric `{judgment.rubric_name}` is no longer loaded, so I cannot "
                                         "judge this again. `/judge rubrics` lists the ones I have.")
            return
        card_ts = _message_ts(body, judgment)
        thread = (judgment.thread_ts or card_ts) if fresh else judgment.thread_ts  # a new card goes in the thread
        origin = Origin(source="slack", team_id=judgment.team_id, channel_id=judgment.channel_id, thread_ts=thread,
                        user_id=body["user"]["id"])
        triple = Triple(question=judgment.question, reference=judgment.reference, answer=judgment.answer)
        await self.bot.show_judgment(client, respond, rubric=rubric, triple=triple, origin=origin,
                                     model_name=judgment.model_name, fresh=fresh,
                                     replace_ts=None if fresh else card_ts)

    async def on_details(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: Respond,
                         client: AsyncWebClient) -> None:
        """Details: the judge's full reply in a modal, opened while the trigger is fresh."""
        await ack()
        try:
            judgment = await asyncio.wait_for(self._card_judgment(body, action, respond), QUICK_READ)
        except TimeoutError:
            await self.bot.tell(respond, "The history is busy right now; please click *Details* again.")
            return
        if judgment is not None:
            await client.views_open(trigger_id=body["trigger_id"], view=reply_view(judgment))

    async def _card_judgment(self, body: dict[str, Any], action: dict[str, Any],
                             respond: Respond) -> Judgment | None:
        """The judgment a button belongs to, only if it was made in the channel the button was clicked in."""
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        try:
            judgment = await self.bot.db(self.bot.store.get_judgment, int(action.get("value") or 0))
        except ValueError:
            judgment = None
        team = (body.get("team") or {}).get("id")
        if judgment is None or judgment.channel_id != channel or (judgment.team_id and team != judgment.team_id):
            log.warning("button %s for judgment %r refused in channel %s", action.get("action_id"),
                        action.get("value"), channel)
            await self.bot.tell(respond, "I cannot find this judgment in this channel's history.")
            return None
        return judgment

    # -- App Home -------------------------------------------------------------------------------------------

    async def on_home_opened(self, event: dict[str, Any], body: dict[str, Any], client: AsyncWebClient) -> None:
        """The App Home tab: this person's recent judgments, the rubrics, and how to use the bot."""
        if event.get("tab") != "home":
            return
        user, team = event["user"], body.get("team_id") or ""
        judgments = await self.bot.db(recent_by_user, self.bot.store, team, user, limit=20)
        await client.views_publish(user_id=user, view=home_view(self.bot.rubrics, judgments, self.bot.team_url))

    # -- errors ---------------------------------------------------------------------------------------------

    async def on_error(self, error: Exception, body: dict[str, Any], respond: Respond | None = None) -> None:
        """A listener failed: log it with where and for whom, and tell the person in a sentence."""
        where = body.get("channel_id") or (body.get("channel") or {}).get("id") or (body.get("event") or {}).get(
            "channel")
        user = body.get("user_id") or (body.get("user") or {}).get("id") or (body.get("event") or {}).get("user")
        kind = body.get("command") or body.get("type") or (body.get("event") or {}).get("type")
        log.error("%s failed for user %s in %s", kind, user, where, exc_info=error)
        if body.get("response_url"):
            await self.bot.tell(respond, ":warning: Something went wrong on my side and it did not work. Please "
                                         "try again; if it keeps happening, tell the bot's admin.")


def _message_ts(body: dict[str, Any], judgment: Judgment) -> str:
    return (body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts") or \
        judgment.message_ts or ""


def _responder(client: AsyncWebClient, context: FormContext) -> Respond | None:
    """A way to reach the person who submitted a form: the response_url of the command that opened it."""
    if not context.response_url:
        return None
    webhook = AsyncWebhookClient(context.response_url, timeout=10, retry_handlers=client.retry_handlers)

    async def respond(**message: Any) -> None:
        await webhook.send_dict(message)

    return respond
