"""The app's Messages tab as an AI app: a person grades, asks for stats or help, or drops a CSV, in a direct conversation."""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from datetime import timedelta
from typing import Any

from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import CommandError, RubricError
from bot.rubric import RubricSet
from bot.runs import Origin
from bot.slack.commands.parsing import SEPARATOR, Help, Inline, ListRubrics, Stats, parse_command
from bot.slack.context import Context
from bot.slack.files import is_table
from bot.slack.flows.card import CARD_SOURCE, show_judgment
from bot.slack.listeners.clicks import OTHER_WORKSPACE
from bot.slack.listeners.file import FileListener
from bot.slack.messenger import Messenger, Sent, failure_text, slack_error
from bot.slack.text import clean, escape, unescape
from bot.slack.views.blocks import context, listing, message, section, text_sections
from bot.slack.views.commands import rubric_lines, rubrics_message, stats_message
from bot.store import channel_stats, remembered_model, utcnow

log = logging.getLogger(__name__)

# What a new thread offers (Slack shows up to four); a prompt, clicked, is sent as the person's message.
PROMPTS = (
    {"title": "Grade an answer", "message": "grade"},
    {"title": "My stats here", "message": "stats"},
    {"title": "Grade a CSV file", "message": "csv"},
    {"title": "What can you do?", "message": "help"},
)
PROMPTS_TITLE = "Grade an answer against a reference with a rubric:"
EXAMPLE = f"eth: How do I register for exams? {SEPARATOR} In myStudies. {SEPARATOR} Use myStudies."
FORMAT = (f"To grade an answer here, write a rubric, a colon, then the question, the reference answer and the answer "
          f"separated by `{SEPARATOR}`, for example `{EXAMPLE}`. `help` says what else I do here, `rubrics` lists "
          "the rubrics.")
CSV_HOW = ("Drop a CSV or TSV file here with a header row naming the columns `question`, `reference` and `answer` "
           "(and `model` if you like), and the rubric in the message, such as `eth`: I grade every row and answer "
           "in the file's thread with a summary and a results file.")
HERE_ONLY = ("What you grade here stays in this conversation: stats here count only it, and no channel's "
             "`/judge stats` or history shows it.")
RUBRIC_LINE = re.compile(r"^\s*([A-Za-z0-9][\w.-]*)\s*:\s*(.*)$", re.DOTALL)
GREETINGS = {"", "help", "?", "hi", "hello", "hey"}
SEEN = 1000  # messages remembered, so that Slack's retry of an event is not graded twice


def help_message(rubrics: RubricSet) -> dict[str, Any]:
    """What the app does in its Messages tab, with the rubrics it knows."""
    usage = "\n".join((
        "*judgebot* grades an answer against a reference answer with a rubric, here in our conversation:",
        f"• `rubric: question {SEPARATOR} reference answer {SEPARATOR} answer` grades one answer, for example "
        f"`{EXAMPLE}` (`eth: samples=3 ...` judges it three times)",
        "• `stats` (or `stats 30d`, `stats 30d <model>`): the figures of what you graded here",
        "• a CSV file dropped here, with the rubric in the message: every row graded",
        "• `rubrics`: the rubrics and what they grade",
    ))
    entries = text_sections(rubric_lines(rubrics), "*Rubrics*")
    blocks = listing([section(usage)], entries, more="_…and more rubrics: `rubrics` lists them._")
    blocks.append(context(HERE_ONLY))
    return message(blocks, "judgebot: what I do in this conversation")


Request = Help | ListRubrics | Stats | Inline


def read_line(text: str, rubrics: RubricSet) -> Request | str:
    """What a line written to the app asks for; a sentence (mrkdwn, escaped) when it is not something it does here."""
    plain = clean(unescape(text)).strip()
    word = plain.split(None, 1)[0].lower() if plain else ""
    if word in GREETINGS:
        return Help()
    if word == "grade" and plain.lower() == "grade":
        return FORMAT
    if word in ("csv", "file", "tsv") and " " not in plain:
        return CSV_HOW
    if word in ("stats", "rubrics"):
        try:
            parsed = parse_command(text, rubrics)
        except CommandError as err:  # its text is mrkdwn already
            return str(err)
        return parsed if isinstance(parsed, Stats | ListRubrics) else FORMAT
    found = RUBRIC_LINE.match(text)
    if found is None:
        return FORMAT
    try:
        rubric = rubrics.get(found.group(1))
    except RubricError as err:
        return f"{escape(str(err))} {FORMAT}"
    parts = [part.strip() for part in found.group(2).split(SEPARATOR)]
    if len(parts) != 3 or not all(parts):
        return f"I found {len([p for p in parts if p])} non-empty part(s) after `{escape(rubric.name)}:`. {FORMAT}"
    try:
        parsed = parse_command(f"{rubric.name} {found.group(2)}", rubrics)
    except CommandError as err:  # such as samples=N out of bounds; its text is mrkdwn already
        return f"{err} {FORMAT}"
    return parsed if isinstance(parsed, Inline) else FORMAT


