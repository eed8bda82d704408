"""`judgebot labels export`: every label of a rubric as a CSV that `calibration check --labels` reads back."""

from __future__ import annotations

import sys

from rich.console import Console

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError


async def export(ctx: Context) -> int:
    """Write the labels and votes of a rubric (of one channel, or everywhere) to --out, or to standard output."""
    from bot.trust.cases import labeled_cases, write_labels
    from bot.trust.labels import labelable

    settled()
    args = ctx.args
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
