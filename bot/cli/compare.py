"""`judgebot compare`: is B better than A? Two runs, or two models under test of one run or history, paired on the
same questions, with the figures that say whether the difference is more than noise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.cli.screen import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from bot.trust.paired import Graded, PairedReport

NAMED = 5  # unpaired questions named per side


async def compare(ctx: Context) -> int:
    """Pair the two sides' graded answers and print the comparison."""
    from bot.cli.calibration import since_of
    from bot.store.graded import graded_answers
    from bot.trust.paired import compare as compared
    from bot.trust.paired import graded

    args = ctx.args
    runs, models = args.runs or [], args.model or []
    if (len(runs) == 2) == (len(models) == 2) or len(runs) not in (0, 2) or len(models) not in (0, 2):
        raise UsageError("compare two runs (`judgebot compare 12 15`) or two models under test (`judgebot compare "
                         "--model bot-v1 --model bot-v2 [--run ID | --channel ID] [--since 30d]`)")
    settled()
    since = since_of(args.since)
    rubric = ctx.rubrics.get(args.rubric).name if args.rubric else None
    if runs:
        sides = [graded(graded_answers(ctx.store, run_id=run, rubric_name=rubric)) for run in runs]
        names = [f"run {run}" for run in runs]
    else:
        sides = [graded(graded_answers(ctx.store, run_id=args.run, channel_id=args.channel, model=model, since=since,
                                       rubric_name=rubric)) for model in models]
        names = list(models)
    if not all(sides):
        empty = [name for name, side in zip(names, sides, strict=True) if not side]
        raise UsageError(f"no scored answers of {', '.join(empty)} here: `judgebot runs` lists the runs; a model is "
                         "named as in the file's model column")
    found = compared(sides[0], sides[1])
    show(ctx.console, names[0], names[1], found)
    return EXIT_OK


def show(console: Console, a: str, b: str, found: PairedReport) -> None:
    """The comparison as lines: the paired difference first, then wins, pass/fail, tags, moves and length."""
    from bot.trust.mcnemar import p_text

    a, b = shown(a), shown(b)
    console.print(f"[bold]{b} against {a}[/]: {len(found.pairs)} questions answered by both", highlight=False)
    for name, rows in ((a, found.unpaired_a), (b, found.unpaired_b)):
        if rows:
            named = "; ".join(_question(row) for row in rows[:NAMED])
            console.print(f"  {len(rows)} answered by {name} only, left out: {named}"
                          + (" ..." if len(rows) > NAMED else ""), highlight=False)
    if not found.pairs:
        return
    interval = "" if found.interval is None else f", 95% CI {found.interval[0]:+.1f} to {found.interval[1]:+.1f}"
    console.print(f"  mean headline: {a} {found.mean_a:.1f}, {b} {found.mean_b:.1f}; paired difference "
                  f"{found.difference:+.1f}{interval} (bootstrap over the questions)", highlight=False)
    sign = "n/a" if found.sign_p is None else p_text(found.sign_p)
    console.print(f"  {b} higher on {found.wins}, equal on {found.ties}, lower on {found.losses} (sign test "
                  f"{sign})", highlight=False)
    if found.mcnemar is not None:
        console.print(f"  pass/fail: {found.b_only_passed} pass only with {b}, {found.a_only_passed} only with {a} "
                      f"(McNemar {p_text(found.mcnemar)})", highlight=False)
    if found.transitions:
        moves = ", ".join(f"{shown(before)} -> {shown(after)} {count}"
                          for (before, after), count in sorted(found.transitions.items(), key=lambda item: -item[1]))
        console.print(f"  tags, {a} -> {b}: {moves}", highlight=False)
    for title, pairs in (("regressions", found.regressions), ("improvements", found.improvements)):
        if pairs:
            console.print(f"  biggest {title}:", highlight=False)
            for pair in pairs:
                console.print(f"    {pair.difference:+.0f} ({pair.a.headline:.0f} -> {pair.b.headline:.0f}) "
                              f"{_question(pair.a)}", highlight=False)
    _length(console, a, b, found)


def _length(console: Console, a: str, b: str, found: PairedReport) -> None:
    similar = ("no pair of similar length" if found.similar_difference is None else
               f"{found.similar_difference:+.1f} over the {found.similar_n} pairs of similar length (within 20%)")
    r = ", ".join(f"{name} {'n/a' if value is None else f'{value:+.2f}'}"
                  for name, value in ((a, found.length_r_a), (b, found.length_r_b)))
    console.print(f"  length: paired difference {similar}; headline against answer length r: {r}", highlight=False)


def _question(row: Graded) -> str:
    return shown(" ".join(row.question.split())[:70])
