"""The listeners of file runs: shared files, and the buttons that pick a rubric, run again, cancel or resume."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.runs import RunBusy
from bot.slack import run_cards
from bot.slack.file_runs import FileRuns
from bot.slack.judging import Judgebot
from bot.slack.text import escape
from bot.store import process_name
from bot.store.models import SharedFile
from bot.store.shares import get_share, move_share, share_of_run

log = logging.getLogger(__name__)

NOT_HERE = "I cannot find this file's run in this channel."


def _channel(body: dict[str, Any]) -> str | None:
    return (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")


class FileListeners:
    """Listeners over the shared `Judgebot` and its `FileRuns`."""

    def __init__(self, bot: Judgebot, files: FileRuns) -> None:
        self.bot, self.files = bot, files

    async def on_file_share(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """A message that shares files (Slack has its ack already): each CSV/TSV becomes a run, once."""
        self.files.shared(event, body)

    async def ignore(self) -> None:
        """Events the app receives but does not act on: answered, so Slack does not send them again."""

    # -- before a run ---------------------------------------------------------------------------------------

    async def on_pick_rubric(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A rubric button under a file: start its run with that rubric."""
        await ack()
        share_id, _, name = str(action.get("value") or "").partition(":")
        rubric = self.bot.rubrics.find(name)
        share = await self._share(body, share_id)
        if share is None or rubric is None:
            await self.bot.tell(body.get("response_url"), NOT_HERE if share is None else
                                f"The rubric `{escape(name)}` is no longer loaded. `/judge rubrics` lists them.")
            return
        if not await self._answer(share, body, "asking", f"<@{body['user']['id']}> chose *{escape(rubric.title)}* "
                                                         f"for *{escape(share.file_name)}*.", rubric_name=rubric.name):
            return
        self.files.spawn(self.files.begin(share, rubric_name=rubric.name, confirmed=True),
                         f"judging file {share.file_id}")

    async def on_again(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Run again: the same file, shared again in its thread, is judged again (earlier verdicts are reused)."""
        await ack()
        share = await self._share(body, action.get("value"))
        if share is None:
            await self.bot.tell(body.get("response_url"), NOT_HERE)
            return
        if await self._answer(share, body, "confirm", f"Judging *{escape(share.file_name)}* again, as "
                                                      f"<@{body['user']['id']}> asked."):
            self.files.spawn(self.files.begin(share, confirmed=True), f"judging file {share.file_id} again")

    async def on_skip(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Don't: the file shared again is left alone."""
        await ack()
        share = await self._share(body, action.get("value"))
        if share is None:
            await self.bot.tell(body.get("response_url"), NOT_HERE)
            return
        await self._answer(share, body, "confirm", f"Not judged again (<@{body['user']['id']}>).", done="skipped")

    async def _answer(self, share: SharedFile, body: dict[str, Any], state: str, text: str, *, done: str = "received",
                      **fields: Any) -> bool:
        """Move the share out of the asking `state` (one click wins) and replace the question by `text`."""
        moved = await self.bot.db(move_share, self.bot.store, share.id, expect=(state,), state=done,
                                  owner=process_name(), **fields)
        if not moved:
            await self.bot.tell(body.get("response_url"), "This was answered already.")
            return False
        if share.question_ts:
            try:
                await self.bot.client.chat_update(channel=share.channel_id, ts=share.question_ts,
                                                  **run_cards.answered(text))
            except Exception:
                log.warning("could not replace the question %s in %s", share.question_ts, share.channel_id)
        return True

    # -- during a run ---------------------------------------------------------------------------------------

    async def on_cancel(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Cancel (or Finish here on a paused run): stop, keep the graded rows, and summarise them."""
        await ack()
        where, user = body.get("response_url"), body["user"]["id"]
        share = await self._run_share(body, action)
        if share is None:
            await self.bot.tell(where, NOT_HERE)
            return
        if self.files.cancel(share.run_id, user):  # type: ignore[arg-type]
            await self.bot.tell(where, f"Cancelling run #{share.run_id}: the rows graded so far are kept and "
                                       "summarised.")
            return
        run = await self.bot.db(self.bot.store.get_run, share.run_id)
        rubric = self.bot.rubric_of(run) if run is not None else None
        if share.state == "paused" and run is not None and rubric is not None and await self.bot.db(
                move_share, self.bot.store, share.id, expect=("paused",), state="finishing", owner=process_name()):
            # The share left "paused" first, so a Resume clicked meanwhile cannot start the run again.
            await self.bot.db(self.bot.store.update_run, run.id, status="cancelled", stop_reason="cancelled")
            self.files.spawn(self.files.finish(share, rubric, cancelled_by=user, claimed=True),
                             f"finishing run {run.id}")
        elif share.state in ("finishing", "done"):
            await self.bot.tell(where, f"Run #{share.run_id} has finished already.")
        else:
            await self.bot.tell(where, f"Run #{share.run_id} is not being judged by this bot right now (another "
                                       "process, or a restart); try again in a minute.")

    async def on_resume(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Resume a paused run (after its quota or key problem is fixed), in the same progress message."""
        await ack()
        where = body.get("response_url")
        share = await self._run_share(body, action)
        if share is None:
            await self.bot.tell(where, NOT_HERE)
            return
        run = await self.bot.db(self.bot.store.get_run, share.run_id)
        rubric = self.bot.rubric_of(run) if run is not None else None
        if run is None or rubric is None:
            await self.bot.tell(where, "The rubric of this run changed since it started, so it cannot go on. Share "
                                       "the file again to judge it with the current rubric.")
            return
        if not await self.bot.db(move_share, self.bot.store, share.id, expect=("paused",), state="running",
                                 owner=process_name()):
            await self.bot.tell(where, f"Run #{run.id} is not paused (resumed already?).")
            return

        async def resume() -> None:
            try:
                await self.files.judge(share, run, rubric)
            except RunBusy:
                await self.bot.tell(where, f"Run #{run.id} is being judged by another judgebot process.")

        self.files.spawn(resume(), f"resuming run {run.id}")

    # -- lookups --------------------------------------------------------------------------------------------

    async def _share(self, body: dict[str, Any], value: Any) -> SharedFile | None:
        """The shared file a button names, only if it was shared in the channel of the click."""
        try:
            share = await self.bot.db(get_share, self.bot.store, int(value))
        except (TypeError, ValueError):
            share = None
        return share if share is not None and share.channel_id == _channel(body) else None

    async def _run_share(self, body: dict[str, Any], action: dict[str, Any]) -> SharedFile | None:
        """The shared file of the run a button names, only if it was shared in the channel of the click."""
        try:
            share = await self.bot.db(share_of_run, self.bot.store, int(action.get("value") or 0))
        except ValueError:
            share = None
        return share if share is not None and share.channel_id == _channel(body) else None
