"""`judgebot serve`: check the Slack settings, then run the bot over Socket Mode or HTTP until stopped."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from bot.config import Settings
from bot.errors import SetupError
from bot.judge.lifetime import JudgeWatch
from bot.judge.panel import open_bench
from bot.rubric import load_rubrics
from bot.runs.replica_help import Assist
from bot.runs.shared_pauses import SharedPauses
from bot.runs.shutdown_reads import read_shutdowns_daily, remembered_shutdowns
from bot.slack.app import Parts, build_app
from bot.slack.context import Context, Workspace
from bot.slack.deliveries import Deliveries
from bot.slack.flows.card import CARD_SOURCE, recover_cards
from bot.slack.flows.digest_post import DigestSettings, WeeklyDigests
from bot.slack.flows.file_intake import FileIntake
from bot.slack.flows.file_recovery import recover_files
from bot.slack.flows.file_run import FileLimits, FileRuns
from bot.slack.flows.review_nudge import ReviewNudges
from bot.slack.flows.step_end import recover_steps
from bot.slack.http_mode import events_handler, install_handler
from bot.slack.mcp_identity import SlackReach
from bot.slack.messenger import BAD_BOT_TOKEN, Messenger, make_web_client, slack_call
from bot.slack.oauth import INSTALL_PATH, REDIRECT_PATH, installation_store, oauth_settings, sealing_warnings
from bot.slack.retention import DailyRetention
from bot.store import Sealer, Store, all_revisions, unfinished_runs, unfinished_shares

if TYPE_CHECKING:
    from bot.rubric import RubricSet

log = logging.getLogger(__name__)

EVENTS_PATH, HEALTH_PATH, VIEW_PATH = "/slack/events", "/health", "/view"
ViewOf = Callable[[Store, "RubricSet", SlackReach | None], web.Application]
"""The web view over the bot's history (bot.view, composed by the command line), given, with the OAuth install, how
Slack says which channels a person is in."""
DRAIN_SECONDS = 20.0
BAD_APP_TOKEN = (
    "Slack does not accept SLACK_APP_TOKEN ({error}). It is the app-level token (xapp-...) with the "
    "connections:write scope, under Basic Information > App-Level Tokens; create a new one if it was revoked, "
    "and check that Socket Mode is on (Socket Mode page)."
)


@dataclass
class RunningBot:
    """A started bot: its mode, the HTTP port (0 in Socket Mode), its workspace, and how to stop it."""

    mode: str
    port: int
    team: str
    context: Context
    files: FileRuns
    digests: WeeklyDigests
    nudges: ReviewNudges | None = None
    deliveries: Deliveries | None = None
    _runner: web.AppRunner | None = None
    _socket: AsyncSocketModeHandler | None = None
    view_at: str | None = None  # where the web view answers ("/view on port 3000", or its own URL in Socket Mode)
    _view_runner: web.AppRunner | None = None
    retention: DailyRetention | None = None  # with RETENTION_DAYS
    warnings: list[str] = field(default_factory=list)  # said once at start (a renamed setting, unencrypted tokens)

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        """Stop taking requests, let judgments in flight finish for `drain` seconds, then close everything."""
        self.digests.stop()
        if self.retention is not None:
            self.retention.stop()
        if self.nudges is not None:
            self.nudges.stop()
        if self.deliveries is not None:
            self.deliveries.stop()
        if self._socket is not None:
            await self._socket.close_async()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._view_runner is not None:
            await self._view_runner.cleanup()
        await self.context.tasks.interrupt()  # file runs go on after the restart, from where they stopped
        await self.context.tasks.drain(drain)
        await self.context.judge.aclose()
        # The history's connections stay in its pool: work already handed to a thread may still be using one, and
        # returns it there. They are closed at exit, once those threads are done (bot.store.connections.closed_at_exit).


async def start_bot(settings: Settings, *, host: str = "0.0.0.0", view: ViewOf | None = None) -> RunningBot:
    """Check the settings and tokens, open the history, and start taking Slack's requests; with `view`, serve the web
    view too: at /view in HTTP mode, on VIEW_PORT (this machine only) in Socket Mode."""
    bot_token, app_token, secret = settings.slack_tokens()
    install = settings.oauth_install()  # many workspaces: no one bot token, each found per request
    sealer = Sealer(settings.secrets_keys)  # a SECRETS_KEY that is not a key refuses the bot before anything starts
    client = make_web_client(bot_token or None, settings.slack_api_url)
    auth = {} if install else await slack_call(client.auth_test, BAD_BOT_TOKEN, settings.slack_api_url)
    if app_token:
        await slack_call(lambda: client.apps_connections_open(app_token=app_token), BAD_APP_TOKEN,
                          settings.slack_api_url)
    store = await asyncio.to_thread(Store.open, settings.db_url)
    await asyncio.to_thread(store.check_integrity)  # a damaged history refuses the bot before it takes any request
    rubrics = load_rubrics(settings.rubrics_dir)
    for broken in rubrics.broken:  # the other rubrics work: the bot starts with them
        log.warning("rubric file left out until it is fixed: %s: %s", broken.path, broken.problem)
    home = Workspace(Messenger(client), team_id=auth.get("team_id"), bot_user_id=auth.get("user_id"),
                     team_url=auth.get("url"))
    # Said once at start, in the log and in `serve`'s output: settings under their former names, unsealed tokens.
    warnings = [*settings.renamed(), *(await asyncio.to_thread(sealing_warnings, store, sealer) if install else [])]
    for warning in warnings:
        log.warning(warning)
    installations = installation_store(install[0], store, sealer) if install else None
    watch = await asyncio.to_thread(remembered_shutdowns, JudgeWatch.from_settings(settings), store)
    ctx = Context(store=store, rubrics=rubrics, bench=open_bench(settings), home=home, installations=installations,
                  review_sample_rate=settings.review_sample_rate, watch=watch,
                  view_url=settings.view_url)
    # The judges' shutdown dates as their endpoints list them, for App Home, stats and the digest: once a day.
    ctx.tasks.spawn(read_shutdowns_daily(watch, store, [ctx.bench.judge, *ctx.bench.jury]),
                    "reading the judge endpoints' shutdown dates", interruptible=True)
    for revision in await ctx.db(all_revisions):  # the rubrics judgments of the history may have been made with
        ctx.know_revision(revision)
    # Listed before any request is taken, so a judgment started from now on is never mistaken for a left-over.
    left_over = await ctx.db(unfinished_runs, source=CARD_SOURCE)
    left_files = await ctx.db(unfinished_shares)
    digest_settings = DigestSettings.from_settings(settings)
    limits = FileLimits.from_settings(settings)
    files = FileRuns(ctx, limits)
    parts = Parts(FileIntake(ctx, limits, files), files, WeeklyDigests(ctx, digest_settings), ReviewNudges(ctx),
                  Deliveries(ctx))
    oauth = None if install is None or installations is None else oauth_settings(
        client_id=install[0], client_secret=install[1], redirect_uri=settings.slack_redirect_uri, store=store,
        installations=installations)
    app = build_app(ctx, parts, signing_secret=secret, digest_settings=digest_settings,
                    form_secret=secret or app_token or "", oauth=oauth)
    reach = None if installations is None else SlackReach(secret or "", settings.slack_api_url,
                                                            installations=installations)
    view_app = None if view is None else view(store, rubrics, reach)
    if app_token:
        view_runner, view_at = None, None
        if view_app is not None and settings.view_port is not None:
            view_runner, view_port = await _serve_view_alone(view_app, settings.view_port)
            view_at = f"http://127.0.0.1:{view_port}{VIEW_PATH}/ (this machine only)"
        socket = AsyncSocketModeHandler(app, app_token)
        await socket.connect_async()
        running = RunningBot("socket", 0, str(auth.get("team")), ctx, parts.files, parts.digests, parts.nudges,
                             parts.deliveries, _socket=socket, view_at=view_at, _view_runner=view_runner)
    else:
        web_app = web.Application()
        if view_app is not None:
            _mount_view(web_app, view_app)
        web_app.router.add_post(EVENTS_PATH, events_handler(app, secret or ""))
        if oauth is not None:  # the installer's browser: not signed by Slack, the OAuth state is checked instead
            web_app.router.add_get(INSTALL_PATH, install_handler(app))
            web_app.router.add_get(REDIRECT_PATH, install_handler(app))
        web_app.router.add_get(HEALTH_PATH, _health(store))
        runner = web.AppRunner(web_app, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, settings.port).start()
        except OSError as err:
            await runner.cleanup()
            await ctx.bench.aclose()
            raise SetupError(f"Cannot listen on port {settings.port} ({err.strerror or err}). Set PORT to a free "
                             "port, or stop what uses it.") from None
        team = str(auth.get("team") or "every workspace that installs it at " + INSTALL_PATH)
        running = RunningBot("http", runner.addresses[0][1], team, ctx, parts.files, parts.digests,
                             parts.nudges, parts.deliveries, _runner=runner)
        if view_app is not None:
            running.view_at = f"{VIEW_PATH}/ on port {running.port}"
    running.warnings = warnings
    recover_cards(ctx, left_over)
    recover_steps(ctx)
    recover_files(parts.intake, left_files)
    if store.engine.dialect.name != "sqlite":  # replicas share a server database; SQLite is one process's history
        files.assist = Assist(store, rubrics, ctx.panel_of, concurrency=settings.concurrency,
                              unsure_spread=ctx.bench.unsure_spread, own=lambda: set(files.active))
        ctx.tasks.spawn(files.assist.forever(), "helping the other replicas with their runs", interruptible=True)
        ctx.tasks.spawn(SharedPauses(store).forever(), "sharing the judge endpoints' pauses", interruptible=True)
    await parts.digests.start()
    await parts.nudges.start()
    if settings.retention_days is not None:
        running.retention = DailyRetention(ctx, settings.retention_days)
        await running.retention.start()
    await parts.deliveries.start()
    return running


def _mount_view(parent: web.Application, view_app: web.Application) -> None:
    """The view's pages under VIEW_PATH of `parent` (VIEW_PATH itself leads to them)."""
    async def to_view(_request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(VIEW_PATH + "/")

    parent.router.add_get(VIEW_PATH, to_view)  # before the view's own: its prefix would take this path too
    parent.add_subapp(VIEW_PATH, view_app)


async def _serve_view_alone(view_app: web.Application, port: int) -> tuple[web.AppRunner, int]:
    """The view at http://127.0.0.1:port/view (Socket Mode has no HTTP server of its own); the runner and its port."""
    parent = web.Application()
    _mount_view(parent, view_app)
    runner = web.AppRunner(parent, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
    except OSError as err:
        await runner.cleanup()
        raise SetupError(f"Cannot serve the web view on port {port} ({err.strerror or err}). Set VIEW_PORT to a free "
                         "port, or unset it.") from None
    return runner, runner.addresses[0][1]


def _health(store: Store) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def health(_request: web.Request) -> web.Response:
        try:
            await asyncio.wait_for(asyncio.to_thread(store.ping), 5)
        except Exception as err:
            return web.json_response({"ok": False, "database": type(err).__name__}, status=503)
        return web.json_response({"ok": True})

    return health


async def serve(settings: Settings, stop: asyncio.Event, announce: Callable[[RunningBot], None], *,
                view: ViewOf | None = None) -> None:
    """Run the bot (and the web view `view`) until `stop` is set; `announce` says where it listens once it does."""
    running = await start_bot(settings, view=view)
    gc.freeze()  # everything loaded so far lives as long as the bot: keep it out of the collector's full passes
    gc.enable()  # (the command line holds the collector off while it starts)
    try:
        announce(running)
        await stop.wait()
    finally:
        await running.stop()
