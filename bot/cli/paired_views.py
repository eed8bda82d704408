"""How a paired comparison of two models looks in a terminal: the paired difference first, then wins, pass/fail, tags,
the biggest moves and length."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.screen import shown

if TYPE_CHECKING:
    from rich.console import Console

    from bot.trust.paired import Graded, PairedReport

NAMED = 5  # unpaired questions named per side


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
