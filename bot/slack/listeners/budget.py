"""`/judge budget ...`: a channel's spend this month shown, its monthly budget and confirmation threshold set
(admins only, said in the channel)."""

from __future__ import annotations

from typing import Any

from bot.figures import money
from bot.records import checks_of
from bot.slack.admins import ADMINS_ONLY, admin_refusal
from bot.slack.commands.parsing import BudgetSet, BudgetShow
from bot.slack.context import Context
from bot.slack.messenger import post_problem
from bot.slack.views.blocks import notice
from bot.slack.views.budget import budget_message, tiers_text
from bot.store import cost_limits, month_start, set_cost_limits, spend, utcnow

NOT_ADMIN = (
    f"{ADMINS_ONLY} set this channel's budget. `/judge budget` shows you what it spent."
)


class BudgetCommands:
    """The `/judge budget` subcommands of one bot."""

    def __init__(self, ctx: Context, admins: frozenset[str], default_ask: float) -> None:
        self.ctx, self.admins, self.default_ask = ctx, admins, default_ask

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {BudgetShow: self.show, BudgetSet: self.set}

    async def show(self, parsed: BudgetShow, command: dict[str, Any]) -> None:
        """`/judge budget`: what the channel spent this month, per rubric and judge, against its budget."""
        team, channel = command["team_id"], command["channel_id"]
        since = month_start(utcnow())
        spent = await self.ctx.db(spend, channel_id=channel, since=since)
        checks = await self.ctx.db(spend, channel_id=checks_of(channel), since=since)
        limits = await self.ctx.db(cost_limits, team_id=team, channel_id=channel)
        await self.ctx.say.reply(command.get("response_url"), budget_message(
            channel, since.strftime("%B %Y"), spent, limits, self.default_ask, checks=checks.usd,
            tiers=tiers_text(self.ctx.bench.prices, self.ctx.bench.judge.model)))

    async def set(self, parsed: BudgetSet, command: dict[str, Any]) -> None:
        """`/judge budget USD|off` or `/judge budget ask USD|off`: set it (admins only), and say so in the channel."""
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        where = command.get("response_url")
        refusal = await admin_refusal(self.ctx.client, self.admins, user=user, team=team, not_admin=NOT_ADMIN)
        if refusal is not None:
            await self.ctx.say.tell(where, refusal)
            return
        before = await self.ctx.db(cost_limits, team_id=team, channel_id=channel)
        await self.ctx.db(set_cost_limits, team_id=team, channel_id=channel, user_id=user,
                          **{parsed.limit: parsed.amount})
        if parsed.limit == "monthly_budget":
            text = (f"<@{user}> set this channel's monthly budget to {money(parsed.amount)}: a shared file that would "
                    "go over it asks an admin first, and a run that reaches it pauses." if parsed.amount is not None
                    else f"<@{user}> turned off this channel's monthly budget.")
        else:
            ask = parsed.amount if parsed.amount is not None else self.default_ask
            text = f"<@{user}> set this channel to ask before judging a shared file estimated above {money(ask)}."
        sent = await self.ctx.say.post(channel, notice(f"{text} `/judge budget` shows this month's spend."),
                                       what="the budget set")
        if not sent.ok:  # said nowhere: put it back as it was
            await self.ctx.db(set_cost_limits, team_id=team, channel_id=channel, user_id=user,
                              **{parsed.limit: getattr(before, parsed.limit)})
            await self.ctx.say.tell(where, f"{post_problem(sent.refusal or '', channel)} The budget stays as it was.")
