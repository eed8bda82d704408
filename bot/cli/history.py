"""`judgebot runs`, `history`, `stats` and `digest`: what the history holds, read through the same queries as
Slack's, and a channel's weekly digest (posted, with --post, once)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.cli.views.history import show_digest, show_history, show_runs, show_stats
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError, WeekError

if TYPE_CHECKING:
    from bot.store import ListedRun, Store


def listed_runs(store: Store, limit: int) -> list[ListedRun]:
    """The `limit` most recent runs, newest first, a run whose process is gone shown as interrupted."""
    from bot.store import listed_runs as newest_listed
    from bot.store import utcnow

    return newest_listed(store, limit, utcnow())


async def runs(ctx: Context) -> int:
    """`judgebot runs`: the recent runs, a run whose process is gone shown as interrupted."""
    if ctx.args.limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    found = listed_runs(ctx.store, ctx.args.limit)
    if ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.history import RunEntry, RunsDocument

        print_json(RunsDocument(runs=[RunEntry.of(run) for run in found]))
        return EXIT_OK
    show_runs(ctx.console, found)
    return EXIT_OK


async def history(ctx: Context) -> int:
    """`judgebot history`: the latest judgments of a channel, or of the terminal."""
    from bot.store import latest_in_channel

    settled()
    if ctx.args.limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    found = latest_in_channel(ctx.store, channel_id=ctx.args.channel, limit=ctx.args.limit)
    if ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.history import HistoryDocument, JudgmentEntry

        print_json(HistoryDocument(channel=ctx.args.channel, judgments=[JudgmentEntry.of(row) for row in found]))
        return EXIT_OK
    show_history(ctx.console, found)
    return EXIT_OK


async def stats(ctx: Context) -> int:
    """`judgebot stats`: per model and rubric figures of a channel, or of the terminal, over the last days."""
    from bot.store import channel_stats, utcnow

    settled()
    args = ctx.args
    if args.days < 0:
        raise UsageError("--days must be 0 (all time) or more")
    since = utcnow() - timedelta(days=args.days) if args.days else None
    where = f"channel {args.channel}" if args.channel else "the terminal"
    period = f"last {args.days} days" if args.days else "all time"
    figures = channel_stats(ctx.store, channel_id=args.channel, since=since, model=args.model)
    title = f"{where}, {period}" + (f", model {args.model}" if args.model else "")
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.history import StatsDocument

        print_json(StatsDocument.of(figures, channel=args.channel, days=args.days, since=since, model=args.model))
        return EXIT_OK
    if not figures:
        ctx.console.print(shown(f"No judgments in {title}" + (": `judgebot stats` without --model lists the models "
                                                             "judged" if args.model else ".")), highlight=False)
        return EXIT_OK
    show_stats(ctx.console, figures, title)
    return EXIT_OK


async def digest(ctx: Context) -> int:
    """`judgebot digest`: a channel's digest of one ISO week in the terminal, and with --post in the channel, once."""
    from bot.digest import Period, build_digest
    from bot.figures import iso_week
    from bot.judge.lifetime import JudgeWatch
    from bot.runs.shutdown_reads import remembered_shutdowns
    from bot.store import all_subscriptions, judge_of_channel
    from bot.trust.report import TrustBar

    args, settings = ctx.args, ctx.settings
    if args.post and args.channel is None:
        raise UsageError("--post posts a Slack channel's digest: give --channel ID (the terminal's digest is shown, "
                         "not posted)")
    settled()
    store = ctx.store
    sub = next((s for s in all_subscriptions(store) if s.channel_id == args.channel), None) if args.channel else None
    try:
        zone = ZoneInfo(args.timezone or (sub.timezone if sub else settings.digest_timezone))
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown timezone {args.timezone!r}: use an IANA name such as Europe/Berlin or UTC") from None
    try:
        period = Period.of_week(args.week or iso_week(datetime.now(zone).date() - timedelta(days=7)), zone)
    except WeekError as err:
        raise UsageError(str(err)) from None
    if args.post:
        from bot.slack.flows.digest_post import post_from_terminal  # the Slack libraries load only to post
        from bot.slack.terminal_workspace import can_post

        if period.end > datetime.now(zone):
            raise UsageError(f"{period.week} is not over yet (it ends {period.end:%Y-%m-%d %H:%M %Z}): a weekly digest "
                             "is posted once the week is complete. Leave out --post to see it so far.")
        can_post(settings)  # before the table: a missing token is said at once
    title = f"Digest of {args.channel or 'the terminal'}, {period.label} ({period.week}, {zone.key})"
    found = build_digest(store, channel_id=args.channel, period=period, team_id=sub.team_id if sub else None,
                         bar=TrustBar.from_settings(settings))
    found.warnings = remembered_shutdowns(JudgeWatch.from_settings(settings), store).warnings(
        judge_of_channel(store, team_id=sub.team_id if sub else None, channel_id=args.channel))
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.digest import DigestDocument

        print_json(DigestDocument.of(found, zone.key))
    else:
        show_digest(ctx.console, found, title)
    if found.quiet and args.week is None:  # on a first day, the judgments are all in the week under way
        current = Period.of_week(iso_week(datetime.now(zone).date()), zone)
        so_far = build_digest(store, channel_id=args.channel, period=current, team_id=sub.team_id if sub else None,
                              bar=TrustBar.from_settings(settings))
        ctx.console.print(shown(_under_way(current.week, so_far.quiet, args.channel, args.timezone)), highlight=False)
    if not args.post:
        return EXIT_OK
    outcome = await post_from_terminal(settings, store, ctx.rubrics, args.channel, period,
                                       team_id=sub.team_id if sub else None)
    ctx.console.print(shown(outcome))
    return EXIT_OK


