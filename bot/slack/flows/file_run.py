"""A CSV shared in Slack, from the share to the run: claimed once, fetched safely, asked about, judged with live
progress, paused, cancelled or resumed; its end (summary, results) is in file_summary."""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.csvio import CsvSource, open_csv
from bot.errors import CommandError, CsvError, FileProblem, RubricChanged, RunBusy, RunNotResumable
from bot.records import RESUMABLE, RowState, RunState, ShareState
from bot.rubric import Rubric
from bot.runs import Origin, execute_run, start_csv_run
from bot.slack.commands import parse_share_text
from bot.slack.context import SAY_LATER, Context
from bot.slack.files import Downloaded, download, file_origin, is_table, megabytes, safe_name
from bot.slack.flows import file_summary, share_thread
from bot.slack.flows.progress import EDIT_EVERY, ProgressMessage
from bot.slack.messenger import OUR_FAULT, slack_error
from bot.slack.views import file_run as view
from bot.store import (
    Run,
    SharedFile,
    Store,
    claim_share,
    default_rubric,
    earlier_share,
    move_share,
    process_name,
    thread_rubric,
    update_share,
)

log = logging.getLogger(__name__)

FILE_SOURCE = "slack-file"  # the source of runs over a file shared in Slack
EDITS_PER_MINUTE = 40  # progress edits of all runs together: under Slack's ~50 chat.update calls a minute


