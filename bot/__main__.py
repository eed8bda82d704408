"""The command line: serve the Slack bot, judge a CSV or one triple, resume a run, list rubrics, runs, history,
stats and digests."""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import importlib.metadata
import logging
import os
import signal
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError
from rich.console import Console

from bot import terminal
from bot.config import Settings
from bot.errors import JudgebotError, RunStopped, UsageError, WeekError
from bot.records import REJUDGEABLE, RowState, RunState

# Each command imports what it uses when it runs: `judgebot --help` must not wait for the judge's client, the
# database layer or the digest to load (see "Measured figures" in the README).
if TYPE_CHECKING:
    from bot.llm import JudgeClient
    from bot.rubric import Rubric, RubricSet
    from bot.runs import Origin
    from bot.store import Run, Store

NO_ENDPOINT = (
    "judgebot needs a judge to talk to. Set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL to use any "
    "OpenAI-compatible server (for a local one: OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama, "
    "http://localhost:8000/v1 for vLLM or llama.cpp; add OPENAI_API_KEY if it asks for one). Pick the model "
    "with JUDGE_MODEL. Put them in the environment or in a .env file in this directory."
)
EXIT_OK, EXIT_UNSCORED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


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
    judge_cmd.add_argument("--fresh", action="store_true", help="judge again even when a cached verdict exists")
    judge_cmd.add_argument("-q", "--question", help="one question (with -r and -a instead of a file)")
    judge_cmd.add_argument("-r", "--reference", help="its reference answer")
    judge_cmd.add_argument("-a", "--answer", help="the answer to grade")

    resume_cmd = commands.add_parser("resume", help="finish the pending rows of a paused or interrupted run")
    resume_cmd.add_argument("run_id", nargs="?", type=int, help="run id (default: the newest unfinished run)")
    resume_cmd.add_argument("--out", type=Path, help="results CSV (default: the run's own, where `judge` wrote it; "
                            "else run-ID.results.csv)")
    resume_cmd.add_argument("--concurrency", type=int)
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `judgebot` command."""
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    try:
        settings = Settings()
        logging.basicConfig(level=settings.judgebot_log_level, format="%(levelname)s %(name)s: %(message)s")
        return asyncio.run(dispatch(args, settings, console))
    except JudgebotError as err:  # a problem the person can fix: its text says how
        errors.print(f"[red]error[/]: {terminal.shown(str(err))}")
        return EXIT_USAGE
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in err.errors())
        errors.print(f"[red]error[/]: a setting is invalid: {terminal.shown(problems)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        errors.print("Interrupted. Rows not yet judged stay pending: `judgebot resume` finishes them.")
        return EXIT_INTERRUPTED
    except Exception as err:  # the last line of defence: a person sees a sentence, not a traceback
        if os.environ.get("JUDGEBOT_DEBUG"):
            raise
        errors.print(f"[red]judgebot hit an unexpected error[/]: {terminal.shown(f'{type(err).__name__}: {err}')}\n"
                     "Rows already judged are saved. Set JUDGEBOT_DEBUG=1 to see the details.")
        return EXIT_INTERNAL


def settled() -> None:
    """Everything imported so far lives as long as the process: keep it out of the collector's full passes.

    They otherwise cost a run about a fifth of its CPU time; a command calls this once it has imported what it uses.
    """
    gc.freeze()


async def dispatch(args: argparse.Namespace, settings: Settings, console: Console) -> int:
    """Run one subcommand."""
    from bot.rubric import load_rubrics

    if args.command == "serve":
        return await serve_command(settings, console)
    if args.command in ("runs", "history", "stats"):
        from bot.store import Store

        store = Store.open(settings.db_url)
        if args.command == "runs":
            terminal.show_runs(console, store.recent_runs())
            return EXIT_OK
        return history_command(args, store, console)
    if args.command == "digest":
        return await digest_command(args, settings, console)
    rubrics = load_rubrics(settings.rubrics_dir)
    if args.command == "rubrics":
        return await rubrics_command(args, settings, rubrics, console)
    if args.command == "resume":
        return await resume_command(args, settings, rubrics, console)
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
        console.print(f"judgebot is up for {terminal.shown(running.team)} in {where}. Ctrl-C stops it.")

    await serve(settings, stop, announce)
    console.print("judgebot stopped.")
    return EXIT_OK


async def digest_command(args: argparse.Namespace, settings: Settings, console: Console) -> int:
    """`digest`: a channel's digest of one ISO week in the terminal, and with --post in the channel, once."""
    from bot.digest import Period, build_digest, iso_week
    from bot.rubric import load_rubrics
    from bot.store import Store, all_subscriptions

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
    terminal.show_digest(console, build_digest(store, channel_id=args.channel, period=period), title)
    if not args.post:
        return EXIT_OK

    outcome = await post_from_terminal(settings, store, load_rubrics(settings.rubrics_dir), args.channel, period,
                                       team_id=sub.team_id if sub else None)
    console.print(terminal.shown(outcome))
    return EXIT_OK


