"""`judgebot review`: the cases of a channel's review queue (or the terminal's) that wait for a person's label, and
with --nudge today's nudge of its reviewers."""

from __future__ import annotations

from datetime import timedelta

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError


async def review(ctx: Context) -> int:
    """`judgebot review`: why each open case was queued, its question and the judge's verdict, oldest first."""
    from rich.table import Table

    from bot.store import ANY_TEAM, open_cases, utcnow
    from bot.trust.review import REASONS

    settled()
    if ctx.args.limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    channel = ctx.args.channel
    if ctx.args.nudge:
        if ctx.args.json:
            raise UsageError("--json lists the queue's cases; --nudge sends the reviewers' nudge: give one of them")
        if not channel:
            raise UsageError("--nudge nudges a Slack channel's reviewers: give --channel ID")
        from bot.slack.flows.review_nudge import nudge_from_terminal  # the Slack libraries load only to nudge

        ctx.console.print(await nudge_from_terminal(ctx.settings, ctx.store, channel), highlight=False)
        return EXIT_OK
    cases = open_cases(ctx.store, team_id=ANY_TEAM if channel else None, channel_id=channel, limit=ctx.args.limit)
    if ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.review import ReviewDocument

        print_json(ReviewDocument.of(channel, cases))
        return EXIT_OK
    where = f"channel {channel}" if channel else "the terminal"
    if not cases:
        ctx.console.print(f"No case of {where} waits for a label.", highlight=False)
        return EXIT_OK
    table = Table(title=f"Cases of {shown(where)} waiting for a label, oldest first")
    for name in ("queued", "why", "rubric", "question", "the judge said", "#"):
        table.add_column(name)
    now = utcnow()
    for case, judgment in cases:
        days = (now - case.created_at) // timedelta(days=1)
        table.add_row(f"{days} d ago" if days else "today", REASONS.get(case.reason, case.reason)
                      + (" (at random)" if case.random and case.reason != "random" else ""),
                      shown(case.rubric_name), shown(judgment.question[:80]), shown((judgment.label or "")[:60]),
                      str(judgment.id))
    ctx.console.print(table)
    ctx.console.print("In Slack, `/judge review` in the channel asks for these labels one case at a time.",
                      highlight=False)
    return EXIT_OK