@dataclass(frozen=True)
class FileLimits:
    """How big a shared file may be, how many rows are judged at once, and where files may come from."""

    max_bytes: int
    max_rows: int
    concurrency: int
    origin: tuple[str, str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> FileLimits:
        """The limits the settings give."""
        return cls(max_bytes=int(settings.csv_max_mb * 1_000_000), max_rows=settings.csv_max_rows,
                   concurrency=settings.concurrency, origin=file_origin(settings.slack_api_url))


@dataclass
class _Active:
    """A run being judged by this process: how to cancel it, and who asked."""

    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled_by: str | None = None


class FileRuns:
    """Every run over a shared file: started from events, buttons and restarts; stopped by Cancel or shutdown."""

    def __init__(self, ctx: Context, limits: FileLimits) -> None:
        self.ctx, self.limits = ctx, limits
        self.active: dict[int, _Active] = {}

    def spawn(self, work: Any, what: str) -> None:
        """Run file work in the background: interrupted at a stop, and taken up again after the restart."""
        self.ctx.tasks.spawn(work, what, interruptible=True)

    # -- a file is shared -----------------------------------------------------------------------------------

    def shared(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """A `file_share` message: claim each CSV/TSV once and judge it; explain if the bot was asked about others."""
        bot_user = self.ctx.bot_user_id
        if event.get("bot_id") or (bot_user and event.get("user") == bot_user):
            return  # the bot's own uploads (results files) are never judged
        files = [f for f in event.get("files") or [] if f.get("id")]
        # Files from another organisation (Slack Connect) come without a name or type: files.info tells.
        unknown = [f for f in files if f.get("file_access") == "check_file_info"]
        tables = [f for f in files if is_table(f) or f in unknown]
        mentioned = bool(bot_user) and f"<@{bot_user}>" in (event.get("text") or "")
        chosen = tables or (files[:1] if mentioned else [])
        for file in chosen:
            fields = {
                "team_id": body.get("team_id") or event.get("team") or "", "channel_id": event["channel"],
                "thread_ts": event.get("thread_ts") or event["ts"], "message_ts": event["ts"], "file_id": file["id"],
                "event_id": body.get("event_id"), "user_id": event.get("user"),
                "file_name": str(file.get("name") or file["id"]), "text": event.get("text") or "",
                "owner": process_name(),
            }
            table = None if file in unknown else file in tables
            self.spawn(self._receive(fields, table=table, mentioned=mentioned), f"file {file['id']} shared")

    async def _receive(self, fields: dict[str, Any], *, table: bool | None, mentioned: bool) -> None:
        if table is None:  # find out what it is before anything is recorded
            try:
                info = (await self.ctx.client.files_info(file=fields["file_id"]))["file"]
            except Exception as err:
                log.warning("files.info of %s failed: %s", fields["file_id"], slack_error(err))
                info = {}
            table, fields["file_name"] = is_table(info), str(info.get("name") or fields["file_name"])
            if not table and not mentioned:
                return
        share = await self.ctx.db(claim_share, **fields)
        if share is None:
            log.info("file %s of message %s was claimed already", fields["file_id"], fields["message_ts"])
            return
        if not table:
            await share_thread.say(self.ctx, share, view.ACCEPTS)
            await self.ctx.db(move_share, share_id=share.id, to=ShareState.SKIPPED, note="not a CSV or TSV")
            return
        await self.begin(share)

    # -- from the file to a run -----------------------------------------------------------------------------

    async def begin(self, share: SharedFile, *, rubric_name: str | None = None, confirmed: bool = False) -> None:
        """Fetch and check the file, ask what is missing (run again? which rubric?), else start the run."""
        with tempfile.TemporaryDirectory(prefix="judgebot-") as folder:
            try:
                fetched = await self._fetch(share, Path(folder))
                source, rows = await asyncio.to_thread(self._open, fetched.path, share.file_name)
                await self.ctx.db(update_share, share_id=share.id, sha256=fetched.sha256)
                share.sha256 = fetched.sha256
                wanted = parse_share_text(share.text, self.ctx.rubrics)
            except (FileProblem, CommandError) as problem:
                await self.refuse(share, str(problem))
                return
            if not confirmed:
                earlier = await self.ctx.db(earlier_share, share=share)
                if earlier is not None:
                    await self._ask(share, ShareState.CONFIRM,
                                    view.again_question(share.id, share.file_name, earlier.run_id))
                    return
            rubric = self.ctx.rubrics.find(rubric_name) if rubric_name else await self._rubric_for(share, wanted.rubric)
            if rubric is None:
                await self._ask(share, ShareState.ASKING,
                                view.rubric_question(share.id, share.file_name, self.ctx.rubrics))
                return
            await self._start(share, rubric, source, rows, wanted.model)

    async def _fetch(self, share: SharedFile, folder: Path) -> Downloaded:
        try:
            info = (await self.ctx.client.files_info(file=share.file_id))["file"]
        except Exception as err:
            code = slack_error(err)
            if code in ("missing_scope", "not_allowed_token_type", "no_permission"):
                raise FileProblem("the app is missing the `files:read` permission. An admin adds that scope on the "
                                  "app's OAuth & Permissions page and reinstalls the app; then share the file "
                                  "again.") from None
            if code in ("file_not_found", "file_deleted"):
                raise FileProblem("the file is gone from Slack (deleted?). Share it again.") from None
            raise FileProblem(f"Slack did not give me the file (`{code}`). Please share it again.") from None
        declared = int(info.get("size") or 0)
        if declared > self.limits.max_bytes:
            raise FileProblem(f"it has {megabytes(declared)}, more than the limit of "
                              f"{megabytes(self.limits.max_bytes)}. Split it into smaller files and share them "
                              "one by one.")
        url = info.get("url_private_download") or ""
        if not url:
            raise FileProblem("Slack gave no download address for it (an external file?). Upload the file itself.")
        return await download(url, self.ctx.client.token or "", folder / safe_name(share.file_name),
                              max_bytes=self.limits.max_bytes, extra=self.limits.origin)

    def _open(self, path: Path, name: str) -> tuple[CsvSource, int]:
        """Open the CSV and count its rows (malformed ones too), within the row limit."""
        try:
            source = open_csv(path)
            rows = 0
            for _ in source:
                rows += 1
                if rows > self.limits.max_rows:
                    raise FileProblem(f"it has more than {self.limits.max_rows:,} rows, the limit. Split it into "
                                      "smaller files and share them one by one.")
        except CsvError as err:
            raise FileProblem(str(err).replace(str(path), name)) from None
        if rows == 0:
            raise FileProblem("it has a header but no data rows.")
        return source, rows

    async def _rubric_for(self, share: SharedFile, named: Rubric | None) -> Rubric | None:
        """The rubric the message names, else the thread's (its card or earlier run), else the channel's default."""
        if named is not None:
            return named
        name = await self.ctx.db(thread_rubric, channel_id=share.channel_id, thread_ts=share.thread_ts)
        rubric = self.ctx.rubrics.find(name) if name else None
        if rubric is None:
            name = await self.ctx.db(default_rubric, team_id=share.team_id, channel_id=share.channel_id)
            rubric = self.ctx.rubrics.find(name) if name else None
        return rubric

    async def _start(self, share: SharedFile, rubric: Rubric, source: CsvSource, rows: int, model: str | None) -> None:
        """Post the progress message, save every row as pending, then judge."""
        shown = view.loading(share.file_name, rubric.title)
        if share.progress_ts:
            await self.ctx.say.edit(share.channel_id, share.progress_ts, shown, what="a progress message")
        else:
            share.progress_ts = (await share_thread.post(self.ctx, share, shown, what="a progress message")).ts
            if share.progress_ts is None:  # Slack refused the thread: nothing can be shown, so nothing is judged
                await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None,
                                  note="the progress message could not be posted")
                return
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.LOADING, progress_ts=share.progress_ts,
                          rubric_name=rubric.name, model_name=model)
        origin = Origin(source=FILE_SOURCE, team_id=share.team_id, channel_id=share.channel_id,
                        thread_ts=share.thread_ts, user_id=share.user_id)
        run = await asyncio.to_thread(start_csv_run, self.ctx.store, rubric=rubric, source=source,
                                      judge_model=self.ctx.judge.model, model_name=model, origin=origin)
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.RUNNING, run_id=run.id)
        share.run_id, share.state = run.id, ShareState.RUNNING
        await self.judge(share, run, rubric)

    # -- judging --------------------------------------------------------------------------------------------

    async def judge(self, share: SharedFile, run: Run, rubric: Rubric) -> None:
        """Judge the run's pending rows with a moving progress message; then pause, or summarise."""
        if run.id in self.active:
            return  # this process judges it already
        active = self.active[run.id] = _Active()
        assert share.progress_ts is not None
        shown = ProgressMessage(self.ctx.say, share.channel_id, share.progress_ts,
                                lambda event: view.progress(run, rubric.title, event, share.user_id),
                                every=self.edit_every)
        shown.start()
        started = time.monotonic()
        try:
            outcome = await execute_run(self.ctx.store, run, rubric, self.ctx.judge,
                                        concurrency=self.limits.concurrency, on_progress=shown.update,
                                        cancel=active.cancel, statuses=RESUMABLE)
        except RunBusy:
            await shown.close()
            raise
        except (RubricChanged, RunNotResumable) as err:
            await shown.close(view.failed(share.file_name, str(err)))
            await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None, note=str(err))
            return
        except asyncio.CancelledError:
            await self._interrupted(share, run, rubric, shown)
            raise
        except Exception:  # the run is saved: it can go on, so it is paused with Resume rather than lost
            log.exception("judging run %s failed", run.id)
            await self._pause(share, run, rubric, shown, OUR_FAULT)
            return
        finally:
            self.active.pop(run.id, None)
        try:
            current = await self.ctx.db(Store.get_run, run.id)
            if current is not None and current.owner not in (None, process_name()):
                await shown.close()  # another process took the run over; it goes on there
                return
            if outcome.status == RunState.PAUSED:
                await self._pause(share, run, rubric, shown, outcome.stop_reason or "stopped")
                return
            await shown.close()
            await file_summary.finish(self.ctx, share, rubric, seconds=time.monotonic() - started,
                                      cancelled_by=active.cancelled_by, shown=shown)
        except asyncio.CancelledError:
            await share_thread.let_go(self.ctx, share)
            raise

    def edit_every(self) -> float:
        """Seconds between edits of one progress message: Slack allows about 50 edits a minute per workspace."""
        return max(EDIT_EVERY, len(self.active) * 60 / EDITS_PER_MINUTE)

    async def _pause(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage, reason: str) -> None:
        counts = await self.ctx.db(Store.status_counts, run.id)
        total = sum(n for status, n in counts.items() if status != RowState.MALFORMED)
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.PAUSED, owner=None, note=reason)
        await shown.close(view.paused(run, rubric.title, total - counts.get(RowState.PENDING, 0), total, reason))

    async def _interrupted(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage) -> None:
        await share_thread.let_go(self.ctx, share)
        done = shown.latest.done if shown.latest else 0
        total = shown.latest.total if shown.latest else run.total_rows
        try:
            await asyncio.wait_for(shown.close(view.interrupted(run, rubric.title, done, total)), SAY_LATER)
        except Exception:
            log.warning("could not mark run %s as interrupted", run.id)

    def cancel(self, run_id: int, user_id: str | None) -> bool:
        """Cancel a run this process is judging; False when it judges no such run."""
        active = self.active.get(run_id)
        if active is None:
            return False
        active.cancelled_by = user_id
        active.cancel.set()
        return True

    async def finish(self, share: SharedFile, rubric: Rubric, **options: Any) -> None:
        """The end of the run: summary, results and chart, once (see file_summary.finish)."""
        await file_summary.finish(self.ctx, share, rubric, **options)

    # -- talking in the thread ------------------------------------------------------------------------------

    async def _ask(self, share: SharedFile, state: ShareState, question: dict[str, Any]) -> None:
        sent = await share_thread.post(self.ctx, share, question, what="a question")
        if sent.ts is None:
            await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None,
                              note="the question could not be posted")
            return
        await self.ctx.db(move_share, share_id=share.id, to=state, question_ts=sent.ts, owner=None)

    async def refuse(self, share: SharedFile, problem: str) -> None:
        """The file cannot be judged: say why where its progress shows (or in the thread), and settle it."""
        shown = view.failed(share.file_name, problem)
        if share.progress_ts:
            await self.ctx.say.edit(share.channel_id, share.progress_ts, shown, what="a progress message")
        else:
            await share_thread.post(self.ctx, share, shown, what="a refusal")
        await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, owner=None, note=problem)