def history_command(args: argparse.Namespace, store: Store, console: Console) -> int:
    """`history` and `stats`: what the history holds for one channel, read through the same queries as Slack's."""
    from bot.store import channel_stats, recent_in_channel, utcnow

    if args.command == "history":
        if args.limit < 1:
            raise UsageError("-n/--limit must be at least 1")
        terminal.show_history(console, recent_in_channel(store, channel_id=args.channel, limit=args.limit))
        return EXIT_OK
    if args.days < 0:
        raise UsageError("--days must be 0 (all time) or more")
    since = utcnow() - timedelta(days=args.days) if args.days else None
    where = f"channel {args.channel}" if args.channel else "the terminal"
    period = f"last {args.days} days" if args.days else "all time"
    terminal.show_stats(console, channel_stats(store, channel_id=args.channel, since=since, model=args.model),
                        f"{where}, {period}" + (f", model {args.model}" if args.model else ""))
    return EXIT_OK


def check_concurrency(value: int | None) -> None:
    """--concurrency, when given, is at least 1."""
    if value is not None and value < 1:
        raise UsageError("--concurrency must be at least 1")


def writable(path: Path, not_over: Path | None = None) -> Path:
    """`path` if a results file can be written there; checked before any row is judged (and billed)."""
    if not_over is not None and path.resolve() == not_over.resolve():
        raise UsageError(f"--out {path} is the input file; give the results another name")
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give --out a file name")
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir() or not os.access(directory, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write the results to {path}: choose another --out")
    return path


def terminal_origin() -> Origin:
    """Who runs judgebot in this terminal, for the history."""
    from bot.runs import Origin

    try:
        user = getpass.getuser()[:32]
    except (KeyError, OSError):  # no name for this uid, as in some containers
        user = None
    return Origin(source="cli", user_id=user)


def judge_client(settings: Settings, concurrency: int | None = None, model: str | None = None) -> JudgeClient:
    """The judge client the settings describe; UsageError when they name no endpoint."""
    from bot.llm import judge_client_from

    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return judge_client_from(settings, model=model, concurrency=concurrency)


async def judge_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot judge`: a file, or one triple given with -q -r -a."""
    from bot.csvio import open_csv, parse_columns
    from bot.llm import observing_retries
    from bot.records import Triple, Verdict
    from bot.runs import execute_run, start_csv_run, start_single_run
    from bot.store import Store

    rubric = rubrics.get(args.rubric)
    single = [args.question, args.reference, args.answer]
    if args.file is None:
        if not all(value is not None for value in single):
            raise UsageError("give a CSV file, or all three of -q QUESTION -r REFERENCE -a ANSWER")
        if args.columns:
            raise UsageError("--columns names the columns of a CSV file; -q, -r and -a need none")
        # The rule of a CSV row: a question and a reference to grade against (an empty answer is graded).
        if empty := [flag for flag, value in (("-q", args.question), ("-r", args.reference)) if not value.strip()]:
            raise UsageError(f"{' and '.join(empty)} cannot be empty: a judgment needs a question and a reference "
                             "answer to grade against")
        client = judge_client(settings)
        store = Store.open(settings.db_url)
        triple = Triple(question=args.question, reference=args.reference, answer=args.answer)
        async with client:
            run = start_single_run(store, rubric=rubric, triple=triple, judge_model=client.model, model_name=args.model_name,
                                   fresh=args.fresh, origin=terminal_origin())
            with observing_retries(lambda notice: console.print(f"[yellow]{terminal.shown(str(notice))}[/]")):
                outcome = await execute_run(store, run, rubric, client, concurrency=1)
        if outcome.stop_reason and outcome.status == RunState.PAUSED:
            raise UsageError(f"{outcome.stop_reason.rstrip('.')}.\nRun {run.id} keeps this triple, not yet judged: "
                             f"`judgebot resume {run.id}` judges it.")
        judgment = next(store.iter_judgments(run.id))
        terminal.show_verdict(console, rubric, Verdict.model_validate(judgment, from_attributes=True))
        return EXIT_OK if outcome.all_scored else EXIT_UNSCORED
    if any(value is not None for value in single):
        raise UsageError("give either a CSV file or -q/-r/-a, not both")
    check_concurrency(args.concurrency)
    source = open_csv(args.file, parse_columns(args.columns or []), how="--columns {role}={column}")
    out = writable(args.out or args.file.with_name(f"{args.file.stem}.results.csv"), not_over=args.file)
    client = judge_client(settings, args.concurrency)
    store = Store.open(settings.db_url)
    run = start_csv_run(store, rubric=rubric, source=source, judge_model=client.model, model_name=args.model_name,
                        fresh=args.fresh, origin=terminal_origin(), results_path=str(out.resolve()))
    return await finish_run(store, run, rubric, client, console, out, args.concurrency or settings.concurrency)


async def resume_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot resume`: judge what a run left pending, then write its results and summary."""
    from bot.store import Store

    store = Store.open(settings.db_url)
    run = store.get_run(args.run_id) if args.run_id else store.latest_unfinished_run()
    if run is None:
        raise UsageError(f"no run {args.run_id}" if args.run_id else "no unfinished run to resume")
    check_concurrency(args.concurrency)
    rubric = rubrics.get(run.rubric_name)
    out = writable(args.out or Path(run.results_path or f"run-{run.id}.results.csv"))
    client = judge_client(settings, args.concurrency, model=run.judge_model)
    rejudge = REJUDGEABLE if args.retry_errors else ()
    console.print(f"Resuming run {run.id} ({terminal.shown(run.source_name or run.source)}, "
                  f"rubric {terminal.shown(run.rubric_name)}).")
    return await finish_run(store, run, rubric, client, console, out, args.concurrency or settings.concurrency,
                            rejudge=rejudge)


async def finish_run(store: Store, run: Run, rubric: Rubric, client: JudgeClient, console: Console, out: Path,
                     concurrency: int, rejudge: tuple[RowState, ...] = ()) -> int:
    """Judge the pending rows of a run with a progress bar, then write the results and show the summary."""
    from bot.llm import observing_retries
    from bot.runs import execute_run, export_run

    settled()
    async with client:
        with terminal.ProgressBar(console, f"{rubric.name} · run {run.id}") as bar, observing_retries(bar.retrying):
            outcome = await execute_run(store, run, rubric, client, concurrency=concurrency, on_progress=bar.update,
                                        rejudge=rejudge)
    if rejudge:
        console.print(f"{outcome.rejudged} rows with a judge error or an invalid reply were judged again.")
    run = store.get_run(run.id) or run  # with the status the run ended in
    # Results of a run that stopped half-way never replace a file that is there: it may hold good results.
    kept = out.exists() and bool(outcome.counts.get(RowState.PENDING))
    try:
        summary = export_run(store, run=run, rubric=rubric, out=None if kept else out)
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}. Every verdict is saved: "
                         f"`judgebot resume {run.id} --out PATH` writes the results elsewhere.") from None
    if not kept and run.results_path != str(out.resolve()):
        store.update_run(run.id, results_path=str(out.resolve()))  # where `judgebot resume` writes them next
    terminal.show_summary(console, run, rubric, summary, None if kept else out)
    if kept:
        console.print(f"{terminal.shown(str(out))} is left as it was: run {run.id}'s results replace it once its pending "
                      "rows are judged.", highlight=False)
    if outcome.status == RunState.PAUSED:
        console.print(f"[red]Run {run.id} stopped[/]: {terminal.shown(outcome.stop_reason or '')}. "
                      f"{outcome.counts.get(RowState.PENDING, 0)} rows are still pending; "
                      f"`judgebot resume {run.id}` finishes them.", highlight=False)
    return EXIT_OK if outcome.all_scored else EXIT_UNSCORED


async def rubrics_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot rubrics [list|check [NAME]]`: every file was validated on load; `check` also runs the goldens, and
    fails while a file is broken."""
    chosen = [rubrics.get(args.name)] if args.name else list(rubrics)
    if args.action == "list":
        terminal.show_rubrics(console, chosen)
        show_broken(console, rubrics)
        return EXIT_OK
    from bot.runs import check_goldens

    for rubric in chosen:
        console.print(f"[green]valid[/] {terminal.shown(str(rubric.source or rubric.name))} ({len(rubric.goldens)} goldens)")
    show_broken(console, rubrics)
    failed = 0
    async with judge_client(settings) as client:
        for rubric in chosen:
            try:
                results = await check_goldens(rubric, client)
            except RunStopped as err:
                raise UsageError(str(err)) from None
            terminal.show_goldens(console, rubric, results)
            failed += sum(not result.ok for result in results)
    console.print(f"{failed} golden(s) missed." if failed else "Every golden came out as expected.")
    if rubrics.broken:
        return EXIT_USAGE
    return EXIT_UNSCORED if failed else EXIT_OK


def show_broken(console: Console, rubrics: RubricSet) -> None:
    """The rubric files left out, each with what is wrong with it."""
    for broken in rubrics.broken:
        console.print(f"[red]broken[/] {terminal.shown(str(broken.path))}: {terminal.shown(broken.problem)}")
    if rubrics.broken:
        console.print(f"{len(rubrics.broken)} rubric file(s) left out until fixed; the other rubrics can be used.")


if __name__ == "__main__":
    sys.exit(main())
