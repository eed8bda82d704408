"""`judgebot compare`: is B better than A? Two runs, or two models under test of one run or history, paired on the
same questions, with the figures that say whether the difference is more than noise."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.csvfiles.rows import CsvRow
    from bot.rubric import Rubric
    from bot.trust.model_comparison import ModelComparison, Pair


async def compare(ctx: Context) -> int:
    """Pair the two sides' verdicts, each case once, and print the comparison, one rubric at a time."""
    from bot.cli.calibration import since_of
    from bot.cli.views.model_comparison import show_all
    from bot.trust.sides import comparison

    args = ctx.args
    settled()
    names, reports = comparison(ctx.store, ctx.rubrics, runs=args.runs or [], models=args.model or [], run=args.run,
                                channel=args.channel, since=since_of(args.since), rubric=args.rubric)
    judge = ctx.rubrics.get(args.judge) if args.judge else None
    if judge is not None and not judge.pairwise:
        raise UsageError(f"--judge takes a pairwise rubric, which reads two answers at once; {judge.name} grades one "
                         "(the built-in pairwise rubric is called pairwise)")
    if judge is None and (args.no_swap or args.batch or args.out):
        raise UsageError("--no-swap, --batch and --out are for --judge RUBRIC, which asks a pairwise judge")
    if judge is not None and args.json:
        raise UsageError("--json prints the comparison; --judge then judges its pairs as a run: leave out one of them "
                         "(`judgebot runs --json` lists the run afterwards)")
    paired = [found for found in reports if found.pairs]
    if judge is not None and len(paired) > 1:
        raise UsageError(f"the answers were graded with {len(paired)} rubrics ({', '.join(f.rubric for f in paired)}): "
                         "--judge asks about each pair once, so name one with --rubric")
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.compare import CompareDocument

        print_json(CompareDocument.of(names[0], names[1], reports))
        return EXIT_OK
    show_all(ctx.console, names[0], names[1], reports)
    if judge is None or not paired:
        return EXIT_OK
    return await judge_pairs(ctx, judge, names, paired[0])


async def judge_pairs(ctx: Context, rubric: Rubric, names: list[str], found: ModelComparison) -> int:
    """Ask a pairwise judge about every pair of the comparison: a run of pairs (A's answer, B's), judged like a file,
    its results written and its figures shown."""
    from bot.cli.face import Terminal, file_ended
    from bot.cli.judging import check_concurrency, terminal_origin, terminal_request, writable
    from bot.cli.panels import judge_panel
    from bot.runs import start_run

    args = ctx.args
    check_concurrency(args.concurrency)
    out = writable(args.out or Path("compare.results.csv"))
    panel = judge_panel(ctx.settings, args, rubric, args.concurrency)
    columns = ["question", "reference", "answer_a", "answer_b", "model_a", "model_b"]
    rows = [pair_row(line, pair, names) for line, pair in enumerate(found.pairs, 2)]
    run = start_run(ctx.store, rubric=rubric, rows=rows, **panel.run_fields(), columns=columns,
                    column_roles={role: role for role in columns}, source_name=f"{names[0]} vs {names[1]}",
                    fresh=args.fresh, origin=terminal_origin(), results_path=str(out.resolve()), swap=not args.no_swap)
    return await file_ended(ctx, terminal_request(ctx, rubric, panel, run, out=out, new=True), Terminal(ctx, new=True))


def pair_row(line: int, pair: Pair, names: list[str]) -> CsvRow:
    """A pair of the comparison as a row of a file of pairs (A's answer and B's, each with its side's name)."""
    from bot.csvfiles.rows import CsvRow

    cells = {"question": pair.a.question, "reference": pair.a.reference, "answer_a": pair.a.answer,
             "answer_b": pair.b.answer, "model_a": names[0], "model_b": names[1]}
    return CsvRow(line, pair.a.question, pair.a.reference, pair.a.answer, names[0], cells, pair.b.answer, names[1])
