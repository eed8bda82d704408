"""What the terminal shows of a pairwise run: pairs judged, position consistency and bias, win rates, a ranking,
the inconsistent pairs, tokens and cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from bot.cli.views.terminal_text import Column, fitted_table, shown
from bot.records import RowState

if TYPE_CHECKING:  # only types: the terminal must not load the judge or the database to draw a table
    from bot.runs.pairwise_summary import PairsSummary
    from bot.store import Run

INCONSISTENT_SHOWN = 10
QUESTION_SHOWN = 80


def show_pairs(console: Console, run: Run, found: PairsSummary, out: Any) -> None:
    """The end-of-run table of a pairwise run, its ranking, and the pairs whose winner changed with the order."""
    from bot.trust.pairwise_texts import consistency_text, outcomes_text, people_text, position_text, rated_text, win_rate_text

    summary, figures = found.summary, found.report
    table = Table(title=shown(f"Run {run.id} · pairwise ({run.rubric_name} {run.rubric_version}) · judge "
                              f"{run.judge_model}"), show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    orders = "both orders" if figures.swapped else "one order each (--no-swap)"
    table.add_row("pairs", f"{figures.pairs} judged in {orders}: {outcomes_text(figures)}")
    table.add_row("judgments", f"{summary.scored} scored of {summary.rows - summary.counts[RowState.MALFORMED]}")
    if summary.errors:
        table.add_row("judge errors", str(summary.errors))
    if found.malformed:
        table.add_row("malformed rows", str(found.malformed))
    if summary.counts[RowState.PENDING]:
        table.add_row("still pending", f"{summary.counts[RowState.PENDING]} judgments")
    for match in figures.matchups:
        table.add_row("win rate", shown(win_rate_text(match)))
    table.add_row("position consistency", consistency_text(figures))
    table.add_row("position", position_text(figures))
    if (people := people_text(figures)) is not None:
        table.add_row("people", people)
    if summary.cached:
        table.add_row("reused from cache", f"{summary.cached} judgments")
    cached = f" ({summary.tokens_cached:,} of them cached)" if summary.tokens_cached else ""
    reasoning = f" ({summary.tokens_reasoning:,} of them reasoning)" if summary.tokens_reasoning else ""
    table.add_row("tokens", f"{summary.tokens_in:,} in{cached} · {summary.tokens_out:,} out{reasoning}")
    table.add_row("cost", summary.cost_text())
    if (guess := summary.estimate_text()) is not None:
        table.add_row("estimate", guess)
    if summary.columns:
        table.add_row("columns", shown(summary.column_text))
    if out is not None:
        table.add_row("results", shown(str(out)))
    console.print(table)
    if figures.ranking:
        rows = [(str(place), item.model, rated_text(item)) for place, item in enumerate(figures.ranking, 1)]
        console.print(fitted_table(console, [Column("#", 1), Column("model"), Column("Bradley-Terry rating", 2)], rows,
                                   title="Ranking (Elo scale; ties count half a win each way)", title_justify="left"))
    for pair in figures.inconsistent[:INCONSISTENT_SHOWN]:
        orders_said = " then ".join(f"{item.original or '-'}" for item in pair.shown)
        console.print(f"[yellow]row {pair.line}[/] inconsistent ({orders_said}): "
                      f"{shown(pair.question[:QUESTION_SHOWN])}", highlight=False)
    if len(figures.inconsistent) > INCONSISTENT_SHOWN:
        console.print(f"... {len(figures.inconsistent)} inconsistent pairs in all; see the consistent column of the "
                      "results.")
    for row, status, reason in summary.problems[:10]:
        console.print(f"[red]row {row}[/] {status}: {shown(reason)}", highlight=False)
