"""`judgebot labels export`: every label of a rubric as a CSV that `calibration check --labels` reads back; `labels
import`: a filled-in review file's labels saved, closing the open cases they name."""

from __future__ import annotations

import sys

from rich.console import Console

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK, EXIT_UNSCORED
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError


async def export(ctx: Context) -> int:
    """Write the labels and votes of a rubric (of one channel, or everywhere) to --out, or to standard output."""
    from bot.trust.cases import labeled_cases, write_labels
    from bot.trust.labels import labelable

    settled()
    args = ctx.args
    if not args.rubric:
        raise UsageError("labels export writes the labels of one rubric: give --rubric NAME")
    if args.file is not None:
        raise UsageError(f"labels export takes no file ({args.file}); --out names the file it writes")
    rubric = ctx.rubrics.get(args.rubric)
    cases = labeled_cases(ctx.store, rubric, args.channel)
    paths = list(labelable(rubric))
    if args.out is None:
        write_labels(sys.stdout, cases, paths, context=rubric.uses_context)
        sys.stdout.flush()
        Console(stderr=True, highlight=False).print(f"{len(cases)} labels of {shown(rubric.name)}.")
        return EXIT_OK
    if args.out.is_dir():
        raise UsageError(f"{args.out} is a directory; give --out a file name")
    try:
        with args.out.open("w", encoding="utf-8-sig", newline="") as out:  # the BOM: Excel then reads UTF-8
            write_labels(out, cases, paths, context=rubric.uses_context)
    except OSError as err:
        raise UsageError(f"cannot write {args.out}: {err.strerror or err}") from None
    ctx.console.print(f"{len(cases)} labels of {shown(rubric.name)} written to {shown(str(args.out))}.")
    return EXIT_OK


async def import_labels(ctx: Context) -> int:
    """Save the labels of a filled-in `judgebot review --out` file (or any CSV with a rubric, the texts and human_
    columns) as labels of the open cases of the queue its rows name; say what was closed and which rows matched no
    open case."""
    from bot.cli.review import terminal_user
    from bot.trust.review_files import import_labels as imported_from

    settled()
    args = ctx.args
    if args.file is None:
        raise UsageError("labels import reads a CSV with human_ columns: give its FILE (`judgebot review --out FILE` "
                         "writes one)")
    if args.out is not None:
        raise UsageError("labels import writes no file: --out goes with labels export")
    rubrics = ctx.rubrics
    default = rubrics.get(args.rubric) if args.rubric else None
    found = imported_from(ctx.store, args.file, args.channel,
                          rubric_of=lambda made: rubrics.exact(made.rubric_name, made.rubric_hash),
                          rubric_named=rubrics.find, default_rubric=default, labeler=terminal_user())
    where = f"channel {args.channel}'s queue" if args.channel else "the terminal's queue"
    ctx.console.print(shown(found.text(where)), highlight=False)
    for line, why in found.unmatched:
        ctx.console.print(f"  row {line}: {shown(why)}", highlight=False)
    if found.unmatched_count > len(found.unmatched):
        ctx.console.print(f"  ... and {found.unmatched_count - len(found.unmatched):,} more", highlight=False)
    if found.labeled:
        ctx.console.print(f"`judgebot calibration --rubric {shown(sorted(found.rubrics)[0])}` counts them.",
                          highlight=False)
    return EXIT_UNSCORED if found.unmatched_count else EXIT_OK
