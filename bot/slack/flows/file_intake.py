"""A CSV shared in Slack, from the share to the start of its run: claimed once, fetched safely, checked, and asked
about (which rubric? run it again?) when the message does not say."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

from bot.csvfiles.columns import choose_columns
from bot.csvfiles.folders import work_folder
from bot.csvfiles.reading import holds_pairs, open_csv
from bot.csvfiles.rows import CsvSource
from bot.errors import CommandError, CsvError, FileProblem
from bot.records import ShareState
from bot.rubric import Rubric, RubricSet
from bot.slack.commands.shared_file import parse_share_text
from bot.slack.context import Context
from bot.slack.files import Downloaded, download, is_table, megabytes, safe_name
from bot.slack.flows import share_thread
from bot.slack.flows.file_run import FileLimits, FileRuns
from bot.slack.messenger import slack_error
from bot.slack.text import clean, escape, unescape
from bot.slack.views import file_run as view
from bot.store import (
    SharedFile,
    claim_share,
    default_rubric,
    default_samples,
    earlier_share,
    earlier_unread,
    move_share,
    process_name,
    thread_rubric,
    update_share,
)

log = logging.getLogger(__name__)

EARLIER_FETCH_WAIT = 10.0  # seconds a share waits for an earlier one in its thread to be fetched
COLUMN_LINE = re.compile(r"^\s*(question|reference|answer|model|context)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
PROSE_WORDS = 4  # a column's name has at most this many words; a longer value is a sentence of the message
CHOOSE_IN_MESSAGE = "a line `{role}: {column}` in the message you share the file with (share it again)"


def near_miss_text(role: str, header: str) -> str:
    """What to say of a model column the file nearly names (`header`, untrusted): its cells are not read."""
    name = role.replace("_", " ")
    return (f":warning: No {name} column: did you mean *{escape(header)}*? Its cells are not read as the model under "
            f"test; to read them, share the file again with a line `{role}: {escape(header)}` in the message.")


class FileIntake:
    """Takes files shared in Slack up to the start of their run, which `runs` then judges."""

    def __init__(self, ctx: Context, limits: FileLimits, runs: FileRuns) -> None:
        self.ctx, self.limits, self.runs = ctx, limits, runs

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
                "file_name": clean(str(file.get("name") or file["id"])), "text": clean(event.get("text") or ""),
                "owner": process_name(),
            }
            table = None if file in unknown else file in tables
            self.runs.spawn(self._receive(fields, table=table, mentioned=mentioned), f"file {file['id']} shared")

    async def _receive(self, fields: dict[str, Any], *, table: bool | None, mentioned: bool) -> None:
        if table is None:  # find out what it is before anything is recorded
            try:
                info = (await self.ctx.client.files_info(file=fields["file_id"]))["file"]
            except Exception as err:
                log.warning("files.info of %s failed: %s", fields["file_id"], slack_error(err))
                info = {}
            table, fields["file_name"] = is_table(info), clean(str(info.get("name") or fields["file_name"]))
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
        with work_folder() as folder:
            try:
                wanted = parse_share_text(share.text, self.ctx.rubrics)
                rubric = (self.ctx.rubrics.find(rubric_name) if rubric_name
                          else await self._rubric_for(share, wanted.rubric))
                fetched = await self._fetch(share, Path(folder))
                named = rubric_name is not None or wanted.rubric is not None
                if not named and await asyncio.to_thread(holds_pairs, fetched.path, message_columns(share.text)):
                    rubric = pairwise_rubric(self.ctx.rubrics, rubric)  # two answers a row: which one is better?
                # Read as the rubric reads it (a reference column, and a cell in each row, unless it grades without
                # one; two answers a row for a pairwise rubric; a context column for one whose template holds
                # $context); a file whose rubric is still to be chosen is read again once it is.
                source = await asyncio.to_thread(self._open, fetched.path, share.file_name, share.text,
                                                 rubric is not None and rubric.uses_reference,
                                                 rubric is not None and rubric.pairwise,
                                                 rubric is not None and rubric.uses_context)
                await self.ctx.db(update_share, share_id=share.id, sha256=fetched.sha256)
                share.sha256 = fetched.sha256
            except FileProblem as problem:
                await share_thread.refuse(self.ctx, share, str(problem))
                return
            except CommandError as problem:  # its text is mrkdwn already
                await share_thread.refuse(self.ctx, share, unescape(str(problem)))
                return
            if not confirmed:
                earlier = await self._earlier(share)
                if earlier is not None:
                    await self._ask(share, ShareState.CONFIRM,
                                    view.again_question(share.id, share.file_name, earlier.run_id))
                    return
            if rubric is None:
                await self._ask(share, ShareState.ASKING,
                                view.rubric_question(share.id, share.file_name, self.ctx.rubrics))
                return
            samples = wanted.samples or await self.ctx.db(default_samples, team_id=share.team_id,
                                                          channel_id=share.channel_id) or rubric.samples
            for role, header in source.near_misses.items():  # a typo in a model column's name: its cells go unread
                await share_thread.say(self.ctx, share, near_miss_text(role, header))
            await self.runs.start(share, rubric, source, None if "model" in source.chosen else wanted.model, samples)

    async def _earlier(self, share: SharedFile) -> SharedFile | None:
        """An earlier share of the same file in the thread. One shared at the same moment may still be fetching
        its bytes: it is waited for (a few seconds at most), so that the same file shared twice is judged once."""
        deadline = asyncio.get_running_loop().time() + EARLIER_FETCH_WAIT
        while (earlier := await self.ctx.db(earlier_share, share=share)) is None:
            if asyncio.get_running_loop().time() > deadline:
                return None
            if not await self.ctx.db(earlier_unread, share=share):
                # Read meanwhile: its bytes became known between the two looks, so look once more.
                return await self.ctx.db(earlier_share, share=share)
            await asyncio.sleep(0.1)
        return earlier

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

    def _open(self, path: Path, name: str, text: str, reference: bool = False, pairs: bool = False,
              context: bool = False) -> CsvSource:
        """Open the CSV with the columns the message names, and count its rows (malformed ones too), within the row
        limit; with `reference`, for a rubric that grades against a reference (a column of it needed, and a cell
        in each row); with `pairs`, for a pairwise rubric (answer_a and answer_b); with `context`, for a rubric that
        reads the retrieved passages (a context column needed: each row's cell is read as its passages)."""
        columns = message_columns(text)
        if not context:  # a rubric that reads no passages: a `context:` line names a column like any other
            columns.pop("context", None)
        try:
            source = open_csv(path, columns, how=CHOOSE_IN_MESSAGE, model_or_name=True, reference=reference,
                              pairs=pairs, context=context)
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
        return source

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

    async def _ask(self, share: SharedFile, state: ShareState, question: dict[str, Any]) -> None:
        # Asking before the question is posted: a click on its buttons, however quick, finds the share waiting for it.
        await self.ctx.db(move_share, share_id=share.id, to=state, owner=None)
        sent = await share_thread.post(self.ctx, share, question, what="a question")
        if sent.ts is None:
            await self.ctx.db(move_share, share_id=share.id, to=ShareState.REFUSED, expect=(state,), owner=None,
                              note="the question could not be posted")
            return
        await self.ctx.db(update_share, share_id=share.id, question_ts=sent.ts)


def pairwise_rubric(rubrics: RubricSet, chosen: Rubric | None) -> Rubric | None:
    """The rubric a file of pairs is judged with when the message names none: the thread's or the channel's when it
    is pairwise, else the one called pairwise, else the first pairwise rubric (None without any: the person is
    asked)."""
    if chosen is not None and chosen.pairwise:
        return chosen
    pairwise = [rubric for rubric in rubrics if rubric.pairwise]
    return next((rubric for rubric in pairwise if rubric.name == "pairwise"), pairwise[0] if pairwise else None)


def message_columns(text: str) -> dict[str, str]:
    """The column of each role a line such as `answer: model_response` of the message names; a `model:` line may
    name the model under test instead (open_csv tells them apart)."""
    pairs = [(role, column.strip("`*\"“”'")) for role, column in COLUMN_LINE.findall(unescape(text or ""))]
    return choose_columns((role, column) for role, column in pairs if names_a_column(column))


def names_a_column(value: str) -> bool:
    """Whether the value of a `role: value` line reads as a column's name, not a sentence ("Question: is this right?")."""
    return len(value.split()) <= PROSE_WORDS and not value.endswith(("?", "!", "."))
