"""`/judge review` and `/judge reviewers`: a channel's review queue, one case at a time to whoever asks, its settings
(admins only), and the buttons and form of a case.

A case is shown only in its own channel (an ephemeral message to the reviewer), acted on only by the person it is
offered to, from the channel and workspace it belongs to.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.slack.admins import ADMINS_ONLY, admin_refusal
from bot.slack.commands.trust import ReviewBlind, ReviewersSet, ReviewersShow, ReviewNext, ReviewNudge
from bot.slack.context import Context
from bot.slack.flows.card import save_correction
from bot.slack.listeners.clicks import OTHER_WORKSPACE, QUICK_READ, clicked_in, from_team, made_here, named_teams
from bot.slack.messenger import failure_text, slack_error
from bot.slack.text import clip, escape
from bot.slack.views.blocks import notice
from bot.slack.views.commands import FormSeal
from bot.slack.views.correction import NOTE_BLOCK, correction_values, correction_view
from bot.slack.views.review import (
    PICKS,
    REVIEW_FORM,
    REVIEW_PICK,
    ReviewContext,
    case_card,
    judge_said_of_pair,
    pair_case_card,
    queue_empty,
    reviewers_text,
    saved_text,
)
from bot.slack.views.size_limits import ERROR_LIMIT
from bot.store import (
    OPEN,
    Judgment,
    ReviewCase,
    ReviewSetup,
    get_judgment,
    orders_of,
    queue_state,
    record_feedback,
    review_case,
    review_setup,
    set_blind,
    set_nudge,
    set_reviewers,
    skip_case,
    utcnow,
    waiting_for,
)
from bot.trust.review_queue import next_case

log = logging.getLogger(__name__)

NOT_ADMIN = f"{ADMINS_ONLY} change who reviews this channel's cases and how. `/judge reviewers` shows the settings."
NOT_YOURS = "This case is no longer offered to you (it was labeled, or it returned to the queue). `/judge review` " \
            "gives you your next one."
FORM_NOT_HERE = "This form no longer matches its case. Close it and press Label it on the case again."
BLIND = ("Blind review is on in <#{channel}>, so the judge's verdict cannot be agreed with unseen: press *Label it* "
         "and give your own label; the judge's verdict is shown once it is saved.")


class ReviewCommands:
    """The review queue of one bot: the subcommands, and the buttons and form of a case."""

    def __init__(self, ctx: Context, seal: FormSeal, admins: frozenset[str], timezone: str) -> None:
        self.ctx, self.seal, self.admins, self.timezone = ctx, seal, admins, timezone

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {ReviewNext: self.next, ReviewersShow: self.show,
                ReviewersSet: self.set_reviewers, ReviewBlind: self.set_blind,
                ReviewNudge: self.set_nudge}

    # -- the queue ------------------------------------------------------------------------------------------------

    async def offer(self, team: str, channel: str, user: str, *, done: str | None = None) -> dict[str, Any]:
        """The message that shows a person their next case of a channel (or that none waits), after `done`."""
        offered = await self.ctx.db(next_case, team_id=team, channel_id=channel, user_id=user,
                                    rubric_of=self.ctx.rubric_of)
        if offered is not None:
            case, judgment = offered.case, offered.judgment
            waiting = await self.ctx.db(waiting_for, team_id=team, channel_id=channel, user_id=user)
            if judgment.answer_b is not None:  # a pair: which answer is better?
                orders = await self.ctx.db(orders_of, judgment)
                return pair_case_card(case.id, case.reason, judgment, orders, blind=offered.blind,
                                      waiting=max(waiting - 1, 0), done=done)
            return case_card(case.id, case.reason, judgment, blind=offered.blind, waiting=max(waiting - 1, 0),
                             done=done)
        state = await self.ctx.db(queue_state, team_id=team, channel_id=channel, since=utcnow() - timedelta(days=7))
        return queue_empty(channel, done, state)

    async def next(self, parsed: ReviewNext, command: dict[str, Any]) -> None:
        """`/judge review`: the next case of this channel for the caller."""
        found = await self.offer(command["team_id"], command["channel_id"], command["user_id"])
        await self.ctx.say.reply(command.get("response_url"), {**found, "replace_original": False})

    async def show(self, parsed: ReviewersShow, command: dict[str, Any]) -> None:
        """`/judge reviewers`: who is asked, blind review, the nudge and the queue."""
        team, channel = command["team_id"], command["channel_id"]
        setup = await self.ctx.db(review_setup, team_id=team, channel_id=channel)
        state = await self.ctx.db(queue_state, team_id=team, channel_id=channel, since=utcnow() - timedelta(days=7))
        await self.ctx.say.tell(command.get("response_url"), reviewers_text(setup, state, channel))

    # -- settings (admins) ------------------------------------------------------------------------------------------

    async def _refused(self, command: dict[str, Any]) -> bool:
        refusal = await admin_refusal(self.ctx.client, self.admins, user=command["user_id"], team=command["team_id"],
                                      not_admin=NOT_ADMIN)
        if refusal is not None:
            await self.ctx.say.tell(command.get("response_url"), refusal)
        return refusal is not None

    async def _announce(self, command: dict[str, Any], text: str) -> None:
        await self.ctx.say.reply(command.get("response_url"), {**notice(text), "response_type": "in_channel"})

    async def set_reviewers(self, parsed: ReviewersSet, command: dict[str, Any]) -> None:
        """`/judge reviewers @a @b` (admins): who the queue asks; handles typed as text are looked up."""
        if await self._refused(command):
            return
        found, unknown = await self._look_up(parsed.handles)
        if unknown:
            await self.ctx.say.tell(command.get("response_url"), "I found no member or user group called "
                                    f"{', '.join(f'`@{escape(name)}`' for name in unknown)}: pick them from Slack's "
                                    "list as you type @. The reviewers stay as they were.")
            return
        reviewers = list(dict.fromkeys([*parsed.reviewers, *found]))
        await self.ctx.db(set_reviewers, team_id=command["team_id"], channel_id=command["channel_id"],
                          reviewers=reviewers, user_id=command["user_id"])
        who = ", ".join(f"<!subteam^{ident}>" if ident.startswith("S") else f"<@{ident}>" for ident in reviewers)
        await self._announce(command, f"<@{command['user_id']}> set the reviewers of this channel: {who}. They are "
                                      "asked to label the cases of its review queue (`/judge review`)." if reviewers
                             else f"<@{command['user_id']}> cleared the reviewers of this channel.")

    async def set_blind(self, parsed: ReviewBlind, command: dict[str, Any]) -> None:
        """`/judge review blind on|off` (admins)."""
        if await self._refused(command):
            return
        await self.ctx.db(set_blind, team_id=command["team_id"], channel_id=command["channel_id"], blind=parsed.blind,
                          user_id=command["user_id"])
        said = ("on: reviewers see the judge's verdict only after saving their own label" if parsed.blind else
                "off: reviewers see the judge's verdict beside the case")
        await self._announce(command, f"<@{command['user_id']}> turned blind review {said}.")

    async def set_nudge(self, parsed: ReviewNudge, command: dict[str, Any]) -> None:
        """`/judge review nudge HH:MM [timezone]|off` (admins)."""
        if await self._refused(command):
            return
        zone = (parsed.timezone or self.timezone) if parsed.hour is not None else None
        await self.ctx.db(set_nudge, team_id=command["team_id"], channel_id=command["channel_id"], hour=parsed.hour,
                          minute=parsed.minute, timezone=zone, user_id=command["user_id"])
        if parsed.hour is None:
            await self._announce(command, f"<@{command['user_id']}> turned off the reviewers' nudge of this channel.")
            return
        await self._announce(command, f"<@{command['user_id']}> set the reviewers' nudge: on weekdays at "
                                      f"{parsed.hour:02d}:{parsed.minute or 0:02d} {escape(zone or '')}, each reviewer "
                                      "with cases waiting here gets one direct message.")

    async def _look_up(self, handles: tuple[str, ...]) -> tuple[list[str], list[str]]:
        """The ids of members and user groups typed as @handles, and the handles not found."""
        if not handles:
            return [], []
        names: dict[str, str] = {}
        try:
            async for page in await self.ctx.client.users_list(limit=200):
                for member in page.get("members") or []:
                    if member.get("deleted") or member.get("is_bot"):
                        continue
                    profile = member.get("profile") or {}
                    for name in (member.get("name"), profile.get("display_name"), profile.get("real_name")):
                        if name:
                            names.setdefault(str(name).lower(), member["id"])
            groups = (await self.ctx.client.usergroups_list()).get("usergroups") or []
            for group in groups:
                names.setdefault(str(group.get("handle") or "").lower(), group["id"])
        except Exception as err:  # a missing scope: whatever was found is used, the rest is said
            log.warning("could not look reviewers up: %s", slack_error(err))
        found = [names[handle] for handle in handles if handle in names]
        return found, [handle for handle in handles if handle not in names]

    # -- a case's buttons and form ---------------------------------------------------------------------------------

    async def _held_case(self, body: dict[str, Any], action: dict[str, Any]) -> tuple[ReviewCase, Judgment] | None:
        """The case a button acts on: of the channel and workspace where it was clicked, open, and offered to the
        person who clicked; else they are told why not."""
        try:
            case = await self.ctx.db(review_case, int(action.get("value") or 0))
        except ValueError:
            case = None
        if case is None or not made_here(body, action, case.channel_id, case.team_id):
            await self.ctx.say.tell(body.get("response_url"), "I cannot find this case in this channel's queue.")
            return None
        judgment = await self.ctx.db(get_judgment, case.judgment_id)
        if judgment is None or case.state != OPEN or case.offered_to != body["user"]["id"]:
            await self.ctx.say.tell(body.get("response_url"), NOT_YOURS)
            return None
        return case, judgment

    def _spawn(self, work: Any, what: str, where: str | None) -> None:
        self.ctx.tasks.spawn(work, what, on_failure=lambda err: self.ctx.say.tell(where, failure_text(err)))

    async def on_agree(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """The judge is right: an Agree vote on the case's verdict, then the next case."""
        await ack()
        self._spawn(self._agree(body, action), "review agree", body.get("response_url"))

    async def _agree(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        held = await self._held_case(body, action)
        if held is None:
            return
        case, judgment = held
        # A card shown before blind review was turned on, or a forged click, still carries the button: blind review
        # asks for a person's own label, never a vote on a verdict they may have seen.
        if (setup := await self._setup_of(held)) is None or setup.blind:
            await self.ctx.say.tell(body.get("response_url"), BLIND.format(channel=case.channel_id))
            return
        user = body["user"]["id"]
        await self.ctx.db(record_feedback, judgment_id=judgment.id, user_id=user, agree=True)
        done = saved_text(judgment, passed=judgment.passed, agreed=True)
        await self.ctx.say.reply(body.get("response_url"),
                                 await self.offer(case.team_id or "", case.channel_id or "", user, done=done))

    async def on_pick(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A pair's winner picked (A, B or tie): saved as the person's label of the pair, then the next case."""
        await ack()
        self._spawn(self._pick(body, action), "review pick", body.get("response_url"))

    async def _pick(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        winner = str(action.get("action_id") or "").removeprefix(REVIEW_PICK)
        held = await self._held_case(body, action)
        if held is None:
            return
        case, judgment = held
        rubric = self.ctx.rubric_of(judgment)
        if rubric is None or judgment.answer_b is None or winner not in PICKS:
            await self.ctx.say.tell(body.get("response_url"), NOT_YOURS)
            return
        user = body["user"]["id"]
        await save_correction(self.ctx, judgment, rubric, user_id=user, values={"winner": winner}, note=None)
        orders = await self.ctx.db(orders_of, judgment)
        said = "a tie" if winner == "tie" else f"{winner} is better"
        done = (f":white_check_mark: Saved: you said {said} (#{judgment.id}). The judge said "
                f"{judge_said_of_pair(orders)}.")
        await self.ctx.say.reply(body.get("response_url"),
                                 await self.offer(case.team_id or "", case.channel_id or "", user, done=done))

    async def on_skip(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Skip: the case returns to the queue for others, and the next one is shown."""
        await ack()
        self._spawn(self._skip(body, action), "review skip", body.get("response_url"))

    async def _skip(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        held = await self._held_case(body, action)
        if held is None:
            return
        case, _ = held
        user = body["user"]["id"]
        await self.ctx.db(skip_case, case_id=case.id, user_id=user)
        await self.ctx.say.reply(body.get("response_url"),
                                 await self.offer(case.team_id or "", case.channel_id or "", user,
                                                  done="Skipped: the case goes to someone else."))

    async def on_label(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Label it: the label form of the case (empty in blind review), opened while the trigger is fresh."""
        await ack()
        try:
            held = await asyncio.wait_for(self._held_case(body, action), QUICK_READ)
            setup = await asyncio.wait_for(self._setup_of(held), QUICK_READ)
        except TimeoutError:
            await self.ctx.say.tell(body.get("response_url"), "The history is busy right now; please press Label it "
                                                              "again.")
            return
        if held is None or setup is None:
            return
        case, judgment = held
        rubric = self.ctx.rubric_of(judgment)
        if rubric is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_YOURS)
            return
        context = ReviewContext(team_id=case.team_id or "", channel_id=case.channel_id or "",
                                response_url=body.get("response_url"), judgment_id=judgment.id, case_id=case.id)
        view = correction_view(judgment, rubric, metadata=self.seal.seal(context), blind=setup.blind,
                               callback_id=REVIEW_FORM)
        await self.ctx.client.views_open(trigger_id=body["trigger_id"], view=view)

    async def _setup_of(self, held: tuple[ReviewCase, Judgment] | None) -> ReviewSetup | None:
        if held is None:
            return None
        return await self.ctx.db(review_setup, team_id=held[0].team_id or "", channel_id=held[0].channel_id or "")

    async def on_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """A reviewer's label form was submitted: saved if the form is ours, of this workspace, and its case is still
        the person's; then what the judge said and the next case."""
        context = _review_context(self.seal, view.get("private_metadata") or "")
        if context is None or not from_team(body, context.team_id):
            log.warning("review form refused for user %s of team(s) %s", (body.get("user") or {}).get("id"),
                        named_teams(body))
            await ack(response_action="errors", errors={NOTE_BLOCK: OTHER_WORKSPACE if context else FORM_NOT_HERE})
            return
        user = body["user"]["id"]
        try:
            case, judgment, setup = await asyncio.wait_for(self._form_target(context, user), QUICK_READ)
        except TimeoutError:
            await ack(response_action="errors", errors={NOTE_BLOCK: "The history is busy right now; please press "
                                                                    "Save again."})
            return
        rubric = self.ctx.rubric_of(judgment) if judgment is not None else None
        if case is None or judgment is None or setup is None or rubric is None:
            await ack(response_action="errors", errors={NOTE_BLOCK: clip(NOT_YOURS, ERROR_LIMIT)[0]})
            return
        values, note, errors = correction_values(view, judgment, rubric, blind=setup.blind)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()

        async def save_and_go_on() -> None:
            label, _, _ = await save_correction(self.ctx, judgment, rubric, user_id=user, values=values, note=note)
            done = saved_text(judgment, passed=label.passed, agreed=False)
            await self.ctx.say.reply(context.response_url, await self.offer(context.team_id, context.channel_id,
                                                                            user, done=done))

        self._spawn(save_and_go_on(), "review label", context.response_url)

    async def _form_target(self, context: ReviewContext, user: str
                           ) -> tuple[ReviewCase | None, Judgment | None, ReviewSetup | None]:
        case = await self.ctx.db(review_case, context.case_id)
        if (case is None or (case.team_id, case.channel_id) != (context.team_id, context.channel_id)
                or case.judgment_id != context.judgment_id or case.state != OPEN or case.offered_to != user):
            return None, None, None
        judgment = await self.ctx.db(get_judgment, case.judgment_id)
        return case, judgment, await self.ctx.db(review_setup, team_id=context.team_id, channel_id=context.channel_id)

    async def on_start(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Start reviewing (the nudge's button): the first case, shown to the person in its own channel."""
        await ack()
        where = body.get("response_url")
        if not from_team(body, self.ctx.team_id):
            await self.ctx.say.tell(where, OTHER_WORKSPACE)
            return
        channel, user = str(action.get("value") or ""), body["user"]["id"]
        team = self.ctx.team_id or ""
        shown = await self.offer(team, channel, user)
        shown.pop("replace_original", None)
        try:
            await self.ctx.client.chat_postEphemeral(channel=channel, user=user, **shown)
        except Exception as err:
            await self.ctx.say.tell(where, f"I could not show you the case in <#{escape(channel)}> "
                                           f"(`{slack_error(err)}`): type `/judge review` there.")
            return
        log.info("review started from a nudge by %s in %s (clicked in %s)", user, channel, clicked_in(body))
        await self.ctx.say.tell(where, f"Your next case is in <#{escape(channel)}>, shown to you only.")


def _review_context(seal: FormSeal, metadata: str) -> ReviewContext | None:
    """The context a reviewer's form was opened in, or None unless this bot sealed it exactly so."""
    if seal.open(metadata) is None:
        return None
    try:
        return ReviewContext.model_validate_json(metadata.partition(".")[2])
    except ValueError:
        return None