class ThreadReplies(Messenger):
    """The messenger of one thread of a direct conversation with the app.

    Events carry no response_url, so what the card flow says to the person alone is posted in the thread, which only
    they see. Slack clears a thread's status whenever the app posts there, and the card flow posts its placeholder
    first: while `status` is set it is shown again after each post, so it stays up while the judge works.
    """

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str, set_status: AsyncSetStatus | None) -> None:
        super().__init__(client)
        self.channel, self.thread_ts, self._set_status = channel, thread_ts, set_status
        self.status: str | None = None

    async def post(self, channel: str, message: dict[str, Any], *, what: str, thread_ts: str | None = None,
                   **extra: Any) -> Sent:
        sent = await super().post(channel, message, what=what, thread_ts=thread_ts, **extra)
        if sent.ok and self.status and channel == self.channel:
            await self.show(self.status)
        return sent

    async def reply(self, response_url: str | None, message: dict[str, Any]) -> None:
        if response_url:
            await super().reply(response_url, message)
            return
        kept = {key: value for key, value in message.items() if key in ("text", "blocks")}
        await self.post(self.channel, kept, thread_ts=self.thread_ts, what="a reply in a direct conversation")

    async def show(self, status: str) -> None:
        """Show `status` under the thread ("" clears it); a refusal is logged and changes nothing else."""
        if self._set_status is None:
            return
        try:
            await self._set_status(status)
        except Exception as err:
            log.info("could not set the status of thread %s in %s: %s", self.thread_ts, self.channel, slack_error(err))


