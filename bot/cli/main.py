"""The command line: serve the Slack bot, judge a CSV or one triple, resume a run, list rubrics, runs, history,
stats and digests."""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import logging
import os
import signal
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError
from rich.console import Console

from bot.cli import views
from bot.cli.judging import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNSCORED,
    EXIT_USAGE,
    NO_ENDPOINT,
    judge_client,
    judge_command,
    resume_command,
    settled,
)
from bot.config import Settings
from bot.errors import JudgebotError, RunStopped, UsageError, WeekError

# Each command imports what it uses when it runs: `judgebot --help` must not wait for the judge's client, the
# database layer or the digest to load (see "Measured figures" in the README).
if TYPE_CHECKING:
    from bot.rubric import RubricSet
    from bot.store import Store


def _version() -> str:
    try:
        return importlib.metadata.version("judgebot")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="judgebot", description="Grade LLM answers with LLM-as-judge rubrics.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("serve", help="run the Slack bot (Socket Mode with SLACK_APP_TOKEN, else HTTP on PORT)")

    judge_cmd = commands.add_parser("judge", help="judge a CSV of question/reference/answer rows, or one triple")
    judge_cmd.add_argument("file", nargs="?", type=Path, help="CSV or TSV file with question, reference, answer")
    judge_cmd.add_argument("--rubric", required=True, help="rubric name or alias (see `judgebot rubrics`)")
    judge_cmd.add_argument("--out", type=Path, help="results CSV (default: FILE.results.csv beside the input)")
    judge_cmd.add_argument("--model-name", help="the model under test, when the CSV has no model column")
    judge_cmd.add_argument("--columns", action="append", metavar="ROLE=COLUMN",
                           help="the column of a role (question, reference, answer, model) when its header does not "
                                "say it or two headers could: answer=model_response (repeat, or separate with commas)")
    judge_cmd.add_argument("--concurrency", type=int, help="judge requests in flight (default: CONCURRENCY)")
    add_panel_options(judge_cmd)
    judge_cmd.add_argument("--fresh", action="store_true", help="judge again even when a cached verdict exists")
    judge_cmd.add_argument("--batch", action="store_true", help="judge through the Batch API: half the price, "
                           "results within 24 h; stop any time, `judgebot resume` goes on waiting")
    judge_cmd.add_argument("--yes", action="store_true", help="judge without asking, even when the estimate is above "
                           "CONFIRM_ABOVE_USD or over JUDGE_MONTHLY_BUDGET")
    judge_cmd.add_argument("-q", "--question", help="one question (with -r and -a instead of a file)")
    judge_cmd.add_argument("-r", "--reference", help="its reference answer")
    judge_cmd.add_argument("-a", "--answer", help="the answer to grade")

    resume_cmd = commands.add_parser("resume", help="finish the pending rows of a paused or interrupted run")
    resume_cmd.add_argument("run_id", nargs="?", type=int, help="run id (default: the newest unfinished run)")
    resume_cmd.add_argument("--out", type=Path, help="results CSV (default: the run's own, where `judge` wrote it; "
                            "else run-ID.results.csv)")
    resume_cmd.add_argument("--concurrency", type=int)
    resume_cmd.add_argument("--yes", action="store_true", help="judge without asking, whatever the estimate")
    resume_cmd.add_argument("--batch", action="store_true", help="send the pending rows as a new batch (the Batch API, "
                            "half price, within 24 h) rather than live")
    resume_cmd.add_argument("--retry-errors", action="store_true",
                            help="judge again the rows that ended in a judge error or an invalid reply")

    rubrics_cmd = commands.add_parser("rubrics", help="list rubrics; `rubrics check [NAME]` validates and runs goldens")
    rubrics_cmd.add_argument("action", nargs="?", choices=["list", "check"], default="list")
    rubrics_cmd.add_argument("name", nargs="?")

    commands.add_parser("runs", help="list recent runs")

    where = "a Slack channel id such as C0123456789 (default: the judgments made in a terminal)"
    history_cmd = commands.add_parser("history", help="the latest judgments of a Slack channel or of the terminal")
    history_cmd.add_argument("--channel", help=where)
    history_cmd.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    stats_cmd = commands.add_parser("stats", help="per model and rubric figures of a Slack channel or the terminal")
    stats_cmd.add_argument("--channel", help=where)
    stats_cmd.add_argument("--days", type=int, default=30, help="the last N days (default 30; 0: all time)")
    stats_cmd.add_argument("--model", help="only this model under test")
    digest_cmd = commands.add_parser("digest", help="a Slack channel's weekly digest as a table; --post posts it")
    digest_cmd.add_argument("--channel", required=True, help="a Slack channel id such as C0123456789")
    digest_cmd.add_argument("--week", help="ISO week such as 2026-W47 (default: last week)")
    digest_cmd.add_argument("--timezone", help="where the week's days begin (default: the channel's digest "
                            "timezone, else DIGEST_TIMEZONE)")
    digest_cmd.add_argument("--post", action="store_true", help="post it in the channel too (needs SLACK_BOT_TOKEN; "
                            "a week is posted once, whoever posts it)")
    add_calibration_commands(commands)
    return parser


