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
    from bot.slack.server import RunningBot


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
        for warning in [*running.warnings, *running.context.watch.warnings()]:
            console.print(f"[yellow]warning[/]: {shown(warning)}", highlight=False)

    if workers_only:
        from bot.runs.replica_help import work_only

        console.print("judgebot judges rows of the runs the Slack replicas hold (no Slack connection). Ctrl-C stops it.")
        await work_only(settings, stop)
    else:
        await server.serve(settings, stop, announce)
    console.print("judgebot stopped.")
    return EXIT_OK
