"""How a comparison of two models under test looks in a terminal: a block per rubric, what was paired first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.cli.views.terminal_text import shown
from bot.figures import plural

if TYPE_CHECKING:
    from rich.console import Console

    from bot.trust.model_comparison import Graded, ModelComparison

NAMED = 5  # unpaired questions named per side


def show_all(console: Console, a: str, b: str, reports: Sequence[ModelComparison]) -> None:
    """Every rubric's comparison, one block each: answers graded with different rubrics are never pooled."""
    if len(reports) > 1:
        console.print(f"answers graded with {len(reports)} rubrics, compared one rubric at a time: "
                      f"{', '.join(shown(found.rubric) for found in reports)} (`--rubric NAME` for one)",
                      highlight=False)
    for found in reports:
        show(console, a, b, found)


def show(console: Console, a_name: str, b_name: str, found: ModelComparison) -> None:
    """One rubric's comparison as lines: what was paired and who judged it, then the paired difference, wins,
    pass/fail, tags, moves and length."""
    from bot.trust.model_comparison import judges_text, unscored_text, warnings
    from bot.trust.stats.mcnemar import p_text

    a, b = shown(a_name), shown(b_name)
    n = len(found.pairs)
    console.print(f"[bold]{b} against {a}, rubric {shown(found.rubric)}[/]: {n} {plural(n, 'question')} with a score "
                  "on both sides", highlight=False)
    for name, rows in ((a, found.only_a), (b, found.only_b)):
        if rows:
            console.print(f"  {len(rows)} answered by {name} only, left out: {_named(rows)}", highlight=False)
    for name, rows in ((a_name, found.unscored_a), (b_name, found.unscored_b)):
        if rows:
            console.print(f"  {shown(unscored_text(name, rows))}, left out: {_named(rows)}", highlight=False)
    for name, repeated in ((a, found.repeated_a), (b, found.repeated_b)):
        if repeated:
            console.print(f"  {name} answered {repeated} {plural(repeated, 'question')} more than "
                          "once: its latest scored answer counts", highlight=False)
    if not found.pairs or found.difference is None:
        return
    console.print(f"  {shown(judges_text(a_name, b_name, found))}", highlight=False)
    for warning in warnings(a_name, b_name, found):
        console.print(f"  [yellow]warning[/]: {shown(warning)}", highlight=False)
    console.print(f"  mean headline: {a} {found.mean_a:.1f}, {b} {found.mean_b:.1f}; paired difference "
                  f"{found.difference.text()}", highlight=False)
    sign = "n/a" if found.sign_p is None else p_text(found.sign_p)
    console.print(f"  {b} higher on {found.wins}, equal on {found.ties}, lower on {found.losses} (sign test "
                  f"{sign})", highlight=False)
    if found.mcnemar is not None:
        console.print(f"  pass/fail: {found.b_only_passed} pass only with {b}, {found.a_only_passed} only with {a} "
                      f"(McNemar {p_text(found.mcnemar)})", highlight=False)
    if found.transitions:
        moves = ", ".join(f"{shown(before)} -> {shown(after)} {count}" for (before, after), count
                          in sorted(found.transitions.items(), key=lambda item: (-item[1], item[0])))
        console.print(f"  tags, {a} -> {b}: {moves}", highlight=False)
    for title, pairs in (("regressions", found.regressions), ("improvements", found.improvements)):
        if pairs:
            console.print(f"  biggest {title}:", highlight=False)
            for pair in pairs:
                console.print(f"    {pair.difference:+.0f} ({pair.a.headline:.0f} -> {pair.b.headline:.0f}) "
                              f"{_question(pair.a)}", highlight=False)
    _length(console, a, b, found)


def _length(console: Console, a: str, b: str, found: ModelComparison) -> None:
    similar = ("no pair of similar length (within 20%)" if found.similar is None else
               f"over the pairs of similar length (within 20%), paired difference {found.similar.text('pairs')}")
    r = ", ".join(f"{name} {'n/a' if value is None else f'{value:+.2f}'}"
                  for name, value in ((a, found.length_r_a), (b, found.length_r_b)))
    console.print(f"  length: {similar}; headline against answer length r: {r}", highlight=False)


def _named(rows: Sequence[Graded]) -> str:
    return "; ".join(_question(row) for row in rows[:NAMED]) + (" ..." if len(rows) > NAMED else "")


def _question(row: Graded) -> str:
    return shown(" ".join(row.question.split())[:70])
