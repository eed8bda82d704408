"""Files a stopped or crashed process left half way: taken up at the start, and watched for while the bot runs."""

from __future__ import annotations

import asyncio
import logging

from bot.errors import RunBusy
from bot.records import RESUMABLE, RunState, ShareState
from bot.runs import STALE_AFTER
from bot.slack.flows import file_summary, share_thread
from bot.slack.flows.file_intake import FileIntake
from bot.store import SharedFile, Store, get_share, move_share, process_name, take_share, unfinished_shares

log = logging.getLogger(__name__)

WATCH_EVERY = 60.0  # seconds between looks for files whose process went away


def recover_files(intake: FileIntake, shares: list[SharedFile]) -> None:
    """Take up the files a stopped or crashed process left half way, in the background, then keep watching."""
    for share in shares:
        intake.runs.spawn(_recover(intake, share), f"taking up shared file {share.id}")
    intake.runs.spawn(_watch(intake), "watching for left-over shared files")


async def _watch(intake: FileIntake) -> None:
    """Now and then, take up files whose process went away meanwhile (another bot process that stopped)."""
    files = intake.runs
    while True:
        await asyncio.sleep(WATCH_EVERY)
        try:
            shares = await files.ctx.db(unfinished_shares)
        except Exception:
            log.warning("could not list the unfinished shared files", exc_info=True)
            continue
        for share in shares:
            if share.run_id not in files.active and share.owner != process_name():
                files.spawn(_recover(intake, share), f"taking up shared file {share.id}")


async def _recover(intake: FileIntake, share: SharedFile) -> None:
    ctx, files = intake.ctx, intake.runs
    if not await ctx.db(take_share, share=share, stale_after=STALE_AFTER):
        return
    if share.state in (ShareState.RECEIVED, ShareState.LOADING):
        await intake.begin(share, rubric_name=share.rubric_name, confirmed=share.state == ShareState.LOADING)
        return
    run = await ctx.db(Store.get_run, share.run_id) if share.run_id is not None else None
    rubric = ctx.rubric_of(run) if run is not None else None
    if run is None or rubric is None:
        await share_thread.refuse(ctx, share, "its rubric changed while the bot was stopped. Share the file again to judge it "
                                  "with the current rubric.")
        return
    if share.state == ShareState.FINISHING or run.status in (RunState.DONE, RunState.CANCELLED):
        await ctx.db(move_share, share_id=share.id, to=ShareState.FINISHING)  # judged: only the end is missing
        await file_summary.finish(ctx, share, rubric, claimed=True, recovering=True)
        return
    for attempt in range(2):
        try:
            await files.judge(share, run, rubric)
            return
        except RunBusy:
            if attempt == 0:
                await asyncio.sleep(STALE_AFTER + 5)  # held by another host: take it once it has gone quiet
            current = await ctx.db(Store.get_run, run.id)
            again = await ctx.db(get_share, share_id=share.id)
            # Only a run still being judged is taken over: one the other host paused waits for its Resume.
            if current is None or current.status not in RESUMABLE or again is None or again.state != ShareState.RUNNING:
                return
            share = again
