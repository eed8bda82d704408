"""`judgebot retention` removes the texts of old judgments (their figures stay); `judgebot forget` removes a workspace."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError
from bot.figures import plural

if TYPE_CHECKING:
    from bot.store import Pruned, Removed


async def retention(ctx: Context) -> int:
    """Remove the texts of judgments older than --days (else RETENTION_DAYS), and say what went."""
    from bot.csvfiles.folders import remove_left_over
    from bot.store import Shapes, remove_old_texts, utcnow

    days = ctx.args.days if ctx.args.days is not None else ctx.settings.retention_days
    if days is None:
        raise UsageError("how old is old? Set RETENTION_DAYS (such as 90), or give --days N")
    if days < 1:
        raise UsageError("--days is a number of days, 1 or more")
    before = utcnow() - timedelta(days=days)
    removed = remove_old_texts(ctx.store, before=before, shapes=Shapes.of(ctx.rubrics))
    print_removed(ctx, removed, days, folders=remove_left_over(before))
    return EXIT_OK


def print_removed(ctx: Context, removed: Removed, days: int, *, folders: int = 0) -> None:
    """What one pass of retention removed (and how many temporary folders left behind it deleted), in sentences a
    person reads."""
    if not removed.total and not folders:
        ctx.console.print(f"Nothing older than {days} days still had its texts: nothing removed.")
        return
    closed = f" ({removed.closed:,} of them never judged, now closed)" if removed.closed else ""
    if removed.total:
        ctx.console.print(f"Removed the texts older than {days} days: {removed.judgments:,} judgments{closed}, "
                          f"{removed.samples:,} samples, {removed.notes:,} notes of labels, {removed.messages:,} "
                          "messages of shared files. Their figures (scores, pass/fail, tags, costs, dates) are kept.",
                          highlight=False)
    if (line := revisions_line(removed.revisions)) is not None:
        ctx.console.print(line, highlight=False)
    if folders:
        ctx.console.print(f"Deleted {folders:,} temporary {plural(folders, 'folder')} older than {days} days that a "
                          "stopped bot left behind on this machine (a shared file, or results).", highlight=False)


def revisions_line(pruned: Pruned) -> str | None:
    """What went from channels' revisions of rubrics, and what it changes, in a sentence; None when nothing did."""
    if not pruned.revisions:
        return None
    what = " and ".join(part for part in (f"{pruned.examples:,} worked {plural(pruned.examples, 'example')}"
                                          if pruned.examples else "",
                                          f"{pruned.notes:,} {plural(pruned.notes, 'note')} people wrote"
                                          if pruned.notes else "") if part)
    line = (f"From {pruned.revisions:,} {plural(pruned.revisions, 'revision')} of rubrics (/judge align): {what} "
            "copied from those texts.")
    if pruned.in_force:
        line += (f" {pruned.in_force:,} of them {'is' if pruned.in_force == 1 else 'are'} in force: "
                 f"{'its channel judges' if pruned.in_force == 1 else 'their channels judge'} without those examples "
                 "from now on; /judge align on recent labels makes new ones.")
    return line


async def forget(ctx: Context) -> int:
    """Delete every row of one workspace, once its id is typed again (or --yes); say how many rows of each table."""
    from bot.store import forget_team, team_rows

    team = (ctx.args.team or "").strip()
    if not team:
        raise UsageError("--team names the workspace whose data goes, such as T0123ABCD")
    console = ctx.console
    found = team_rows(ctx.store, team)
    if not found:
        console.print(f"The history holds nothing of workspace {shown(team)}: nothing to remove.", highlight=False)
        return EXIT_OK
    console.print(f"Workspace {shown(team)} has {sum(found.values()):,} rows in the history:", highlight=False)
    for table, count in found.items():
        console.print(f"  {table}: {count:,}", highlight=False, markup=False)
    if not ctx.args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"there is no terminal to confirm on: pass --yes to delete workspace {team}'s data")
        typed = console.input(f"This cannot be undone. Type {shown(team)} again to delete it: ").strip()
        if typed != team:
            console.print("Not the same id: nothing deleted.", highlight=False)
            return EXIT_USAGE
    deleted = forget_team(ctx.store, team)
    console.print(f"Deleted {sum(deleted.values()):,} rows of workspace {shown(team)}:", highlight=False)
    for table, count in deleted.items():
        console.print(f"  {table}: {count:,}", highlight=False, markup=False)
    return EXIT_OK
