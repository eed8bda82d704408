"""`/judge align <rubric>` (admins): the channel's labels turned into a candidate revision of the rubric in the
background, measured on held-out cases, and posted as a card whose buttons keep it for the channel, attach its file
or discard it."""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.rubric import Rubric
from bot.runs import Origin
from bot.slack.admins import ADMINS_ONLY, admin_refusal
from bot.slack.commands.trust import AlignRubric
from bot.slack.context import Context
from bot.slack.files import upload
from bot.slack.flows.card import budget_refusal
from bot.slack.flows.check_runs import judged_for_channel
from bot.slack.listeners.clicks import made_here
from bot.slack.messenger import failure_text
from bot.slack.text import escape
from bot.slack.views.align import align_card, decided
from bot.slack.views.blocks import notice
from bot.store import Judgment, decide_revision, judge_of_channel, propose_revision, revision_of, set_message
from bot.trust.align import DEFAULT_EXAMPLES, DEFAULT_FOLDS, MIN_CORRECTIONS, MIN_LABELS, Aligned, candidate_file
from bot.trust.align import cross_validate as aligned_by
from bot.trust.drift import CheckCase, case_count, cases_from_history

log = logging.getLogger(__name__)

NOT_ADMIN = f"{ADMINS_ONLY} align a rubric for this channel or keep what it proposes."
GONE = "This proposal is decided already, or it is not of this channel."


