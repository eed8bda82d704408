"""A shared file's thread: what the bot says there, a refusal, and letting go of the file at a stop."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bot.records import ShareState
from bot.slack.context import SAY_LATER, Context
from bot.slack.messenger import Sent
from bot.slack.views import file_run as view
from bot.store import SharedFile, move_share, update_share

log = logging.getLogger(__name__)


async def post(ctx: Context, share: SharedFile, message: dict[str, Any], *, what: str, **extra: Any) -> Sent:
    """Post in the share's thread; `what` names the message in the log if Slack refuses it."""
    return await ctx.say.post(share.channel_id, message, thread_ts=share.thread_ts,
                              what=f"{what} of file {share.file_id}", **extra)


async def say(ctx: Context, share: SharedFile, text: str) -> None:
    """Say one paragraph (already escaped) in the share's thread."""
    await post(ctx, share, view.answered(text), what="a note")


async def let_go(ctx: Context, share: SharedFile) -> None:
    """Let go of a file at a stop, so that the next start (of this very process, too) takes it up."""
    try:
        await asyncio.wait_for(ctx.db(update_share, share_id=share.id, owner=None), SAY_LATER)
    except Exception:
        log.warning("could not let go of shared file %s", share.id)


async def refuse(ctx: Context, share: SharedFile, problem: str) -> None:
    """The file cannot be judged: say why where its progress shows (or in the thread), and settle it."""
    shown = view.failed(share.file_name, problem)
    if share.progress_ts:
        await ctx.say.edit(share.channel_id, share.progress_ts, shown, what="a progress message")
    else:
        await post(ctx, share, shown, what="a refusal")
    await ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None, note=problem)