def _under_way(week: str, quiet: bool, channel: str | None, timezone: str | None) -> str:
    """What to type to see the week under way (`week`) when last week's digest is empty: a sentence."""
    if quiet:
        return f"Nothing was judged in the week under way ({week}) either."
    where = f" --channel {channel}" if channel else ""
    zone = f" --timezone {timezone}" if timezone else ""
    return (f"The week under way, {week}, has judgments: `judgebot digest --week {week}{where}{zone}` shows it so far, "
            f"`judgebot stats --days 1{where}` the last day's.")


async def budget(ctx: Context) -> int:
    """`judgebot budget`: this month's spend of the terminal's runs, per rubric and judge, against its budget."""
    from bot.figures import money, spend_parts
    from bot.store import month_start, spend, utcnow

    settled()
    settings = ctx.settings
    from bot.records import CHECK_CHANNEL

    start = month_start(utcnow())
    spent = spend(ctx.store, channel_id=None, since=start)
    checks = spend(ctx.store, channel_id=CHECK_CHANNEL, since=start)  # checks, comparisons, alignments, pairs
    total = spent.usd + checks.usd
    limit = settings.judge_monthly_budget
    if ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.history import BudgetDocument, Spending

        print_json(BudgetDocument(
            month_start=start, spent_usd=total, monthly_budget_usd=limit,
            left_usd=None if limit is None else max(limit - total, 0.0), runs=Spending.of(spent),
            checks=Spending.of(checks), confirm_above_usd=settings.confirm_above_usd,
            confirm_above_requests=settings.confirm_above_requests))
        return EXIT_OK
    against = f" of JUDGE_MONTHLY_BUDGET ({money(limit)}: {money(max(limit - total, 0.0))} left)" if limit else \
        " (no JUDGE_MONTHLY_BUDGET set)"
    ctx.console.print(f"This month the terminal's judging spent {money(total)}{against}.", highlight=False)
    for part in spend_parts(spent.by_judge):
        ctx.console.print(shown(f"  {part}"), highlight=False)
    if checks.by_judge:
        ctx.console.print(f"Of it, {money(checks.usd)} on calibration checks, judge comparisons, alignments and "
                          "pairwise runs (kept out of every channel's figures, not out of the budget):", highlight=False)
        for part in spend_parts(checks.by_judge):
            ctx.console.print(shown(f"  {part}"), highlight=False)
    ctx.console.print(f"A run estimated above {money(settings.confirm_above_usd)} (CONFIRM_ABOVE_USD), or sending more "
                      f"than {settings.confirm_above_requests:,} requests to judges of unknown price "
                      "(CONFIRM_ABOVE_REQUESTS), asks before it starts.", highlight=False)
    return EXIT_OK
