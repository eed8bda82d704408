"""Rows a channel asked to have judged again (an alignment, a comparison of judges) judged as a run of their own,
under the channel's check key: out of its figures, in its monthly spend, held to its monthly budget by the budget
rule as every other run is."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bot.csvfiles.rows import CsvRow
from bot.errors import JudgebotError
from bot.figures import money
from bot.records import checks_of
from bot.rubric import Rubric
from bot.runs import Answer, Face, Origin, Question, Request, start_run
from bot.slack.context import Context
from bot.slack.flows.card import channel_limits
from bot.slack.views.budget import RAISE_BUDGET
from bot.store import Judgment, iter_judgments
from bot.trust.cases import TEXT_COLUMNS


class CheckStopped(JudgebotError):
    """A check's rows not all judged (the channel's monthly budget refused them, or the run paused): nothing is
    concluded from part of them."""


class _CheckFace(Face):
    """An admin asked for the check and nobody is asked again: rows the budget rule asks about are refused."""

    def __init__(self, judge: str) -> None:
        self.judge = judge

    async def agree(self, question: Question) -> Answer:
        if not question.asks:
            return Answer.YES
        weighed, monthly = question.weighed, question.weighed.limits.monthly or 0.0
        month = f"{money(weighed.spent)} of {money(monthly)} spent this month"
        raise CheckStopped(
            f"This channel's monthly budget is spent ({month}), so nothing more was sent to the judge. {RAISE_BUDGET}."
            if weighed.spent >= monthly else
            f"Judging {question.run.total_rows:,} cases with `{self.judge}` ({question.estimate.cost_text()}) would take "
            f"this channel over its monthly budget ({month}), so they were not sent to the judge. {RAISE_BUDGET}.")


async def judged_for_channel(ctx: Context, rubric: Rubric, rows: Sequence[CsvRow], *, model: str | None, team: str,
                             channel: str, user: str, what: str, concurrency: int) -> dict[int, Judgment]:
    """Judge `rows` with `rubric` by `model` (None: the bot's judge) once each; the judgments by row number.
    CheckStopped when the channel's monthly budget refuses them, or the judging pauses (at the budget, a quota)."""
    panel = ctx.bench.panel(1, model)
    origin = Origin(source="check", team_id=team, channel_id=checks_of(channel), user_id=user)
    run = await asyncio.to_thread(start_run, ctx.store, rubric=rubric, rows=list(rows), columns=TEXT_COLUMNS,
                                  source_name=what[:200], origin=origin, **panel.run_fields())
    # The channel's own limits (its checks' spend counts in its month): its budget weighs the estimate, and the
    # judging pauses where it runs out.
    limits = await channel_limits(ctx, Origin(source="check", team_id=team, channel_id=channel))
    ended = await ctx.engine.judge(Request(rubric, panel, run, limits=limits, new=True, concurrency=concurrency,
                                           end=False), _CheckFace(panel.name))
    if ended.paused:
        raise CheckStopped(f"The judging stopped before every case was judged: {ended.run.stop_reason or 'paused'}.")
    judged = await ctx.db(lambda store: list(iter_judgments(store, run.id)))
    return {row.row_number: row for row in judged if row.row_number is not None}
