"""`judgebot calibration`: how far the judge agrees with people's labels, held against the judge this terminal judges
with and the rubric file loaded."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.cli.views.calibration import show_calibration, show_doubts, show_no_labels, shown_figures
from bot.cli.views.terminal_text import shown
from bot.config import Settings
from bot.errors import UsageError
from bot.records import is_period, period_days
from bot.trust.calibration_report import calibration_report

if TYPE_CHECKING:
    from bot.rubric import Rubric


async def calibration(ctx: Context) -> int:
    """`judgebot calibration`: the judge's figures against every label (`calibration check` is bot.cli.check)."""
    args, settings = ctx.args, ctx.settings
    if args.labels or args.yes or args.fresh or args.point or any(
            value is not None for value in (args.min_agreement, args.min_labels, args.min_kappa)):
        raise UsageError("--labels, --min-agreement, --min-labels, --min-kappa, --point, --yes and --fresh belong to "
                         "`judgebot calibration check`")
    from bot.trust.review_queue import random_share_text

    settled()
    rubric = ctx.rubrics.get(args.rubric)
    since = since_of(args.since)
    report = calibration_report(ctx.store, settings, rubric, channel=args.channel, judge_model=args.judge_model,
                                since=since)
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.calibration import CalibrationDocument

        print_json(CalibrationDocument.of(report, rubric=rubric.name, channel=args.channel,
                                          judge_model=args.judge_model, since=since))
        return EXIT_OK
    where = scope_text(rubric, args.channel, args.judge_model)
    if not report.figures.n:
        show_no_labels(ctx.console, f"{where}, {period_text(args.since)}")
        return EXIT_OK
    show_calibration(ctx.console, f"Calibration of {where}, {period_text(args.since)}",
                                       shown_figures(report.figures))
    if report.random is not None:  # the cases nobody chose: the estimate to report
        ctx.console.print(f"on cases picked at random for review: {random_share_text(report.random, report.figures.agreement)}",
                          highlight=False)
    show_doubts(ctx.console, report.doubts, rubric.name, judge_setting(settings))
    return EXIT_OK


def judge_setting(settings: Settings) -> str:
    """The setting that names the judge this terminal judges with."""
    return "JUDGES_FILE" if settings.judges_file else "JUDGES" if settings.judges.strip() else "JUDGE_MODEL"


def since_of(text: str | None) -> datetime | None:
    """The moment --since names (7d, 30d, any period of days, a YYYY-MM-DD date, or all), in UTC as the history keeps
    it."""
    from bot.store import utcnow

    if text is None:
        return None
    if is_period(text):
        try:
            days = period_days(text)
        except ValueError as err:
            raise UsageError(f"--since {text}: {err}") from None
        return None if days is None else utcnow() - timedelta(days=days)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: give 7d, 30d, all or a date such as 2026-11-01") from None
    return datetime(day.year, day.month, day.day)


def period_text(since: str | None) -> str:
    """How --since reads in a title."""
    if since is None or since.strip().lower() == "all":
        return "all time"
    return f"last {since.strip()[:-1]} days" if is_period(since) else f"since {since}"


def scope_text(rubric: Rubric, channel: str | None, judge_model: str | None) -> str:
    """Which labels a title speaks of, made safe to print."""
    where = f"channel {channel}" if channel else "all channels and the terminal"
    judge = f", judge {judge_model}" if judge_model else ""
    return shown(f"{rubric.name} ({rubric.title}), {where}{judge}")
