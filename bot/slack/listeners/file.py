"""Files shared in a thread, and the buttons of their runs: pick a rubric, run again or not, cancel, resume.

Every button acts only on a file shared in the channel where it was clicked.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.errors import RunBusy
from bot.records import RunState, ShareState
from bot.runs import Tier, held_elsewhere
from bot.slack.context import Context
from bot.slack.files import is_table
from bot.slack.flows import file_summary
from bot.slack.flows.file_intake import FileIntake
from bot.slack.flows.file_run import FileRuns
from bot.slack.listeners.clicks import OTHER_WORKSPACE, made_here
from bot.slack.text import escape
from bot.slack.views import file_run as view
from bot.slack.views.blocks import notice
from bot.slack.views.file_run import BACKGROUND_RUN
from bot.store import SharedFile, get_run, get_share, move_share, process_name, request_cancel, share_of_run, update_run

log = logging.getLogger(__name__)

NOT_HERE = "I cannot find this file's run in this channel."


class FileListener:
    """The listeners of shared files and their runs, over the bot's context and its file runs."""

    def __init__(self, ctx: Context, intake: FileIntake, files: FileRuns) -> None:
        self.ctx, self.intake, self.files = ctx, intake, files

    async def on_file_share(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """A message that shares files (Slack has its ack already): each CSV/TSV becomes a run, once.

        Files shared by a person of another workspace (a channel shared with another organisation) are not judged:
        their rows would become this workspace's history.
        """
        named = [event.get(key) for key in ("team", "user_team", "source_team")] + [body.get("team_id")]
        teams = set(named) - {None, ""}
        if not self.ctx.team_id or teams != {self.ctx.team_id}:  # the rule of clicks.from_team, for an event
            log.warning("file share by user %s of team(s) %s refused in channel %s", event.get("user"),
                        ", ".join(sorted(map(str, teams))), event.get("channel"))
            if any(is_table(file) for file in event.get("files") or []):
                await self.ctx.say.post(event["channel"], notice(OTHER_WORKSPACE), what="a file from elsewhere",
                                        thread_ts=event.get("thread_ts") or event["ts"])
            return
        self.intake.shared(event, body)

    # -- before a run ---------------------------------------------------------------------------------------

    async def on_pick_rubric(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A rubric button under a file: start its run with that rubric."""
        await ack()
        share_id, _, name = str(action.get("value") or "").partition(":")
        rubric = self.ctx.rubrics.find(name)
        share = await self._share(body, action, share_id)
        if share is None or rubric is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_HERE if share is None else
                                f"The rubric `{escape(name)}` is no longer loaded. `/judge rubrics` lists them.")
            return
        if not await self._answer(share, body, ShareState.ASKING, f"<@{body['user']['id']}> chose *{escape(rubric.title)}* "
                                                         f"for *{escape(share.file_name)}*.", rubric_name=rubric.name):
            return
        self.files.spawn(self.intake.begin(share, rubric_name=rubric.name, confirmed=True),
                         f"judging file {share.file_id}")

    async def on_again(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Run again: the same file, shared again in its thread, is judged again (earlier verdicts are reused)."""
        await ack()
        share = await self._share(body, action, action.get("value"))
        if share is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_HERE)
            return
        if await self._answer(share, body, ShareState.CONFIRM, f"Judging *{escape(share.file_name)}* again, as "
                                                      f"<@{body['user']['id']}> asked."):
            self.files.spawn(self.intake.begin(share, confirmed=True), f"judging file {share.file_id} again")

    async def on_skip(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Don't: the file shared again is left alone."""
        await ack()
        share = await self._share(body, action, action.get("value"))
        if share is None:
            await self.ctx.say.tell(body.get("response_url"), NOT_HERE)
            return
        await self._answer(share, body, ShareState.CONFIRM, f"Not judged again (<@{body['user']['id']}>).",
                           done=ShareState.SKIPPED)

    async def _answer(self, share: SharedFile, body: dict[str, Any], state: ShareState, text: str, *,
                      done: ShareState = ShareState.RECEIVED, **fields: Any) -> bool:
        """Move the share out of the asking `state` (one click wins) and replace the question by `text`."""
        moved = await self.ctx.db(move_share, share_id=share.id, to=done, expect=(state,), owner=process_name(), **fields)
        if not moved:
            await self.ctx.say.tell(body.get("response_url"), "This was answered already.")
            return False
        question_ts = (body.get("container") or {}).get("message_ts") or share.question_ts  # the message clicked
        if question_ts:
            await self.ctx.say.edit(share.channel_id, question_ts, view.answered(text), what="a question")
        return True

    # -- during a run ---------------------------------------------------------------------------------------

    async def on_cancel(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Cancel (or Finish here on a paused run): stop, keep the graded rows, and summarise them."""
        await ack()
        where, user = body.get("response_url"), body["user"]["id"]
        found = await self._run_share(body, action)
        if found is None:
            await self.ctx.say.tell(where, NOT_HERE)
            return
        share, run_id = found
        if self.files.cancel(run_id, user):
            await self.ctx.say.tell(where, f"Cancelling run #{share.run_id}: the rows graded so far are kept and "
                                       "summarised.")
            return
        run = await self.ctx.db(get_run, run_id)
        rubric = self.ctx.rubric_of(run) if run is not None else None
        if share.state == ShareState.PAUSED and run is not None and rubric is not None and await self.ctx.db(
                move_share, share_id=share.id, to=ShareState.FINISHING, expect=(ShareState.PAUSED,), owner=process_name()):
            # The share left "paused" first, so a Resume clicked meanwhile cannot start the run again.
            await self.ctx.db(update_run, run.id, status=RunState.CANCELLED, stop_reason="cancelled")
            self.files.spawn(file_summary.finish(self.ctx, share, rubric, cancelled_by=user, claimed=True),
                             f"finishing run {run.id}")
        elif share.state in (ShareState.FINISHING, ShareState.DONE):
            await self.ctx.say.tell(where, f"Run #{share.run_id} has finished already.")
        elif run is not None and held_elsewhere(run) and await self.ctx.db(request_cancel, run.id, user):
            await self.ctx.say.tell(where, f"Cancelling run #{share.run_id}: another process of the bot judges it and "
                                    "stops within a few seconds; the rows graded so far are kept and summarised.")
        else:
            await self.ctx.say.tell(where, f"Run #{share.run_id} is not being judged by this bot right now (another "
                                       "process, or a restart); try again in a minute.")

    async def on_resume(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Resume a paused run (after its quota or key problem is fixed, or Start under its estimate), in the same
        progress message."""
        await ack()
        await self._go_on(body, action, Tier.LIVE)

    async def on_batch(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Half price via Batch under a file's estimate: its rows sent through the Batch API, waited for."""
        await ack()
        await self._go_on(body, action, Tier.BATCH)

    async def on_background(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A background window under a file's estimate (the button's action id ends with "2h" or "8h"): its rows
        asked in the Responses API's background mode, polled until answered."""
        await ack()
        window = str(action.get("action_id", "")).removeprefix(BACKGROUND_RUN)
        tier = Tier.BACKGROUND_2H if window == Tier.BACKGROUND_2H.value else Tier.BACKGROUND_8H
        await self._go_on(body, action, tier)

    async def _go_on(self, body: dict[str, Any], action: dict[str, Any], tier: Tier) -> None:
        """Judge a paused run again at `tier` (live, a background window, the Batch API), once the click is known to
        be allowed."""
        where = body.get("response_url")
        found = await self._run_share(body, action)
        if found is None:
            await self.ctx.say.tell(where, NOT_HERE)
            return
        share, run_id = found
        run = await self.ctx.db(get_run, run_id)
        rubric = self.ctx.rubric_of(run) if run is not None else None
        if run is None or rubric is None:
            await self.ctx.say.tell(where, "The rubric of this run changed since it started, so it cannot go on. Share "
                                       "the file again to judge it with the current rubric.")
            return
        if share.state == ShareState.PAUSED and (refusal := await self.files.may_start(share, run, rubric,
                                                                                      body["user"]["id"], tier)):
            await self.ctx.say.tell(where, refusal)
            return
        if not await self.ctx.db(move_share, share_id=share.id, to=ShareState.RUNNING, expect=(ShareState.PAUSED,),
                                 owner=process_name()):
            await self.ctx.say.tell(where, f"Run #{run.id} is not paused (resumed already?).")
            return

        async def resume() -> None:
            try:
                await self.files.judge(share, run, rubric, tier=tier)
            except RunBusy:
                await self.ctx.say.tell(where, f"Run #{run.id} is being judged by another judgebot process.")

        self.files.spawn(resume(), f"resuming run {run.id}")

    # -- lookups --------------------------------------------------------------------------------------------

    async def _share(self, body: dict[str, Any], action: dict[str, Any], share_id: Any) -> SharedFile | None:
        """The shared file a button names, only if it was shared in the channel (and workspace) of the click."""
        try:
            share = await self.ctx.db(get_share, share_id=int(share_id))
        except (TypeError, ValueError):
            share = None
        return share if share is not None and made_here(body, action, share.channel_id, share.team_id) else None

    async def _run_share(self, body: dict[str, Any], action: dict[str, Any]) -> tuple[SharedFile, int] | None:
        """The shared file of the run a button names, and the run's id, only if it was shared where it was clicked."""
        try:
            run_id = int(action.get("value") or 0)
        except ValueError:
            return None
        share = await self.ctx.db(share_of_run, run_id=run_id)
        return (share, run_id) if share is not None and made_here(body, action, share.channel_id, share.team_id) else None
