"""After a restart: the cards a stopped or crashed process left waiting are judged and shown where they belong."""

from __future__ import annotations

import asyncio
import logging

from bot.records import RESUMABLE
from bot.rubric import Rubric
from bot.runs import STALE_AFTER, RunBusy, abandon_triple, finish_triple
from bot.slack.judging import OUR_FAULT, Judgebot
from bot.store.models import Judgment, Run

log = logging.getLogger(__name__)


def recover(bot: Judgebot, runs: list[Run]) -> None:
    """Complete the cards of `runs`, which a stopped or crashed process left waiting, in the background."""
    for run in runs:
        bot.spawn(_recover(bot, run), f"completing the card of run {run.id}")


async def _recover(bot: Judgebot, run: Run) -> None:
    row = await bot.db(bot.store.first_judgment, run.id)
    if row is None or not row.channel_id:
        return
    try:
        rubric = bot.rubric_of(run)
        if rubric is None:
            judgment = await abandon_triple(bot.store, run, "the rubric changed before the judge answered; press "
                                                            "Retry to judge with the current one")
        else:
            judgment = await _finish_when_free(bot, run, rubric)
    except RunBusy:
        return
    except Exception:
        log.exception("completing the card of run %s failed", run.id)
        if row.message_ts:
            await bot.say_in_place(row.channel_id, row.message_ts, f":warning: {OUR_FAULT}", None)
        return
    if judgment is not None:  # a row without a message (the process died before posting it) gets a new card
        await bot.show_card(judgment, row.message_ts, response_url=None)


async def _finish_when_free(bot: Judgebot, run: Run, rubric: Rubric) -> Judgment | None:
    """Judge a left-over run; one still held by another host is retried once its heartbeat would be stale."""
    try:
        return await finish_triple(bot.store, run, rubric, bot.judge)
    except RunBusy:
        await asyncio.sleep(STALE_AFTER + 5)
    current = await bot.db(bot.store.get_run, run.id)
    if current is None or current.status not in RESUMABLE:
        return None  # finished meanwhile by the process that held it
    return await finish_triple(bot.store, run, rubric, bot.judge)