class MessagesTab:
    """The listeners of the Messages tab: its threads start with suggested prompts; each line is read and answered."""

    def __init__(self, ctx: Context, files: FileListener) -> None:
        self.ctx, self.files = ctx, files
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def assistant(self) -> AsyncAssistant:
        """Bolt's Assistant middleware with our listeners; the thread context Slack sends is not kept (bolt's own
        keeping of it reads the thread's history, which Slack limits, and nothing here needs it)."""
        assistant = AsyncAssistant(logger=logging.getLogger("judgebot.bolt"))
        assistant.thread_started(self.on_thread_started)
        assistant.thread_context_changed(self.on_context_changed)
        assistant.user_message(self.on_message)
        return assistant

    @staticmethod
    async def top_level(event: dict[str, Any]) -> bool:
        """A person's message written in the direct conversation itself, not in a thread (no thread: no Assistant)."""
        return (event.get("channel_type") == "im" and not event.get("thread_ts") and event.get("subtype") is None
                and not event.get("bot_id"))

    def _ours(self, event: dict[str, Any], body: dict[str, Any]) -> bool:
        """Whether an event comes from this workspace only (the rule of clicks.from_team, for an event)."""
        named = [event.get(key) for key in ("team", "user_team", "source_team")] + [body.get("team_id")]
        teams = {str(team) for team in named if team}
        if self.ctx.team_id and teams == {self.ctx.team_id}:
            return True
        log.warning("%s of user %s refused in %s: team(s) %s", event.get("type"), event.get("user"),
                    event.get("channel"), ", ".join(sorted(teams)) or "none")
        return False

    async def on_thread_started(self, event: dict[str, Any], body: dict[str, Any],
                                set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        """A person opened a thread with the app: offer the common actions."""
        thread = event.get("assistant_thread") or {}
        if not self._ours({"type": event.get("type"), "user": thread.get("user_id"),
                           "channel": thread.get("channel_id")}, body):
            return
        try:
            await set_suggested_prompts(prompts=list(PROMPTS), title=PROMPTS_TITLE)
        except Exception as err:
            log.warning("could not offer suggested prompts in %s: %s", thread.get("channel_id"), slack_error(err))

    async def on_context_changed(self) -> None:
        """The person looks at another channel: nothing here depends on it."""

    async def on_message(self, event: dict[str, Any], body: dict[str, Any], set_status: AsyncSetStatus | None,
                         set_title: AsyncSetTitle | None) -> None:
        """A person wrote to the app (Slack has its ack): read the line, or take the file, and answer in the thread."""
        if event.get("bot_id") or (self.ctx.bot_user_id and event.get("user") == self.ctx.bot_user_id):
            return  # the app's own messages, echoed: never answered, or it would talk to itself
        channel, user, ts = str(event.get("channel") or ""), str(event.get("user") or ""), str(event.get("ts") or "")
        if not channel.startswith("D") or not user or not ts or self._again(channel, ts):
            return
        thread = str(event.get("thread_ts") or ts)
        replies = ThreadReplies(self.ctx.client, channel, thread, set_status)
        if event.get("subtype") == "file_share":
            await self._file(event, body, replies)
            return
        if not self._ours(event, body):
            await replies.tell(None, OTHER_WORKSPACE)
            return
        here = self.ctx.speaking_through(replies)
        self.ctx.tasks.spawn(self._answer(here, replies, event, body, set_title), f"a message in {channel}",
                             on_failure=lambda err: replies.tell(None, failure_text(err)))

    def _again(self, channel: str, ts: str) -> bool:
        """Whether this message was answered already (Slack sends an event again when our ack seems late)."""
        if (channel, ts) in self._seen:
            log.info("message %s in %s was answered already", ts, channel)
            return True
        self._seen[(channel, ts)] = None
        while len(self._seen) > SEEN:
            self._seen.popitem(last=False)
        return False

    async def _file(self, event: dict[str, Any], body: dict[str, Any], replies: ThreadReplies) -> None:
        """A file dropped in the conversation: a CSV or TSV goes the way of a file shared in a channel (its run, its
        buttons and its results belong to this conversation); anything else gets what the app accepts."""
        files = event.get("files") or []
        if any(is_table(f) or f.get("file_access") == "check_file_info" for f in files):
            await self.files.on_file_share(event, body)  # checks the workspace, claims each file once
        else:
            await replies.tell(None, f"I grade CSV and TSV files only. {CSV_HOW}")

    async def _answer(self, here: Context, replies: ThreadReplies, event: dict[str, Any], body: dict[str, Any],
                      set_title: AsyncSetTitle | None) -> None:
        team = str(body.get("team_id") or event.get("team") or "")
        user, channel = str(event["user"]), replies.channel
        asked = read_line(str(event.get("text") or ""), self.ctx.rubrics)
        if isinstance(asked, str):
            await replies.tell(None, asked)
        elif isinstance(asked, Help):
            await replies.reply(None, help_message(self.ctx.rubrics))
        elif isinstance(asked, ListRubrics):
            await replies.reply(None, rubrics_message(self.ctx.rubrics))
        elif isinstance(asked, Stats):
            since = utcnow() - timedelta(days=asked.days) if asked.days else None
            figures = await self.ctx.db(channel_stats, channel_id=channel, since=since, model=asked.model)
            warnings = await self.ctx.judge_warnings(team, channel)
            await replies.reply(None, stats_message(figures, channel, days=asked.days, model=asked.model,
                                                    warnings=warnings))
        else:
            await self._grade(here, replies, asked, team=team, user=user, set_title=set_title)

    async def _grade(self, here: Context, replies: ThreadReplies, asked: Inline, *, team: str, user: str,
                     set_title: AsyncSetTitle | None) -> None:
        """Judge one triple as `/judge` does, its card in this thread, while the thread's status says so."""
        try:
            model = await self.ctx.db(remembered_model, team_id=team, user_id=user)
        except Exception:
            log.warning("could not read the remembered model of %s", user, exc_info=True)
            model = None
        replies.status = f"judging with {asked.rubric.name}..."
        await replies.show(replies.status)
        if set_title is not None:  # the rubric's name only: a title is plain text, the question is untrusted
            try:
                await set_title(f"Grading with {asked.rubric.name}")
            except Exception as err:
                log.info("could not title thread %s: %s", replies.thread_ts, slack_error(err))
        origin = Origin(source=CARD_SOURCE, team_id=team, channel_id=replies.channel, thread_ts=replies.thread_ts,
                        user_id=user)
        try:
            await show_judgment(here, rubric=asked.rubric, triple=asked.triple, origin=origin, model_name=model,
                                response_url=None, samples=asked.samples)
        finally:
            replies.status = None
            await replies.show("")
