"""The form of `/judge <rubric>` and the buttons on a card: Agree, Disagree, Correct it (and its form), Re-judge,
Retry and Details.

Every button acts only on a judgment made in the channel, and the workspace, where it was clicked.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.errors import RubricError
from bot.records import RowState, Triple, context_of, typed_passages
from bot.rubric import Rubric
from bot.runs import Origin
from bot.slack.context import Context
from bot.slack.files import upload
from bot.slack.flows.card import CARD_SOURCE, current_card, record_correction, show_judgment
from bot.slack.listeners.clicks import OTHER_WORKSPACE, QUICK_READ, from_team, made_here, named_teams
from bot.slack.messenger import failure_text
from bot.slack.text import clip, escape
from bot.slack.views.card import sampled, vote_of
from bot.slack.views.commands import CONTEXT_BLOCK, FORM_UNCHECKED, FormSeal, form_values
from bot.slack.views.correction import (
    NOTE_BLOCK,
    CorrectionContext,
    correction_values,
    correction_view,
    open_correction,
)
from bot.slack.views.details import details_file, details_text, details_view
from bot.slack.views.size_limits import ERROR_LIMIT
from bot.store import (
    Judgment,
    Rejudge,
    Run,
    claim_rejudge,
    first_judgment,
    get_judgment,
    give_up_rejudge,
    record_feedback,
    rejudge_saved,
    remember_model,
    samples_of,
    was_removed,
)

log = logging.getLogger(__name__)

NOT_HERE = "I cannot find this judgment in this channel's history."
BUSY = "The history is busy right now; please click *{button}* again."
CORRECTION_UNCHECKED = "I cannot check where this form was opened. Close it and press Correct it on the card again."
CORRECTION_ELSEWHERE = "This form was opened in another workspace, so I cannot save it here."
CORRECTION_NOT_HERE = "This judgment was not made in the channel this form was opened in, so it is not corrected."
CORRECTION_BUSY = "The history is busy right now; please press Save again."
NOT_CORRECTABLE = ("#{id} cannot be corrected: it has no score, or its rubric changed since (corrections are read "
                   "with the rubric it was judged with).")


def form_passages(rubric: Rubric, typed: str) -> list[str] | str | None:
    """The passages typed into the form's Retrieved context for `rubric` (None for a rubric that reads none), or what
    to say under the field (within Slack's limit there)."""
    name = clip(rubric.name, 40)[0]
    if not rubric.uses_context:
        return f"{name} does not read retrieved context: clear this, or choose a rubric that does." if typed else None
    if not typed:
        return f"{name} grades against the passages retrieved for the question: paste them here."
    passages = typed_passages(typed)
    if isinstance(passages, str):
        return 'Not a JSON list of strings: write ["first", "second"], or put a blank line between passages.'
    return passages


def _message_ts(body: dict[str, Any], judgment: Judgment) -> str:
    return (body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts") or \
        judgment.message_ts or ""


class CardListener:
    """The form and the card buttons, over the bot's context."""

    def __init__(self, ctx: Context, seal: FormSeal) -> None:
        self.ctx, self.seal = ctx, seal
        self.details_posted: set[int] = set()  # judgments whose cut Details went to the card's thread

    def _spawn(self, work: Any, what: str, where: str | None) -> None:
        self.ctx.tasks.spawn(work, what, on_failure=lambda err: self.ctx.say.tell(where, failure_text(err)))

    # -- the form -------------------------------------------------------------------------------------------

    async def on_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """The form was submitted: refuse it unless it acts where it was opened, point at empty fields, else judge."""
        context = self.seal.open(view.get("private_metadata") or "")
        if context is None or not from_team(body, context.team_id):
            why = "its private metadata is not signed by this bot" if context is None else \
                f"it was opened in team {context.team_id}"
            log.warning("form submission refused for user %s of team(s) %s: %s", (body.get("user") or {}).get("id"),
                        named_teams(body), why)
            await ack(response_action="errors", errors={"question": FORM_UNCHECKED if context is None else
                                                        OTHER_WORKSPACE})
            return
        values = form_values(view)
        missing = {name: "Please fill this in." for name in ("question", "reference", "answer") if not values[name]}
        passages: list[str] | str | None = None
        try:
            rubric = self.ctx.rubrics.get(values["rubric"])
        except RubricError as err:
            missing["rubric"] = str(err)[:ERROR_LIMIT]
        else:
            passages = form_passages(rubric, values[CONTEXT_BLOCK])
            if isinstance(passages, str):
                missing[CONTEXT_BLOCK] = passages
        if missing:
            await ack(response_action="errors", errors=missing)
            return
        await ack()
        user, team = body["user"]["id"], context.team_id
        origin = Origin(source=CARD_SOURCE, team_id=team, channel_id=context.channel_id, user_id=user)
        triple = Triple(question=values["question"], reference=values["reference"], answer=values["answer"],
                        context=passages if isinstance(passages, list) else None)
        model = values["model"] or None

        async def remember_and_judge() -> None:
            try:  # remembering is a convenience: it never stands in the way of the judgment
                await self.ctx.db(remember_model, team_id=team, user_id=user, model_name=model)
            except Exception:
                log.warning("could not remember the model of %s", user, exc_info=True)
            await show_judgment(self.ctx, rubric=rubric, triple=triple, origin=origin, model_name=model,
                                response_url=context.response_url)

        self._spawn(remember_and_judge(), "form judgment", context.response_url)

    # -- buttons on a card ----------------------------------------------------------------------------------

    async def on_vote(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Agree / Disagree: keep the person's vote (a new click replaces it) and show the tally on the card."""
        await ack()
        self._spawn(self._vote(body, action), "vote", body.get("response_url"))

    async def _vote(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        if (vote := vote_of(action)) is None:
            return  # not a value a card of ours carries
        agree, judgment_id = vote
        judgment = await self._card_judgment(body, {**action, "value": judgment_id})
        if judgment is None:
            return
        where = body.get("response_url")
        async with self.ctx.one_at_a_time(judgment.id):
            before = await self.ctx.db(record_feedback, judgment_id=judgment.id, user_id=body["user"]["id"], agree=agree)
            card = await current_card(self.ctx, judgment)
            await self.ctx.say.edit(judgment.channel_id or "", _message_ts(body, judgment), card.as_message(),
                                    what=f"the tally of judgment {judgment.id}")
        verb = "agree" if agree else "disagree"
        if before is None:
            text = f"Thanks: you {verb} with the judge on #{judgment.id}."
        elif before == agree:
            text = f"You already {verb} with the judge on #{judgment.id}."
        else:
            text = f"Changed: you now {verb} with the judge on #{judgment.id}."
        await self.ctx.say.tell(where, text)

    async def on_rejudge(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Re-judge: a fresh judgment of the same texts (the cache is skipped), as a new card in the thread."""
        await ack()
        self._spawn(self._again(body, action, fresh=True), "re-judge", body.get("response_url"))

    async def on_retry(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Retry on an error card: judge the same texts again, in place of the error."""
        await ack()
        self._spawn(self._again(body, action, fresh=False), "retry", body.get("response_url"))

    async def _again(self, body: dict[str, Any], action: dict[str, Any], *, fresh: bool) -> None:
        judgment = await self._card_judgment(body, action)
        if judgment is None:
            return
        where = body.get("response_url")
        if was_removed(judgment):
            await self.ctx.say.tell(where, f"#{judgment.id} is older than this workspace keeps texts for "
                                           "(RETENTION_DAYS): its texts were removed, so it cannot be judged again.")
            return
        try:
            rubric = self.ctx.rubrics.get(judgment.rubric_name)
        except RubricError:
            await self.ctx.say.tell(where, f"The rubric `{escape(judgment.rubric_name)}` is no longer loaded, so I "
                                           "cannot judge this again. `/judge rubrics` lists the ones I have.")
            return
        if (held := await self.ctx.db(claim_rejudge, judgment_id=judgment.id)) is not None:
            await self.ctx.say.tell(where, await self._judged_again(judgment, held))
            return
        card_ts = _message_ts(body, judgment)
        thread = (judgment.thread_ts or card_ts) if fresh else judgment.thread_ts  # a new card: in the thread
        origin = Origin(source=CARD_SOURCE, team_id=judgment.team_id, channel_id=judgment.channel_id,
                        thread_ts=thread, user_id=body["user"]["id"])
        triple = Triple(question=judgment.question, reference=judgment.reference, answer=judgment.answer,
                        context=context_of(judgment.context))  # the same passages: the same case

        async def saved(run: Run) -> None:  # kept with the claim: the card is judged again, here or after a restart
            await self.ctx.db(rejudge_saved, judgment_id=judgment.id, run_id=run.id)

        try:
            shown = await show_judgment(self.ctx, rubric=rubric, triple=triple, origin=origin,
                                        model_name=judgment.model_name, response_url=where, fresh=fresh,
                                        replace_ts=None if fresh else card_ts, samples=judgment.samples or 1,
                                        on_saved=saved)
        except asyncio.CancelledError:  # the bot is stopping: a saved run's card is completed by the next process
            raise
        except Exception:
            await self.ctx.db(give_up_rejudge, judgment_id=judgment.id)
            raise
        if shown is None:  # refused, or the card could not be posted: the next click may try again
            await self.ctx.db(give_up_rejudge, judgment_id=judgment.id)

    async def _judged_again(self, judgment: Judgment, held: Rejudge) -> str:
        """What a click on a card being judged again, or judged again already, is told."""
        again = await self.ctx.db(first_judgment, held.run_id) if held.run_id is not None else None
        if again is None or again.status == RowState.PENDING:
            return f"#{judgment.id} is being judged again already; its card follows shortly."
        where = "in this card's place" if again.message_ts == judgment.message_ts else "in the thread"
        return f"This card was judged again already (#{again.id}): its card is {where}, and its buttons judge it again."

    async def on_details(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Details: every sample behind the verdict and the judge's full reply in a modal, opened while the trigger
        is fresh."""
        await ack()
        judgment = await self._quick_lookup(body, action, "Details")
        if judgment is None:
            return
        try:
            samples = await asyncio.wait_for(self.ctx.db(samples_of, judgment.id), QUICK_READ) \
                if sampled(judgment) else []
        except TimeoutError:
            await self.ctx.say.tell(body.get("response_url"), BUSY.format(button="Details"))
            return
        view, cut = details_view(judgment, samples, view_url=self.ctx.view_url)
        await self.ctx.client.views_open(trigger_id=body["trigger_id"], view=view)
        if cut and judgment.id not in self.details_posted and judgment.channel_id and judgment.message_ts:
            self.details_posted.add(judgment.id)  # once per judgment and process: a second click finds it there
            await upload(self.ctx.client, channel=judgment.channel_id,
                         thread_ts=judgment.thread_ts or judgment.message_ts,
                         comment=f"What the Details of judgment #{judgment.id} could not hold: every sample and the "
                                 "judge's whole reply.",
                         files=[(details_file(judgment), f"Details of judgment #{judgment.id}",
                                 details_text(judgment, samples).encode("utf-8"))])

    async def _quick_lookup(self, body: dict[str, Any], action: dict[str, Any], button: str) -> Judgment | None:
        """The judgment of a button that opens a modal, read while its trigger is fresh; else the person is told."""
        try:
            judgment = await asyncio.wait_for(self._lookup(body, action), QUICK_READ)
        except TimeoutError:
            await self.ctx.say.tell(body.get("response_url"), BUSY.format(button=button))
            return None
        if judgment is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_HERE)
        return judgment

    # -- Correct it -------------------------------------------------------------------------------------------

    async def on_correct(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Correct it: a form holding the judge's values for the person to change, opened while the trigger is fresh.

        Only for a judgment made where the button was clicked: the form shows its values.
        """
        await ack()
        judgment = await self._quick_lookup(body, action, "Correct it")
        if judgment is None:
            return
        rubric = self.ctx.rubric_of(judgment)
        if rubric is None or judgment.status != RowState.SCORED:
            await self.ctx.say.tell(body.get("response_url"), NOT_CORRECTABLE.format(id=judgment.id))
            return
        # The card's channel and workspace, which the click was checked against, go sealed into the form.
        context = CorrectionContext(team_id=judgment.team_id or "", channel_id=judgment.channel_id or "",
                                    response_url=body.get("response_url"), judgment_id=judgment.id)
        view = correction_view(judgment, rubric, metadata=self.seal.seal(context))
        await self.ctx.client.views_open(trigger_id=body["trigger_id"], view=view)

    async def on_correction(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """The Correct it form was submitted: refuse it unless its judgment was made where it was opened, by a person
        of that workspace; point at values out of range; else save the correction and show it on the card."""
        context = open_correction(self.seal, view.get("private_metadata") or "")
        try:
            judgment, refusal = await asyncio.wait_for(self._correction_target(body, context), QUICK_READ)
        except TimeoutError:
            await ack(response_action="errors", errors={NOTE_BLOCK: CORRECTION_BUSY})
            return
        if judgment is None or context is None:
            log.warning("correction refused for user %s of team(s) %s: %s", (body.get("user") or {}).get("id"),
                        named_teams(body), refusal)
            await ack(response_action="errors", errors={NOTE_BLOCK: clip(refusal, ERROR_LIMIT)[0]})
            return
        rubric = self.ctx.rubric_of(judgment)
        if rubric is None or judgment.status != RowState.SCORED:
            await ack(response_action="errors", errors={NOTE_BLOCK: clip(NOT_CORRECTABLE.format(id=judgment.id),
                                                                         ERROR_LIMIT)[0]})
            return
        values, note, errors = correction_values(view, judgment, rubric)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        self._spawn(record_correction(self.ctx, judgment, rubric, user_id=body["user"]["id"], values=values, note=note,
                                      response_url=context.response_url), "correction", context.response_url)

    async def _correction_target(self, body: dict[str, Any],
                                 context: CorrectionContext | None) -> tuple[Judgment | None, str]:
        """The judgment a submitted form corrects, only if the form is ours, sent by a person of the workspace it was
        opened in, and the judgment was made in that channel; else None and why."""
        if context is None:
            return None, CORRECTION_UNCHECKED
        if not from_team(body, context.team_id):
            return None, CORRECTION_ELSEWHERE
        judgment = await self.ctx.db(get_judgment, context.judgment_id)
        if judgment is None or (judgment.team_id, judgment.channel_id) != (context.team_id, context.channel_id):
            return None, CORRECTION_NOT_HERE
        return judgment, ""

    async def _card_judgment(self, body: dict[str, Any], action: dict[str, Any]) -> Judgment | None:
        """The judgment a button belongs to, if it was made where the button was clicked; else the person is told."""
        judgment = await self._lookup(body, action)
        if judgment is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_HERE)
        return judgment

    async def _lookup(self, body: dict[str, Any], action: dict[str, Any]) -> Judgment | None:
        """The judgment a button belongs to, only if it was made in the channel (and workspace) of the click."""
        try:
            judgment = await self.ctx.db(get_judgment, int(action.get("value") or 0))
        except ValueError:
            judgment = None
        if judgment is None or not made_here(body, action, judgment.channel_id, judgment.team_id):
            return None
        return judgment
