"""Files a stopped or crashed process left half way: taken up at the start, and watched for while the bot runs."""

from __future__ import annotations

import asyncio
import logging

from bot.errors import RunBusy
from bot.records import RESUMABLE, RunState, ShareState
from bot.runs import STALE_AFTER
from bot.slack.flows.file_run import FileRuns
from bot.store import SharedFile, Store, move_share, process_name, take_share, unfinished_shares

log = logging.getLogger(__name__)

WATCH_EVERY = 60.0  # seconds between looks for files whose process went away


def recover_files(files: FileRuns, shares: list[SharedFile]) -> None:
    """Take up the files a stopped or crashed process left half way, in the background, then keep watching."""
    for share in shares:
        files.spawn(_recover(files, share), f"taking up shared file {share.id}")
    files.spawn(_watch(files), "watching for left-over shared files")


async def _watch(files: FileRuns) -> None:
    """Now and then, take up files whose process went away meanwhile (another bot process that stopped)."""
    while True:
        await asyncio.sleep(WATCH_EVERY)
        try:
            shares = await files.ctx.db(unfinished_shares)
        except Exception:
            log.warning("could not list the unfinished shared files", exc_info=True)
            continue
        for share in shares:
            if share.run_id not in files.active and share.owner != process_name():
                files.spawn(_recover(files, share), f"taking up shared file {share.id}")


async def _recover(files: FileRuns, share: SharedFile) -> None:
    ctx = files.ctx
    if not await ctx.db(take_share, share=share, stale_after=STALE_AFTER):
        return
    if share.state in (ShareState.RECEIVED, ShareState.LOADING):
        await files.begin(share, rubric_name=share.rubric_name, confirmed=share.state == ShareState.LOADING)
        return
    run = await ctx.db(Store.get_run, share.run_id) if share.run_id is not None else None
    rubric = ctx.rubric_of(run) if run is not None else None
    if run is None or rubric is None:
        await files.refuse(share, "its rubric changed while the bot was stopped. Share the file again to judge it "
                                  "with the current rubric.")
        return
    if share.state == ShareState.FINISHING or run.status in (RunState.DONE, RunState.CANCELLED):
        await ctx.db(move_share, share_id=share.id, to=ShareState.FINISHING)  # judged: only the end is missing
        await files.finish(share, rubric, claimed=True, recovering=True)
        return
    for attempt in range(2):
        try:
            await files.judge(share, run, rubric)
            return
        except RunBusy:
            if attempt == 0:
                await asyncio.sleep(STALE_AFTER + 5)  # held by another host: take it once it has gone quiet
            current = await ctx.db(Store.get_run, run.id)
            if current is None or current.status not in RESUMABLE:
                return
