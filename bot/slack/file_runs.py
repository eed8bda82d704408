"""CSV files shared in Slack: each claimed once, fetched safely, judged with live progress, then summarised."""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.csvio import CsvSource, open_csv
from bot.digest.charts import score_distribution_png
from bot.errors import CsvError
from bot.records import RESUMABLE
from bot.rubric import Rubric
from bot.runs import STALE_AFTER, Origin, RubricChanged, RunBusy, RunNotResumable, execute_run, start_csv_run
from bot.runs.summary import BANDS, Summary, export_run
from bot.slack import run_cards
from bot.slack.commands import CommandError, parse_share_text
from bot.slack.files import Downloaded, FileProblem, download, file_origin, is_table, megabytes, safe_name, upload
from bot.slack.judging import OUR_FAULT, SAY_LATER, Judgebot, slack_error
from bot.slack.progress import EDIT_EVERY, ProgressMessage
from bot.slack.text import escape
from bot.store import process_name
from bot.store.models import Run, SharedFile
from bot.store.shares import (
    claim_share,
    default_rubric,
    earlier_share,
    get_share,
    move_share,
    take_share,
    thread_rubric,
    unfinished_shares,
)

log = logging.getLogger(__name__)

FILE_SOURCE = "slack-file"  # the source of runs over a file shared in Slack
SUMMARY_EVENT = "judgebot_run_summary"  # message metadata that marks a run's summary, to find it after a crash
EDITS_PER_MINUTE = 40  # progress edits of all runs together: under Slack's ~50 chat.update calls a minute
WATCH_EVERY = 60.0  # seconds between looks for files whose process went away


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


def _results_name(run: Run) -> str:
    stem = Path(run.source_name or "file").stem or "file"
    return f"{stem}-results-run{run.id}.csv"


def _chart_name(run: Run) -> str:
    return f"{Path(run.source_name or 'file').stem or 'file'}-scores-run{run.id}.png"


