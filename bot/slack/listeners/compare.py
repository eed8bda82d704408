"""`/judge compare A B [7d|30d|all]`: two models under test of this channel's history paired on the same questions,
posted as a card with a chart of the paired differences in its thread."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from bot.digest import differences_png
from bot.slack.commands.trust import CompareModels
from bot.slack.context import Context
from bot.slack.files import upload
from bot.slack.messenger import slack_error
from bot.slack.text import escape
from bot.slack.views.compare import RUBRICS_SHOWN, compare_card
from bot.store import graded_answers, utcnow
from bot.trust.model_comparison import compare, graded


class CompareCommands:
    """`/judge compare`, for one bot."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def handlers(self) -> dict[type, Any]:
        """Each parsed subcommand, and the method that answers it."""
        return {CompareModels: self.compare}

    async def compare(self, parsed: CompareModels, command: dict[str, Any]) -> None:
        """Pair the two models' graded answers of this channel and post the card, the chart in its thread."""
        channel, where = command["channel_id"], command.get("response_url")
        since = utcnow() - timedelta(days=parsed.days) if parsed.days else None
        sides = [graded(await self.ctx.db(graded_answers, channel_id=channel, model=model, since=since))
                 for model in (parsed.a, parsed.b)]
        paired = [found for found in compare(*sides) if found.pairs]
        if not paired:
            await self.ctx.say.tell(where, f"No question of <#{channel}> was answered by both `{escape(parsed.a)}` "
                                           f"and `{escape(parsed.b)}` in that time ({len(sides[0])} and "
                                           f"{len(sides[1])} graded answers): models are named as in the files' "
                                           "model column.")
            return
        card = compare_card(parsed.a, parsed.b, paired, parsed.days)
        sent = await self.ctx.say.post(channel, card, what="a comparison")
        if sent.ts is None:
            await self.ctx.say.tell(where, f"I could not post the comparison here (`{sent.refusal}`).")
            return
        titles = [f"{parsed.b} against {parsed.a}, rubric {found.rubric}: {len(found.pairs)} questions"
                  for found in paired[:RUBRICS_SHOWN]]
        try:
            charts = [(f"judgebot-compare-{n}.png", title,
                       await asyncio.to_thread(differences_png, title, [pair.difference for pair in found.pairs]))
                      for n, (title, found) in enumerate(zip(titles, paired, strict=False), 1)]
            await upload(self.ctx.client, channel=channel, thread_ts=sent.ts, comment="Paired differences",
                         files=charts)
        except Exception as err:  # the card is there: that is what counts
            await self.ctx.say.tell(where, f"The chart could not be posted (`{slack_error(err)}`).")
