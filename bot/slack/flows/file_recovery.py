"""Files a stopped or crashed process left half way: taken up at the start, and watched for while the bot runs."""

from __future__ import annotations

import asyncio
import logging

from bot.errors import RunBusy
from bot.records import RESUMABLE, RunState, ShareState
from bot.runs import STALE_AFTER, held_elsewhere
from bot.slack.context import NotInstalled
from bot.slack.flows import file_summary, share_thread
from bot.slack.flows.file_intake import FileIntake
from bot.store import SharedFile, get_run, get_share, move_share, process_name, take_share, unfinished_shares

log = logging.getLogger(__name__)

# Seconds between looks for files whose process went away: with STALE_AFTER, a replica takes up the run of one that
# died within half a minute.
WATCH_EVERY = 10.0
QUIET_STEP = 120.0  # seconds after which another host's file in any other step counts as abandoned


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
            if share.run_id in files.active or share.owner == process_name():
                continue
            files.spawn(_recover(intake, share), f"taking up shared file {share.id}")


async def _recover(intake: FileIntake, share: SharedFile) -> None:
    """Take up one file, for the workspace it was shared in (with the OAuth install, through that workspace's token)."""
    try:
        async with intake.ctx.acting_for(share.team_id):
            await _take_up(intake, share)
    except NotInstalled:  # uninstalled meanwhile: nobody there to tell, nothing to post with
        log.warning("shared file %s is left: judgebot is no longer installed in workspace %s", share.id,
                    share.team_id)
        await intake.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None,
                            note="judgebot was uninstalled from the workspace")


async def _take_up(intake: FileIntake, share: SharedFile) -> None:
    ctx, files = intake.ctx, intake.runs
    held = await ctx.db(get_run, share.run_id) if share.run_id is not None else None
    if held is not None and held_elsewhere(held):  # another replica judges it and shows life: left to it
        return
    # A run being judged shows life with its heartbeat (checked just above): its file is taken once that stops. Any
    # other step (loading the rows, posting the summary) shows none while it works: given longer, so that a slow
    # upload on another host is never finished twice.
    stale = STALE_AFTER if share.state == ShareState.RUNNING else QUIET_STEP
    if not await ctx.db(take_share, share=share, stale_after=stale):
        return
    if share.state in (ShareState.RECEIVED, ShareState.LOADING):
        await intake.begin(share, rubric_name=share.rubric_name, confirmed=share.state == ShareState.LOADING)
        return
    run = await ctx.db(get_run, share.run_id) if share.run_id is not None else None
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
            current = await ctx.db(get_run, run.id)
            again = await ctx.db(get_share, share_id=share.id)
            # Only a run still being judged is taken over: one the other host paused waits for its Resume.
            if current is None or current.status not in RESUMABLE or again is None or again.state != ShareState.RUNNING:
                return
            share = again