class AlignCommands:
    """`/judge align` and the buttons of its card, for one bot."""

    def __init__(self, ctx: Context, admins: frozenset[str], concurrency: int = 16) -> None:
        self.ctx, self.admins, self.concurrency = ctx, admins, concurrency

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {AlignRubric: self.start}

    async def _refusal(self, user: str, team: str) -> str | None:
        return await admin_refusal(self.ctx.client, self.admins, user=user, team=team, not_admin=NOT_ADMIN)

    async def start(self, parsed: AlignRubric, command: dict[str, Any]) -> None:
        """`/judge align <rubric>`: refused to non-admins, over a spent budget or on too few labels; else begun."""
        team, channel, user, where = command["team_id"], command["channel_id"], command["user_id"], \
            command.get("response_url")
        if (refusal := await self._refusal(user, team)) is not None:
            await self.ctx.say.tell(where, refusal)
            return
        origin = Origin(source="check", team_id=team, channel_id=channel, user_id=user)
        if (spent := await budget_refusal(self.ctx, origin)) is not None:
            await self.ctx.say.tell(where, spent)
            return
        base = await self.ctx.rubric_in(parsed.rubric, team, channel)  # what the channel judges with now
        cases = await self.ctx.db(cases_from_history, rubric=base, channel_id=channel)
        if (count := case_count(cases)) < MIN_LABELS:  # several people's labels of one case count once
            await self.ctx.say.tell(where, f"<#{channel}> has {count} labeled cases of `{escape(base.name)}`: "
                                    f"too few to align on (it takes {MIN_LABELS}, {MIN_CORRECTIONS} of them "
                                    "corrections of the judge). `/judge review` asks for more.")
            return
        head = await self.ctx.say.post(channel, notice(
            f"<@{user}> is aligning *{escape(base.title)}* with this channel's {count} labeled cases: each is "
            f"judged as the rubric is and once more by a candidate with examples from other cases' corrections. The "
            "result follows in this thread."), what="an alignment begun")
        if head.ts is None:
            return
        self.ctx.tasks.spawn(self._align(base, parsed.rubric, cases, team, channel, user, head.ts),
                             f"aligning {base.name} in {channel}",
                             on_failure=lambda err: self.ctx.say.tell(where, failure_text(err)))

    async def _align(self, base: Rubric, file_rubric: Rubric, cases: list[CheckCase], team: str, channel: str,
                     user: str, thread: str) -> None:
        own = await self.ctx.db(judge_of_channel, team_id=team, channel_id=channel)

        async def judged(rubric: Rubric, some: list[CheckCase], what: str, lead: str) -> dict[int, Judgment]:
            return await judged_for_channel(self.ctx, rubric, [case.row for case in some], model=own, team=team,
                                            channel=channel, user=user, what=f"align {rubric.name} in {channel}: {what}",
                                            concurrency=self.concurrency)

        found = await aligned_by(cases, base, folds=DEFAULT_FOLDS, examples=DEFAULT_EXAMPLES, judge=judged)
        if not isinstance(found, Aligned):
            await self.ctx.say.post(channel, notice(escape(found or "The alignment was stopped.")), thread_ts=thread,
                                    what="an alignment's end")
            return
        candidate = found.candidate  # the channel's revision keeps the rubric's name, at the next version
        revision = await self.ctx.db(
            propose_revision, team_id=team, channel_id=channel, rubric_name=base.name, version=candidate.version,
            content_hash=candidate.content_hash, based_on=file_rubric.content_hash,
            content=candidate_file(found, base, date.today().isoformat()), user_id=user,
            figures={"n": found.report.n, "corrections": found.report.corrections,
                     "before": found.report.before.agreement, "after": found.report.after.agreement,
                     "fixed": len(found.report.fixed), "broken": len(found.report.broken), "p": found.report.p})
        self.ctx.know_revision(revision)
        card = await self.ctx.say.post(channel, align_card(revision.id, found, base.title, base.version),
                                       thread_ts=thread, what="an alignment's card")
        if card.ts is not None:
            await self.ctx.db(set_message, revision_id=revision.id, message_ts=card.ts)

    # -- the card's buttons -------------------------------------------------------------------------------------

    async def on_use(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Use in this channel (admins): the revision is in force here from now on."""
        await ack()
        await self._decide(body, action, accept=True)

    async def on_discard(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Discard (admins): the proposal is set aside, kept in the history as discarded."""
        await ack()
        await self._decide(body, action, accept=False)

    async def _decide(self, body: dict[str, Any], action: dict[str, Any], *, accept: bool) -> None:
        where, user = body.get("response_url"), body["user"]["id"]
        revision = await self.ctx.db(revision_of, int(action.get("value") or 0))
        if revision is None or not made_here(body, action, revision.channel_id, revision.team_id):
            await self.ctx.say.tell(where, GONE)
            return
        if (refusal := await self._refusal(user, revision.team_id)) is not None:
            await self.ctx.say.tell(where, refusal)
            return
        done = await self.ctx.db(decide_revision, revision_id=revision.id, team_id=revision.team_id,
                                 channel_id=revision.channel_id, accept=accept, user_id=user)
        if done is None:
            await self.ctx.say.tell(where, GONE)
            return
        line = (f"<@{user}> made {escape(done.rubric_name)} {escape(done.version)} this channel's rubric: cards and "
                "files judged here use it from now on." if accept else f"<@{user}> discarded this proposal.")
        message = body.get("message") or {}
        if done.message_ts:
            await self.ctx.say.edit(done.channel_id, done.message_ts,
                                    {"blocks": decided(message.get("blocks") or [], line),
                                     "text": message.get("text") or line}, what="an alignment's card")
        if accept:
            await self.ctx.say.post(done.channel_id, notice(line), what="a rubric revision in force")

    async def on_download(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Download: the candidate's rubric file, attached in the card's thread."""
        await ack()
        revision = await self.ctx.db(revision_of, int(action.get("value") or 0))
        if revision is None or not made_here(body, action, revision.channel_id, revision.team_id):
            await self.ctx.say.tell(body.get("response_url"), GONE)
            return
        thread = str((body.get("message") or {}).get("thread_ts") or revision.message_ts or "")
        name = f"{revision.rubric_name}-{revision.version}.yaml"
        await upload(self.ctx.client, channel=revision.channel_id, thread_ts=thread,
                     comment=f"The rubric file of revision #{revision.id}: put it in RUBRICS_DIR under another name "
                             "to judge with it anywhere.",
                     files=[(name, name, revision.content.encode("utf-8"))])
