"""What every listener and flow shares: the history, the rubrics, the judge, the workspace's messenger, the tasks."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, TypeVar

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import SetupError
from bot.judge.lifetime import JudgeWatch
from bot.judge.panel import Bench, Panel
from bot.llm.client import JudgeClient
from bot.rubric import Rubric, RubricSet, rubric_from_text
from bot.runs import Engine
from bot.runs.ending import Ending
from bot.slack.installed import bot_of
from bot.slack.messenger import Messenger, make_web_client
from bot.store import (
    Judgment,
    RubricRevision,
    Run,
    Store,
    earlier_hashes,
    judge_of_channel,
    month_spent,
    org_of,
    revision_in_force,
)

log = logging.getLogger(__name__)

ACK_HEADROOM = 0.03  # seconds between an ack and the start of the work it promised
SAY_LATER = 5.0  # seconds a message may take while the bot shuts down

P = ParamSpec("P")
T = TypeVar("T")


class Supervisor:
    """Every task the bot runs in the background: started after an ack, drained or interrupted at a stop.

    A failure is logged with what the task was; `on_failure(error)` then tells the person (never a traceback).
    Interruptible tasks (file runs) are cancelled at a stop, and go on from the history after the restart;
    the others (a card being judged, a digest being posted) may finish while the bot drains.
    """

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()  # what a stop waits for
        self.interruptible: set[asyncio.Task[Any]] = set()  # what a stop cancels

    def __len__(self) -> int:
        """How many tasks a stop would wait for."""
        return len(self.tasks)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str, *, interruptible: bool = False,
              on_failure: Callable[[BaseException], Coroutine[Any, Any, Any]] | None = None) -> None:
        """Run `work` in the background, after the acks of a burst of requests have gone out."""
        task = asyncio.create_task(self._after_acks(work), name=what)
        (self.interruptible if interruptible else self.tasks).add(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self.tasks.discard(done)
            self.interruptible.discard(done)
            if done.cancelled() or done.exception() is None:
                return
            failure = done.exception()
            log.error("%s failed", what, exc_info=failure)
            if on_failure is not None and failure is not None:
                self.spawn(on_failure(failure), f"telling about {what}")

        task.add_done_callback(finished)

    @staticmethod
    async def _after_acks(work: Coroutine[Any, Any, T]) -> T:
        # bolt sends an ack's HTTP answer up to 10 ms after ack() (it polls); work that starts a little later
        # leaves the event loop to the acks of a burst of commands first (measured: bench/bench_slack_ack.py).
        try:
            await asyncio.sleep(ACK_HEADROOM)
        except asyncio.CancelledError:
            work.close()  # stopped before it began
            raise
        return await work

    async def interrupt(self) -> None:
        """Cancel the interruptible tasks now (each says so where it talks), and wait for them a moment."""
        tasks = set(self.interruptible)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SAY_LATER * 2)

    async def drain(self, timeout: float) -> None:
        """Let running work finish for up to `timeout` seconds, then cancel what is left and wait for it."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.tasks:  # work spawned meanwhile (a message about a failure) is waited for too
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            await asyncio.wait(set(self.tasks), timeout=left)
        late = set(self.tasks)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=SAY_LATER + 1)


class NotInstalled(SetupError):
    """Work for a workspace that has no installation (any more): the app was uninstalled there, or never installed."""


@dataclass(frozen=True)
class Workspace:
    """A workspace the bot acts for: its id, its bot user, its URL (for links), and a messenger with its bot token."""

    say: Messenger
    team_id: str | None = None
    bot_user_id: str | None = None
    team_url: str | None = None


# The workspace of the request being answered (set by bot.slack.oauth's middleware) or of the background work being
# done (Context.acting_for). Tasks spawned meanwhile inherit it: asyncio copies the context into each new task.
# Unset (one workspace, SLACK_BOT_TOKEN): the context's own workspace.
_ACTING: ContextVar[Workspace | None] = ContextVar("judgebot_workspace", default=None)