class FileRuns:
    """Every run over a shared file: started from events, buttons and restarts; stopped by Cancel or shutdown."""

    def __init__(self, bot: Judgebot, limits: FileLimits, bot_user_id: str | None = None) -> None:
        self.bot, self.limits, self.bot_user_id = bot, limits, bot_user_id
        self.active: dict[int, _Active] = {}
        self.tasks: set[asyncio.Task[Any]] = set()

    # -- tasks ----------------------------------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:
        """Run `work` in the background; a failure is logged (the thread is told where the work can tell it)."""
        task = asyncio.create_task(work, name=what)
        self.tasks.add(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self.tasks.discard(done)
            if not done.cancelled() and done.exception() is not None:
                log.error("%s failed", what, exc_info=done.exception())

        task.add_done_callback(finished)

    async def interrupt(self) -> None:
        """The bot is stopping: stop every run now (each says so in its thread); the next start goes on."""
        tasks = set(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SAY_LATER * 2)

    # -- a file is shared -----------------------------------------------------------------------------------

    def shared(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """A `file_share` message: claim each CSV/TSV once and judge it; explain if the bot was asked about others."""
        if event.get("bot_id") or (self.bot_user_id and event.get("user") == self.bot_user_id):
            return  # the bot's own uploads (results files) are never judged
        files = [f for f in event.get("files") or [] if f.get("id")]
        # Files from another organisation (Slack Connect) come without a name or type: files.info tells.
        unknown = [f for f in files if f.get("file_access") == "check_file_info"]
        tables = [f for f in files if is_table(f) or f in unknown]
        mentioned = bool(self.bot_user_id) and f"<@{self.bot_user_id}>" in (event.get("text") or "")
        chosen = tables or (files[:1] if mentioned else [])
        for file in chosen:
            fields = {
                "team_id": body.get("team_id") or event.get("team") or "", "channel_id": event["channel"],
                "thread_ts": event.get("thread_ts") or event["ts"], "message_ts": event["ts"], "file_id": file["id"],
                "event_id": body.get("event_id"), "user_id": event.get("user"), "file_name": str(file.get("name") or
                                                                                               file["id"]),
                "text": event.get("text") or "", "owner": process_name(),
            }
            table = None if file in unknown else file in tables
            self.spawn(self._receive(fields, table=table, mentioned=mentioned), f"file {file['id']} shared")

    async def _receive(self, fields: dict[str, Any], *, table: bool | None, mentioned: bool) -> None:
        if table is None:  # find out what it is before anything is recorded
            try:
                info = (await self.bot.client.files_info(file=fields["file_id"]))["file"]
            except Exception as err:
                log.warning("files.info of %s failed: %s", fields["file_id"], slack_error(err))
                info = {}
            table, fields["file_name"] = is_table(info), str(info.get("name") or fields["file_name"])
            if not table and not mentioned:
                return
        share = await self.bot.db(claim_share, self.bot.store, **fields)
        if share is None:
            log.info("file %s of message %s was claimed already", fields["file_id"], fields["message_ts"])
            return
        if not table:
            await self._say(share, run_cards.ACCEPTS)
            await self.bot.db(move_share, self.bot.store, share.id, state="skipped", note="not a CSV or TSV")
            return
        await self.begin(share)

    # -- from the file to a run -----------------------------------------------------------------------------

    async def begin(self, share: SharedFile, *, rubric_name: str | None = None, confirmed: bool = False) -> None:
        """Fetch and check the file, ask what is missing (run again? which rubric?), else start the run."""
        with tempfile.TemporaryDirectory(prefix="judgebot-") as folder:
            try:
                fetched = await self._fetch(share, Path(folder))
                source, rows = await asyncio.to_thread(self._open, fetched.path, share.file_name)
                await self.bot.db(move_share, self.bot.store, share.id, sha256=fetched.sha256)
                share.sha256 = fetched.sha256
                wanted = parse_share_text(share.text, self.bot.rubrics)
            except (FileProblem, CommandError) as problem:
                await self._refuse(share, str(problem))
                return
            if not confirmed:
                earlier = await self.bot.db(earlier_share, self.bot.store, share)
                if earlier is not None:
                    await self._ask(share, "confirm", run_cards.again_question(share.id, share.file_name,
                                                                               earlier.run_id))
                    return
            rubric = self.bot.rubrics.find(rubric_name) if rubric_name else await self._rubric_for(share, wanted.rubric)
            if rubric is None:
                await self._ask(share, "asking", run_cards.rubric_question(share.id, share.file_name, self.bot.rubrics))
                return
            await self._start(share, rubric, source, rows, wanted.model)

    async def _fetch(self, share: SharedFile, folder: Path) -> Downloaded:
        try:
            info = (await self.bot.client.files_info(file=share.file_id))["file"]
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
        return await download(url, self.bot.client.token or "", folder / safe_name(share.file_name),
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
        for lookup, args in ((thread_rubric, (share.channel_id, share.thread_ts)),
                             (default_rubric, (share.team_id, share.channel_id))):
            name = await self.bot.db(lookup, self.bot.store, *args)
            rubric = self.bot.rubrics.find(name) if name else None
            if rubric is not None:
                return rubric
        return None

    async def _start(self, share: SharedFile, rubric: Rubric, source: CsvSource, rows: int, model: str | None) -> None:
        """Post the progress message, save every row as pending, then judge."""
        shown = run_cards.loading(share.file_name, rubric.title)
        if share.progress_ts:
            await self._edit(share, share.progress_ts, shown)
        else:
            share.progress_ts = await self._post(share, shown)
            if share.progress_ts is None:  # Slack refused the thread: nothing can be shown, so nothing is judged
                await self.bot.db(move_share, self.bot.store, share.id, state="refused", owner=None,
                                  note="the progress message could not be posted")
                return
        await self.bot.db(move_share, self.bot.store, share.id, state="loading", progress_ts=share.progress_ts,
                          rubric_name=rubric.name, model_name=model)
        origin = Origin(source=FILE_SOURCE, team_id=share.team_id, channel_id=share.channel_id,
                        thread_ts=share.thread_ts, user_id=share.user_id)
        run = await asyncio.to_thread(start_csv_run, self.bot.store, rubric, source, judge_model=self.bot.judge.model,
                                      model_name=model, origin=origin)
        await self.bot.db(move_share, self.bot.store, share.id, state="running", run_id=run.id)
        share.run_id, share.state = run.id, "running"
        await self.judge(share, run, rubric)

    # -- judging --------------------------------------------------------------------------------------------

    async def judge(self, share: SharedFile, run: Run, rubric: Rubric) -> None:
        """Judge the run's pending rows with a moving progress message; then pause, or summarise."""
        if run.id in self.active:
            return  # this process judges it already
        active = self.active[run.id] = _Active()  # type: ignore[index]
        assert share.progress_ts is not None
        shown = ProgressMessage(self.bot.client, share.channel_id, share.progress_ts,
                                lambda event: run_cards.progress(run, rubric.title, event, share.user_id),
                                every=self.edit_every)
        shown.start()
        started = time.monotonic()
        try:
            outcome = await execute_run(self.bot.store, run, rubric, self.bot.judge, concurrency=self.limits.concurrency,
                                        on_progress=shown.update, cancel=active.cancel, statuses=RESUMABLE)
        except RunBusy:
            await shown.close()
            raise
        except (RubricChanged, RunNotResumable) as err:
            await shown.close(run_cards.failed(share.file_name, str(err)))
            await self.bot.db(move_share, self.bot.store, share.id, state="refused", owner=None, note=str(err))
            return
        except asyncio.CancelledError:
            await self._interrupted(share, run, rubric, shown)
            raise
        except Exception:  # the run is saved: it can go on, so it is paused with Resume rather than lost
            log.exception("judging run %s failed", run.id)
            await self._pause(share, run, rubric, shown, OUR_FAULT)
            return
        finally:
            self.active.pop(run.id, None)  # type: ignore[arg-type]
        try:
            current = await self.bot.db(self.bot.store.get_run, run.id)
            if current is not None and current.owner not in (None, process_name()):
                await shown.close()  # another process took the run over; it goes on there
                return
            if outcome.status == "paused":
                await self._pause(share, run, rubric, shown, outcome.stop_reason or "stopped")
                return
            await shown.close()
            await self.finish(share, rubric, seconds=time.monotonic() - started, cancelled_by=active.cancelled_by,
                              shown=shown)
        except asyncio.CancelledError:
            await self._let_go(share)
            raise

    def edit_every(self) -> float:
        """Seconds between edits of one progress message: Slack allows about 50 edits a minute per workspace."""
        return max(EDIT_EVERY, len(self.active) * 60 / EDITS_PER_MINUTE)

    async def _pause(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage, reason: str) -> None:
        counts = await self.bot.db(self.bot.store.status_counts, run.id)
        total = sum(n for status, n in counts.items() if status != "malformed")
        await self.bot.db(move_share, self.bot.store, share.id, state="paused", owner=None, note=reason)
        await shown.close(run_cards.paused(run, rubric.title, total - counts.get("pending", 0), total, reason))

    async def _let_go(self, share: SharedFile) -> None:
        """Let go of a file at a stop, so that the next start (of this very process, too) takes it up."""
        try:
            await asyncio.wait_for(self.bot.db(move_share, self.bot.store, share.id, owner=None), SAY_LATER)
        except Exception:
            log.warning("could not let go of shared file %s", share.id)

    async def _interrupted(self, share: SharedFile, run: Run, rubric: Rubric, shown: ProgressMessage) -> None:
        await self._let_go(share)
        done = shown.latest.done if shown.latest else 0
        total = shown.latest.total if shown.latest else run.total_rows
        try:
            await asyncio.wait_for(shown.close(run_cards.interrupted(run, rubric.title, done, total)), SAY_LATER)
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

    # -- the end of a run -----------------------------------------------------------------------------------

    async def finish(self, share: SharedFile, rubric: Rubric, *, seconds: float | None = None,
                     cancelled_by: str | None = None, claimed: bool = False, recovering: bool = False,
                     shown: ProgressMessage | None = None) -> None:
        """Post the summary card once, upload results and chart once, and show the end in the progress message.

        `claimed`: the caller moved the share to "finishing" already; `recovering`: an earlier process may
        have posted part of it, so the thread is looked at first.
        """
        if not claimed and not await self.bot.db(move_share, self.bot.store, share.id,
                                                 expect=("running", "paused"), state="finishing",
                                                 owner=process_name()):
            return  # finished already, or by another process
        try:
            await self._finish(share, rubric, seconds, cancelled_by, recovering, shown)
        except asyncio.CancelledError:
            await self._let_go(share)
            raise
        except Exception as err:
            log.exception("finishing the run of shared file %s failed", share.id)
            await self.bot.db(move_share, self.bot.store, share.id, state="failed", owner=None, note=str(err))
            await self._say(share, f":warning: Every row of *{escape(share.file_name)}* is judged and saved, but "
                                   f"the summary could not be posted. `judgebot resume {share.run_id}` writes the "
                                   "results file; `/judge stats` has the figures.")

    async def _finish(self, share: SharedFile, rubric: Rubric, seconds: float | None, cancelled_by: str | None,
                      recovering: bool, shown: ProgressMessage | None) -> None:
        share = await self.bot.db(get_share, self.bot.store, share.id)
        run = await self.bot.db(self.bot.store.get_run, share.run_id)
        with tempfile.TemporaryDirectory(prefix="judgebot-") as folder:
            results = Path(folder) / _results_name(run)
            summary = await asyncio.to_thread(export_run, self.bot.store, run, rubric, results)
            if share.summary_ts is None:
                ts = await self._posted_summary(share, run) if recovering else None
                ts = ts or await self._post(share, run_cards.summary_card(run, rubric, summary, results.name),
                                            metadata={"event_type": SUMMARY_EVENT,
                                                      "event_payload": {"run_id": run.id}})
                if ts is None:
                    raise RuntimeError("Slack refused the summary card")
                await self.bot.db(move_share, self.bot.store, share.id, summary_ts=ts)
            if not share.results_posted:
                if not (recovering and await self._posted_files(share, results.name)):
                    await self._upload(share, run, rubric, summary, results)
                await self.bot.db(move_share, self.bot.store, share.id, results_posted=True)
        if share.progress_ts:
            end = run_cards.finished(run, rubric.title, summary, seconds, cancelled_by)
            if shown is not None:
                await shown.close(end)  # the same message: the spacing of its edits holds for the last one too
            else:
                await self._edit(share, share.progress_ts, end)
        await self.bot.db(move_share, self.bot.store, share.id, state="done", owner=None)

    async def _upload(self, share: SharedFile, run: Run, rubric: Rubric, summary: Summary, results: Path) -> None:
        files = [(results.name, f"Results of {run.source_name} ({rubric.name})", results.read_bytes())]
        if summary.scored:
            title = f"{rubric.name} · {run.source_name} · {summary.scored:,} scored rows"
            chart = await asyncio.to_thread(
                score_distribution_png, title, BANDS,
                {name: (figures.bands, figures.errors) for name, figures in summary.models.items()})
            files.append((_chart_name(run), "Score distribution per model", chart))
        try:
            await upload(self.bot.client, channel=share.channel_id, thread_ts=share.thread_ts,
                         comment=f"Every row of *{run.source_name}* with its verdict, and the scores per model.",
                         files=files)
        except Exception as err:
            log.warning("could not upload the results of run %s: %s", run.id, slack_error(err))
            await self._say(share, f":warning: The results file could not be uploaded (`{slack_error(err)}`). Every "
                                   f"verdict is saved: `judgebot resume {run.id}` writes them to a file.")

    async def _thread(self, share: SharedFile) -> list[dict[str, Any]]:
        """The messages of the share's thread (for finding what an earlier, interrupted life posted)."""
        found: list[dict[str, Any]] = []
        try:
            async for page in await self.bot.client.conversations_replies(
                    channel=share.channel_id, ts=share.thread_ts, include_all_metadata=True, limit=200):
                found.extend(page.get("messages") or [])
        except Exception as err:
            log.warning("could not read the thread %s in %s: %s", share.thread_ts, share.channel_id, slack_error(err))
        return found

    async def _posted_summary(self, share: SharedFile, run: Run) -> str | None:
        for item in await self._thread(share):
            meta = item.get("metadata") or {}
            if meta.get("event_type") == SUMMARY_EVENT and (meta.get("event_payload") or {}).get("run_id") == run.id:
                return str(item["ts"])
        return None

    async def _posted_files(self, share: SharedFile, name: str) -> bool:
        return any(f.get("name") == name for item in await self._thread(share) for f in item.get("files") or [])

    # -- restarts -------------------------------------------------------------------------------------------

    def recover(self, shares: list[SharedFile]) -> None:
        """Take up the files a stopped or crashed process left half way, in the background, then keep watching."""
        for share in shares:
            self.spawn(self._recover(share), f"taking up shared file {share.id}")
        self.spawn(self._watch(), "watching for left-over shared files")

    async def _watch(self) -> None:
        """Now and then, take up files whose process went away meanwhile (another bot process that stopped)."""
        while True:
            await asyncio.sleep(WATCH_EVERY)
            try:
                shares = await self.bot.db(unfinished_shares, self.bot.store)
            except Exception:
                log.warning("could not list the unfinished shared files", exc_info=True)
                continue
            for share in shares:
                if share.run_id not in self.active and share.owner != process_name():
                    self.spawn(self._recover(share), f"taking up shared file {share.id}")

    async def _recover(self, share: SharedFile) -> None:
        if not await self.bot.db(take_share, self.bot.store, share, stale_after=STALE_AFTER):
            return
        if share.state in ("received", "loading"):
            await self.begin(share, rubric_name=share.rubric_name, confirmed=share.state == "loading")
            return
        run = await self.bot.db(self.bot.store.get_run, share.run_id)
        rubric = self.bot.rubric_of(run) if run is not None else None
        if run is None or rubric is None:
            await self._refuse(share, "its rubric changed while the bot was stopped. Share the file again to judge "
                                      "it with the current rubric.")
            return
        if share.state == "finishing" or run.status in ("done", "cancelled"):  # judged: only the end is missing
            await self.bot.db(move_share, self.bot.store, share.id, state="finishing")
            await self.finish(share, rubric, claimed=True, recovering=True)
            return
        for attempt in range(2):
            try:
                await self.judge(share, run, rubric)
                return
            except RunBusy:
                if attempt == 0:
                    await asyncio.sleep(STALE_AFTER + 5)  # held by another host: take it once it has gone quiet
                current = await self.bot.db(self.bot.store.get_run, run.id)
                if current is None or current.status not in RESUMABLE:
                    return

    # -- talking in the thread ------------------------------------------------------------------------------

    async def _post(self, share: SharedFile, shown: dict[str, Any], **extra: Any) -> str | None:
        try:
            sent = await self.bot.client.chat_postMessage(channel=share.channel_id, thread_ts=share.thread_ts,
                                                          **shown, **extra)
        except Exception as err:
            log.warning("could not post in the thread of file %s: %s", share.file_id, slack_error(err))
            return None
        return str(sent["ts"])

    async def _edit(self, share: SharedFile, ts: str, shown: dict[str, Any]) -> None:
        try:
            await self.bot.client.chat_update(channel=share.channel_id, ts=ts, **shown)
        except Exception as err:
            log.warning("could not update message %s in %s: %s", ts, share.channel_id, slack_error(err))

    async def _say(self, share: SharedFile, text: str) -> None:
        await self._post(share, run_cards.answered(text))

    async def _ask(self, share: SharedFile, state: str, question: dict[str, Any]) -> None:
        ts = await self._post(share, question)
        if ts is None:
            await self.bot.db(move_share, self.bot.store, share.id, state="refused", owner=None,
                              note="the question could not be posted")
            return
        await self.bot.db(move_share, self.bot.store, share.id, state=state, question_ts=ts, owner=None)

    async def _refuse(self, share: SharedFile, problem: str) -> None:
        shown = run_cards.failed(share.file_name, problem)
        if share.progress_ts:
            await self._edit(share, share.progress_ts, shown)
        else:
            await self._post(share, shown)
        await self.bot.db(move_share, self.bot.store, share.id, state="refused", owner=None, note=problem)

