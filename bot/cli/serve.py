"""`judgebot serve`: the Slack bot, over Socket Mode or HTTP, until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING

from bot.cli.context import Context
from bot.cli.exits import EXIT_INTERRUPTED, EXIT_OK
from bot.cli.panels import NO_ENDPOINT
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from aiohttp import web

    from bot.config import Settings
    from bot.rubric import RubricSet
    from bot.slack.mcp_identity import SlackReach
    from bot.slack.server import RunningBot, ViewOf
    from bot.store import Store


async def serve(ctx: Context) -> int:
    """Run the Slack bot (or, with --workers-only, judge for the Slack replicas) until SIGINT or SIGTERM, then let
    judgments in flight finish."""
    from bot.slack import server  # the Slack libraries load only to serve

    settings, console = ctx.settings, ctx.console
    workers_only = bool(getattr(ctx.args, "workers_only", False))
    if not workers_only:
        settings.slack_tokens()
    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    stop = asyncio.Event()

    def on_signal() -> None:
        if stop.is_set():  # a second Ctrl-C: stop now; cards still waiting are completed at the next start
            os._exit(EXIT_INTERRUPTED)
        console.print("Stopping: judgments in flight may finish (Ctrl-C again stops at once).")
        stop.set()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal)

    def announce(running: RunningBot) -> None:
        where = "Socket Mode" if running.mode == "socket" else f"HTTP mode on port {running.port} ({server.EVENTS_PATH})"
        console.print(f"judgebot is up for {shown(running.team)} in {where}. Ctrl-C stops it.")
        if running.view_at is not None:
            who = ("people sign in with Slack at " + shown(settings.view_url or "") if settings.view_sign_in()
                   else "this machine only: set VIEW_URL with the OAuth install to let people sign in with Slack")
            console.print(f"The web view: {shown(running.view_at)} ({who}).", highlight=False)
        for warning in [*running.warnings, *running.context.watch.warnings()]:
            console.print(f"[yellow]warning[/]: {shown(warning)}", highlight=False)

    if workers_only:
        from bot.runs.replica_help import work_only

        console.print("judgebot judges rows of the runs the Slack replicas hold (no Slack connection). Ctrl-C stops it.")
        await work_only(settings, stop)
    else:
        await server.serve(settings, stop, announce, view=view_of(settings))
    console.print("judgebot stopped.")
    return EXIT_OK


def view_of(settings: Settings) -> ViewOf:
    """The web view `judgebot serve` serves beside the bot: with Sign in with Slack when the OAuth install and VIEW_URL
    are set (each person sees the channels they are in), else to this machine only (every channel)."""

    def make(store: Store, rubrics: RubricSet, reach: SlackReach | None) -> web.Application:
        from bot.view import make_view_app
        from bot.view.serving import loopback_hosts

        sign_in = settings.view_sign_in()
        if sign_in is not None and reach is not None and settings.view_url:
            from bot.view.signin import SignIn

            client_id, client_secret = sign_in
            return make_view_app(settings, store, rubrics=rubrics,
                                 sign_in=SignIn(client_id, client_secret, settings.view_url, settings.slack_api_url,
                                                reach))
        return make_view_app(settings, store, rubrics=rubrics, local_only=True,
                             allowed_hosts=loopback_hosts("127.0.0.1"))

    return make