def add_panel_options(command: argparse.ArgumentParser, scope: str = "") -> None:
    """--samples, --judges and --judges-file: who judges each row, and how many times."""
    command.add_argument("--samples", type=int, metavar="N",
                         help=f"{scope}judge each row N times (1-9; default: the rubric's own, else 1); the verdict is "
                         "the one closest to the others, and rows whose samples split are marked unsure")
    command.add_argument("--judges", metavar="M1,M2", help=f"{scope}a jury of judge models on the configured endpoint "
                         "(default: JUDGES, else JUDGE_MODEL alone)")
    command.add_argument("--judges-file", type=Path, metavar="YAML", help=f"{scope}a jury across endpoints: per judge a "
                         "model, a base_url and the key_env naming the variable with its key (default: JUDGES_FILE)")


def add_calibration_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`calibration [check]` and `labels export`: how far to trust the judge, from people's labels."""
    calibration_cmd = commands.add_parser("calibration", help="how far the judge agrees with people's labels; "
                                          "`calibration check` judges the labeled rows again with today's judge")
    calibration_cmd.add_argument("action", nargs="?", choices=["check"], help="judge the labeled rows again")
    calibration_cmd.add_argument("--rubric", required=True, help="rubric name or alias")
    calibration_cmd.add_argument("--channel", help="only the labels of this Slack channel (default: every channel "
                                 "and the terminal); with check, judge this channel's labeled judgments")
    calibration_cmd.add_argument("--since", help="7d, 30d, all or a date such as 2026-11-01 (default: all)")
    calibration_cmd.add_argument("--judge-model", help="only labels of this judge's verdicts; with check, the one "
                                 "judge to measure (default: the configured jury, else JUDGE_MODEL)")
    add_panel_options(calibration_cmd, "check: ")
    calibration_cmd.add_argument("--labels", type=Path, metavar="FILE", help="check: a CSV with human_ columns, such "
                                 "as `judgebot labels export` writes")
    calibration_cmd.add_argument("--min-agreement", type=float, metavar="SHARE",
                                 help="check: exit 1 when agreement on pass/fail is below this (default 0.8)")
    calibration_cmd.add_argument("--yes", action="store_true", help="check: judge without asking, however many rows")
    calibration_cmd.add_argument("--fresh", action="store_true", help="check: judge again even when a cached "
                                 "verdict of the same judge exists")
    labels_cmd = commands.add_parser("labels", help="people's labels; `labels export` writes them as a CSV")
    labels_cmd.add_argument("action", choices=["export"])
    labels_cmd.add_argument("--rubric", required=True, help="rubric name or alias")
    labels_cmd.add_argument("--channel", help="only the labels of this Slack channel (default: all)")
    labels_cmd.add_argument("--out", type=Path, help="the CSV file to write (default: standard output)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `judgebot` command. It ends the process: on return, what it leaves is never collected."""
    # Loading the libraries makes objects by the hundred thousand and frees almost none: the collector's passes over
    # them were about a tenth of start-up. It waits until a command has loaded what it uses (run_commands.settled).
    gc.disable()
    try:
        return _main(argv)
    finally:
        # The process ends after this: the interpreter's last full passes over everything the libraries built would
        # free nothing that exiting does not, and took a third of a one-triple run's time. (What must be closed is
        # closed without them: a history's connections, see bot.store.engine.closed_at_exit.)
        gc.freeze()
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    try:
        settings = Settings()
        logging.basicConfig(level=settings.judgebot_log_level, format="%(levelname)s %(name)s: %(message)s")
        return asyncio.run(dispatch(args, settings, console))
    except JudgebotError as err:  # a problem the person can fix: its text says how
        errors.print(f"[red]error[/]: {views.shown(str(err))}")
        return EXIT_USAGE
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in err.errors())
        errors.print(f"[red]error[/]: a setting is invalid: {views.shown(problems)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        errors.print("Interrupted. Rows not yet judged stay pending: `judgebot resume` finishes them.")
        return EXIT_INTERRUPTED
    except Exception as err:  # the last line of defence: a person sees a sentence, not a traceback
        if os.environ.get("JUDGEBOT_DEBUG"):
            raise
        errors.print(f"[red]judgebot hit an unexpected error[/]: {views.shown(f'{type(err).__name__}: {err}')}\n"
                     "Rows already judged are saved. Set JUDGEBOT_DEBUG=1 to see the details.")
        return EXIT_INTERNAL


async def dispatch(args: argparse.Namespace, settings: Settings, console: Console) -> int:
    """Run one subcommand."""
    from bot.rubric import load_rubrics

    if args.command == "serve":
        return await serve_command(settings, console)
    if args.command in ("runs", "history", "stats"):
        from bot.store import Store

        store = Store.open(settings.db_url)
        if args.command == "runs":
            views.show_runs(console, store.recent_runs())
            return EXIT_OK
        return history_command(args, store, console)
    if args.command == "digest":
        return await digest_command(args, settings, console)
    rubrics = load_rubrics(settings.rubrics_dir)
    if args.command == "rubrics":
        return await rubrics_command(args, settings, rubrics, console)
    if args.command == "resume":
        return await resume_command(args, settings, rubrics, console)
    if args.command == "calibration" and args.action == "check":
        from bot.cli.check import check_command

        return await check_command(args, settings, rubrics, console)
    if args.command in ("calibration", "labels"):
        from bot.cli.calibration import calibration_command, labels_command

        command = calibration_command if args.command == "calibration" else labels_command
        return await command(args, settings, rubrics, console)
    return await judge_command(args, settings, rubrics, console)


async def serve_command(settings: Settings, console: Console) -> int:
    """Run the Slack bot until SIGINT or SIGTERM, then let judgments in flight finish."""
    from bot.slack.server import EVENTS_PATH, RunningBot, serve  # the Slack libraries load only to serve

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
        where = "Socket Mode" if running.mode == "socket" else f"HTTP mode on port {running.port} ({EVENTS_PATH})"
        console.print(f"judgebot is up for {views.shown(running.team)} in {where}. Ctrl-C stops it.")

    await serve(settings, stop, announce)
    console.print("judgebot stopped.")
    return EXIT_OK


async def digest_command(args: argparse.Namespace, settings: Settings, console: Console) -> int:
    """`digest`: a channel's digest of one ISO week in the terminal, and with --post in the channel, once."""
    from bot.digest import Period, build_digest
    from bot.figures import iso_week
    from bot.rubric import load_rubrics
    from bot.store import Store, all_subscriptions
    from bot.trust.report import TrustBar

    settled()
    store = Store.open(settings.db_url)
    sub = next((s for s in all_subscriptions(store) if s.channel_id == args.channel), None)
    try:
        zone = ZoneInfo(args.timezone or (sub.timezone if sub else settings.digest_timezone))
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown timezone {args.timezone!r}: use an IANA name such as Europe/Berlin or UTC") from None
    try:
        period = Period.of_week(args.week or iso_week(datetime.now(zone).date() - timedelta(days=7)), zone)
    except WeekError as err:
        raise UsageError(str(err)) from None
    if args.post:
        from bot.slack.flows.digest_post import bot_token, post_from_terminal  # the Slack libraries load only to post

        if period.end > datetime.now(zone):
            raise UsageError(f"{period.week} is not over yet (it ends {period.end:%Y-%m-%d %H:%M %Z}): a weekly digest "
                             "is posted once the week is complete. Leave out --post to see it so far.")
        bot_token(settings)  # before the table: a missing token is said at once
    title = f"Digest of {args.channel}, {period.label} ({period.week}, {zone.key})"
    digest = build_digest(store, channel_id=args.channel, period=period, team_id=sub.team_id if sub else None,
                          bar=TrustBar.from_settings(settings))
    views.show_digest(console, digest, title)
    if not args.post:
        return EXIT_OK

    outcome = await post_from_terminal(settings, store, load_rubrics(settings.rubrics_dir), args.channel, period,
                                       team_id=sub.team_id if sub else None)
    console.print(views.shown(outcome))
    return EXIT_OK


def history_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """`history` and `stats`: what the history holds for one channel, read through the same queries as Slack's."""
    from bot.store import channel_stats, recent_in_channel, utcnow

    settled()

    if args.command == "history":
        if args.limit < 1:
            raise UsageError("-n/--limit must be at least 1")
        views.show_history(console, recent_in_channel(store, channel_id=args.channel, limit=args.limit))
        return EXIT_OK
    if args.days < 0:
        raise UsageError("--days must be 0 (all time) or more")
    since = utcnow() - timedelta(days=args.days) if args.days else None
    where = f"channel {args.channel}" if args.channel else "the terminal"
    period = f"last {args.days} days" if args.days else "all time"
    views.show_stats(console, channel_stats(store, channel_id=args.channel, since=since, model=args.model),
                        f"{where}, {period}" + (f", model {args.model}" if args.model else ""))
    return EXIT_OK


async def rubrics_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot rubrics [list|check [NAME]]`: every file was validated on load; `check` also runs the goldens, and
    fails while a file is broken."""
    chosen = [rubrics.get(args.name)] if args.name else list(rubrics)
    if args.action == "list":
        views.show_rubrics(console, chosen)
        show_broken(console, rubrics)
        return EXIT_OK
    from bot.runs import check_goldens

    for rubric in chosen:
        console.print(f"[green]valid[/] {views.shown(str(rubric.source or rubric.name))} ({len(rubric.goldens)} goldens)")
    show_broken(console, rubrics)
    failed = 0
    async with judge_client(settings) as client:
        for rubric in chosen:
            try:
                results = await check_goldens(rubric, client)
            except RunStopped as err:
                raise UsageError(str(err)) from None
            views.show_goldens(console, rubric, results)
            failed += sum(not result.ok for result in results)
    console.print(f"{failed} golden(s) missed." if failed else "Every golden came out as expected.")
    if rubrics.broken:
        return EXIT_USAGE
    return EXIT_UNSCORED if failed else EXIT_OK


def show_broken(console: Console, rubrics: RubricSet) -> None:
    """The rubric files left out, each with what is wrong with it."""
    for broken in rubrics.broken:
        console.print(f"[red]broken[/] {views.shown(str(broken.path))}: {views.shown(broken.problem)}")
    if rubrics.broken:
        console.print(f"{len(rubrics.broken)} rubric file(s) left out until fixed; the other rubrics can be used.")

