"""`/judge judges compare <model> [rubric]` (admins): a candidate judge and the channel's judge each judge the
channel's labeled cases and a sample of its recent judgments in the background; the card's Use this judge in this
channel makes the candidate the channel's judge, recorded with the figures."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.csvfiles.rows import CsvRow
from bot.rubric import Rubric
from bot.runs import Origin
from bot.slack.admins import admin_refusal
from bot.slack.commands.trust import CompareJudges
from bot.slack.context import Context
from bot.slack.flows.card import budget_refusal
from bot.slack.flows.check_runs import judged_for_channel
from bot.slack.listeners.clicks import clicked_in, from_team
from bot.slack.listeners.judging_settings import NOT_ADMIN, JudgeCommands
from bot.slack.messenger import failure_text
from bot.slack.text import clip, escape
from bot.slack.views.blocks import notice
from bot.slack.views.judges_compare import judges_card
from bot.store import Judgment, default_rubric, judge_of_channel, recent_sample
from bot.trust.drift import cases_from_history
from bot.trust.judge_comparison import history_side, labeled_side

log = logging.getLogger(__name__)

HISTORY = 200  # recent judgments both judges judge again
NOTE_ROOM = 1000  # characters of the note kept with the channel's judge


class JudgesCompare:
    """`/judge judges compare` and its card's buttons, for one bot."""

    def __init__(self, ctx: Context, admins: frozenset[str], judges: JudgeCommands, concurrency: int = 16) -> None:
        self.ctx, self.admins, self.judges, self.concurrency = ctx, admins, judges, concurrency

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {CompareJudges: self.start}

    async def start(self, parsed: CompareJudges, command: dict[str, Any]) -> None:
        """Refused to non-admins, over a spent budget, or with nothing to compare on; else begun in the background."""
        team, channel, user, where = command["team_id"], command["channel_id"], command["user_id"], \
            command.get("response_url")
        refusal = await admin_refusal(self.ctx.client, self.admins, user=user, team=team, not_admin=NOT_ADMIN)
        if refusal is not None:
            await self.ctx.say.tell(where, refusal)
            return
        if (spent := await budget_refusal(self.ctx, Origin(source="check", team_id=team, channel_id=channel))):
            await self.ctx.say.tell(where, spent)
            return
        named = await self.ctx.db(default_rubric, team_id=team, channel_id=channel)
        rubric = parsed.rubric or (self.ctx.rubrics.find(named) if named else None)
        if rubric is None:
            await self.ctx.say.tell(where, "Name the rubric to compare the judges on, such as `/judge judges compare "
                                           f"{escape(parsed.model)} eth` (this channel has no default rubric).")
            return
        rubric = await self.ctx.rubric_in(rubric, team, channel)  # the channel's revision, as its cards judge with
        old = await self.ctx.db(judge_of_channel, team_id=team, channel_id=channel) or self.ctx.judge.model
        if old == parsed.model:
            await self.ctx.say.tell(where, f"`{escape(old)}` judges this channel already.")
            return
        cases = [replace(case, row=replace(case.row, line=number)) for number, case in
                 enumerate(await self.ctx.db(cases_from_history, rubric=rubric, channel_id=channel), start=1)]
        recent = await self.ctx.db(recent_sample, rubric_name=rubric.name, channel_id=channel, limit=HISTORY)
        sample = [CsvRow(line=len(cases) + index, question=judgment.question, reference=judgment.reference,
                         answer=judgment.answer, model=judgment.model_name, cells={})
                  for index, judgment in enumerate(recent, start=1)]
        if not cases and not sample:
            await self.ctx.say.tell(where, f"<#{channel}> has no labeled case and no judgment of `{escape(rubric.name)}` "
                                           "to compare the judges on.")
            return
        head = await self.ctx.say.post(channel, notice(
            f"<@{user}> is comparing `{escape(parsed.model)}` with this channel's judge `{escape(old)}` on "
            f"{len(cases)} labeled cases and {len(sample)} recent judgments of `{escape(rubric.name)}`. The result "
            "follows in this thread."), what="a comparison of judges begun")
        if head.ts is None:
            return
        self.ctx.tasks.spawn(self._compare(rubric, cases, sample, old, parsed.model, team, channel, user, head.ts),
                             f"comparing judges in {channel}",
                             on_failure=lambda err: self.ctx.say.tell(where, failure_text(err)))

    async def _judged(self, rubric: Rubric, rows: list[CsvRow], model: str, team: str, channel: str,
                      user: str) -> dict[int, Judgment]:
        return await judged_for_channel(self.ctx, rubric, rows, model=model, team=team, channel=channel, user=user,
                                        what=f"judges compare: {model}", concurrency=self.concurrency)

    async def _compare(self, rubric: Rubric, cases: list[Any], sample: list[CsvRow], old: str, new: str, team: str,
                       channel: str, user: str, thread: str) -> None:
        rows = [case.row for case in cases] + sample
        before = await self._judged(rubric, rows, old, team, channel, user)
        after = await self._judged(rubric, rows, new, team, channel, user)
        labeled = labeled_side(cases, before, after, rubric) if cases else None
        card = judges_card(old, new, rubric.name, labeled, history_side(sample, before, after), channel)
        await self.ctx.say.post(channel, card, thread_ts=thread, what="a comparison of judges")

    # -- the card's buttons -------------------------------------------------------------------------------------

    async def on_use(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Use this judge in this channel (admins): the candidate becomes the channel's judge."""
        await ack()
        await self._decide(body, action, use=True)

    async def on_keep(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Keep the current judge: said to the person; nothing changes."""
        await ack()
        await self._decide(body, action, use=False)

    async def _decide(self, body: dict[str, Any], action: dict[str, Any], *, use: bool) -> None:
        where = body.get("response_url")
        try:
            choice = json.loads(action.get("value") or "{}")
        except ValueError:
            choice = {}
        channel, model = str(choice.get("channel") or ""), str(choice.get("model") or "")
        if not model or not channel or clicked_in(body) != channel or not from_team(body, self.ctx.team_id):
            log.warning("judge choice refused in channel %s", clicked_in(body))
            await self.ctx.say.tell(where, "This comparison is not of this channel, so nothing is changed here.")
            return
        command = {"team_id": self.ctx.team_id, "channel_id": channel, "user_id": body["user"]["id"],
                   "response_url": where}
        if use:
            rubric, figures = str(choice.get("rubric") or "?"), str(choice.get("figures") or "no figures")
            await self.judges.set(command, model, note=clip(f"chosen after /judge judges compare on {rubric}: "
                                                            f"{figures}", NOTE_ROOM)[0])
        else:
            await self.ctx.say.tell(where, f"The judge of <#{channel}> stays as it is.")