@dataclass
class Context:
    """The bot's shared parts; built once in `serve`, handed to every listener and flow.

    `say`, `client`, `team_id`, `bot_user_id` and `team_url` are those of the workspace acted for: with one
    SLACK_BOT_TOKEN always `home`; with the OAuth install, the request's workspace (its bot token found in the
    installation store by bolt), or the one named by `acting_for` in work no request started.
    """

    store: Store
    rubrics: RubricSet
    bench: Bench  # the judge, and the jury of JUDGES or JUDGES_FILE
    home: Workspace  # one token: the workspace the bot is installed in; OAuth: none (a client without a token)
    installations: AsyncInstallationStore | None = None  # OAuth: the workspaces' bot tokens
    pinned: Workspace | None = None  # a copy speaking through its own messenger (`speaking_through`)
    review_sample_rate: float = 0.05  # REVIEW_SAMPLE_RATE: the share of a file's rows sent to review at random
    view_url: str | None = None  # VIEW_URL: where people open the web view ("Open in judgebot" links); None: no links
    watch: JudgeWatch = field(default_factory=JudgeWatch)  # the configured judges and their shutdown dates
    revisions: dict[str, Rubric] = field(default_factory=dict)  # channels' revisions of rubrics, by hash
    tasks: Supervisor = field(default_factory=Supervisor)
    _locks: dict[int, tuple[asyncio.Lock, list[int]]] = field(default_factory=dict)
    _team_urls: dict[str | None, str | None] = field(default_factory=dict)  # OAuth: each workspace's URL, once learned

    @property
    def judge(self) -> JudgeClient:
        """The configured judge (JUDGE_MODEL), for one judgment at a time."""
        return self.bench.judge

    @property
    def engine(self) -> Engine:
        """The engine every request is judged through, over this history, with the bot's share of rows sent to
        review and its watch over the judges' shutdowns."""
        return Engine(self.store, unsure_spread=self.bench.unsure_spread,
                      ending=Ending(self.review_sample_rate, self.watch))

    def panel_of(self, run: Run) -> Panel:
        """The judges a run was started with, over the bot's connections (SetupError: one is not configured now)."""
        return self.bench.panel_for(judge_model=run.judge_model, samples=run.samples, judges=run.judges,
                                    temperature=run.temperature)

    async def judge_warnings(self, team_id: str | None, channel_id: str | None) -> list[str]:
        """What to say of the judge of a channel (its own, else the configured ones) when its shutdown is near."""
        own = await self.db(judge_of_channel, team_id=team_id, channel_id=channel_id)
        return self.watch.warnings(own, slack=True)

    @property
    def workspace(self) -> Workspace:
        """The workspace acted for now."""
        return self.pinned or _ACTING.get() or self.home

    def speaking_through(self, say: Messenger) -> Context:
        """A copy of the context (the same history, judge and tasks) whose messages go through `say`, for the
        workspace acted for now."""
        return dataclasses.replace(self, pinned=dataclasses.replace(self.workspace, say=say))

    @property
    def say(self) -> Messenger:
        """The messenger of the workspace acted for."""
        return self.workspace.say

    @property
    def client(self) -> AsyncWebClient:
        """The Web API client (for calls that are not messages: files, views, users, history)."""
        return self.workspace.say.client

    @property
    def team_id(self) -> str | None:
        """The workspace acted for: the only one whose requests and history this request or work may touch."""
        return self.workspace.team_id

    @property
    def bot_user_id(self) -> str | None:
        """The bot's user in the workspace acted for."""
        return self.workspace.bot_user_id

    @property
    def team_url(self) -> str | None:
        """The URL of the workspace acted for, for links to messages (None: no links)."""
        return self.workspace.team_url

    @staticmethod
    def answer_for(workspace: Workspace) -> None:
        """Act for `workspace` for the rest of the request being answered (and the tasks it starts)."""
        _ACTING.set(workspace)

    @asynccontextmanager
    async def acting_for(self, team_id: str | None) -> AsyncIterator[Workspace]:
        """Act for workspace `team_id` inside the block (work no request started: a digest, a nudge, a recovery).

        With one SLACK_BOT_TOKEN nothing changes. With the OAuth install the workspace's bot token comes from the
        installation store (its own install's, or its organisation's org-wide install's); NotInstalled when it has
        none (uninstalled).
        """
        if self.installations is None:
            yield self.workspace
            return
        # an Enterprise Grid org-wide install serves a workspace of its organisation (as the workspace's requests said)
        org = await self.db(org_of, team_id) if team_id else None
        bot = await bot_of(self.installations, team_id, org)
        if bot is None:
            raise NotInstalled(f"judgebot is not installed in workspace {team_id} (any more)")
        base = self.home.say.client
        say = Messenger(make_web_client(bot.bot_token, base.base_url))
        if team_id not in self._team_urls:  # for links to messages: asked once per workspace
            try:
                self._team_urls[team_id] = (await say.client.auth_test()).get("url")
            except Exception as err:
                log.info("could not learn the URL of workspace %s: %s", team_id, type(err).__name__)
        workspace = Workspace(say, team_id=team_id, bot_user_id=bot.bot_user_id, team_url=self._team_urls.get(team_id))
        token = _ACTING.set(workspace)
        try:
            yield workspace
        finally:
            _ACTING.reset(token)

    async def db(self, function: Callable[Concatenate[Store, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(store, ...)` off the event loop, so a busy database never delays an ack.

        Any data function (its arguments by name) or Store method fits: `await ctx.db(get_share, share_id=share_id)`,
        `await ctx.db(get_run, run_id)`.
        """
        return await asyncio.to_thread(function, self.store, *args, **kwargs)

    def rubric_of(self, made: Judgment | Run) -> Rubric | None:
        """The rubric a judgment or run was made with, if that very version is still loaded (a file's, or a channel's
        revision of it)."""
        return self.rubrics.exact(made.rubric_name, made.rubric_hash) or self.revisions.get(made.rubric_hash)

    def know_revision(self, revision: RubricRevision) -> Rubric | None:
        """A channel's revision of a rubric as a rubric, remembered by its hash (and by the hashes it had before
        retention took old cases' examples out of it, so that judgments made with it still find it); None (logged)
        if it no longer reads as one."""
        if (known := self.revisions.get(revision.content_hash)) is not None:
            return known
        try:
            rubric = rubric_from_text(revision.content)
        except Exception:
            log.warning("revision %s of %s does not read as a rubric", revision.id, revision.rubric_name, exc_info=True)
            return None
        for content_hash in (*earlier_hashes(revision), rubric.content_hash):
            self.revisions[content_hash] = rubric
        return rubric

    async def month_spent(self, channel_id: str | None) -> float:
        """USD a channel spent this month: its runs, and the checks, alignments and comparisons it asked for."""
        return await self.db(month_spent, channel_id)

    async def rubric_in(self, rubric: Rubric, team_id: str | None, channel_id: str | None) -> Rubric:
        """The rubric a channel judges with: its accepted revision of `rubric` when it has one made from this very
        file, else the file's."""
        revision = await self.db(revision_in_force, team_id=team_id, channel_id=channel_id, rubric_name=rubric.name)
        if revision is None or revision.based_on != rubric.content_hash:
            return rubric
        return self.know_revision(revision) or rubric

    @asynccontextmanager
    async def one_at_a_time(self, key: int) -> AsyncIterator[None]:
        """Serialise work on one thing (the votes on one card), so that what is written last is the newest."""
        lock, users = self._locks.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

