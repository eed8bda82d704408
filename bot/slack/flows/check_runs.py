"""Rows a channel asked to have judged again (an alignment, a comparison of judges) judged as a run of their own,
under the channel's check key: out of its figures, in its monthly spend."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bot.csvfiles.reading import CsvRow
from bot.records import checks_of
from bot.rubric import Rubric
from bot.runs import Face, Origin, Request, start_run
from bot.slack.context import Context
from bot.store import Judgment, iter_judgments
from bot.trust.cases import TEXT_COLUMNS


async def judged_for_channel(ctx: Context, rubric: Rubric, rows: Sequence[CsvRow], *, model: str | None, team: str,
                             channel: str, user: str, what: str, concurrency: int) -> dict[int, Judgment]:
    """Judge `rows` with `rubric` by `model` (None: the bot's judge) once each; the judgments by row number."""
    panel = ctx.bench.panel(1, model)
    origin = Origin(source="check", team_id=team, channel_id=checks_of(channel), user_id=user)
    run = await asyncio.to_thread(start_run, ctx.store, rubric=rubric, rows=list(rows), columns=TEXT_COLUMNS,
                                  source_name=what[:200], origin=origin, **panel.run_fields())
    # Asked for by a person the channel's spent budget did not stop (the listener said so first): judged at once.
    await ctx.engine.judge(Request(rubric, panel, run, agreed=True, concurrency=concurrency, end=False), Face())
    judged = await ctx.db(lambda store: list(iter_judgments(store, run.id)))
    return {row.row_number: row for row in judged if row.row_number is not None}
