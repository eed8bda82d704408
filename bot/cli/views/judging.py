"""What the terminal shows of judging: a run's estimate before it starts, its summary at the end, and one verdict
with its samples."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from bot.cli.views.terminal_text import DASH, Column, fitted_table, printable, shown
from bot.figures import judge_named, number, percent, plural
from bot.judge.samples import split_text
from bot.records import RowState

if TYPE_CHECKING:  # only types: the terminal must not load the judge or the database to draw a table
    from bot.records import Verdict
    from bot.rubric import Rubric
    from bot.runs import Summary
    from bot.runs.estimate import Estimate
    from bot.store import JudgmentSample, Run


def show_estimate(console: Console, lead: str, estimate: Estimate) -> None:
    """What a run is likely to cost, before it starts, and what the expected reply size rests on."""
    reasoning = f", reasoning from {'; '.join(estimate.reasoning_basis)}" if estimate.reasoning_basis else ""
    console.print(shown(f"{lead}: {estimate.text()}; replies sized from {estimate.reply_basis}{reasoning}, prompts "
                        "without the provider's cache discount."), highlight=False)
    if (tiers := estimate.tier_text()) is not None:
        flags = "--background 2h|8h, --batch" if "2h" in estimate.tier_costs else "--batch"
        console.print(shown(f"By tier: {tiers} ({flags})."), highlight=False)


def show_summary(console: Console, run: Run, rubric: Rubric, summary: Summary, out: Any) -> None:
    """The end-of-run table: counts, pass rate, mean of each criterion, tags, tokens, cost, worst rows."""
    judge = judge_named(run.judge_model, summary.effort_text())
    table = Table(title=shown(f"Run {run.id} · {rubric.title} ({rubric.name} {rubric.version}) · judge {judge}"),
                  show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("rows", str(summary.rows))
    table.add_row("scored", str(summary.scored))
    table.add_row("judge errors", str(summary.counts[RowState.ERROR]))
    if summary.counts[RowState.INVALID]:
        table.add_row("invalid replies", str(summary.counts[RowState.INVALID]))
    if summary.counts[RowState.MALFORMED]:
        table.add_row("malformed rows", str(summary.counts[RowState.MALFORMED]))
    if summary.counts[RowState.PENDING]:
        table.add_row("still pending", str(summary.counts[RowState.PENDING]))
    if (content_free := summary.content_free_text()) is not None:
        table.add_row("content-free answers", content_free)
    rate = summary.pass_rate
    table.add_row("pass rate", DASH if rate is None else f"{rate:.0%} ({summary.passed}/{summary.scored})")
    for criterion in summary.criteria:
        table.add_row(shown(f"mean {criterion}"), number(summary.mean(criterion), missing=DASH))
    for path, counts in summary.tags.items():
        table.add_row(shown(path), shown(" · ".join(f"{tag} {n}" for tag, n in counts.most_common())))
    if summary.samples:
        failed = f" ({summary.failed_samples} could not be scored)" if summary.failed_samples else ""
        table.add_row("samples", f"{sum(summary.samples.values()):,}{failed}")
        listed = ", ".join(str(row) for row in summary.unsure_rows)
        more = f", ... ({summary.unsure - len(summary.unsure_rows)} more)" if summary.unsure > len(summary.unsure_rows) else ""
        table.add_row("unsure rows", f"{summary.unsure}" + (f": rows {listed}{more}" if summary.unsure else ""))
        table.add_row("Krippendorff's alpha", summary.alpha_text(bool(rubric.headline.tag)))
    if (identical := summary.identical_text()) is not None:
        table.add_row("repeated texts", identical)
    if summary.from_history:
        table.add_row("reused from the history", f"{summary.from_history:,} rows (not billed)")
    cached = f" ({summary.tokens_cached:,} of them cached)" if summary.tokens_cached else ""
    reasoning = f" ({summary.tokens_reasoning:,} of them reasoning)" if summary.tokens_reasoning else ""
    table.add_row("tokens", f"{summary.tokens_in:,} in{cached} · {summary.tokens_out:,} out{reasoning}")
    table.add_row("cost", summary.cost_text())
    if (guess := summary.estimate_text()) is not None:
        table.add_row("estimate", guess)
    if summary.worst and summary.worst[0][0] < 100:  # rows that all scored 100 have none lower than the others
        table.add_row("lowest rows", ", ".join(f"row {row} ({score:.0f})" for score, row, _ in summary.worst))
    if summary.columns:
        table.add_row("columns", shown(summary.column_text))
    if out is not None:
        table.add_row("results", shown(str(out)))
    console.print(table)
    if len(summary.models) > 1:
        columns = [Column("model under test"), Column("rows", 1), Column("scored", 2), Column("pass rate", 1),
                   Column("mean headline", 1)]
        rows = [(name, str(figures.rows), str(figures.scored), percent(figures.pass_rate, missing=DASH),
                 number(figures.mean_headline, 1, missing=DASH))
                for name, figures in sorted(summary.models.items(), key=lambda item: -(item[1].mean_headline or 0))]
        console.print(fitted_table(console, columns, rows, title_justify="left"))
    unscored = summary.rows - summary.scored
    for row, status, reason in summary.problems[:10]:
        console.print(f"[red]row {row}[/] {status}: {shown(reason)}", highlight=False)
    if unscored > 10 and summary.problems:
        console.print(f"... {unscored} rows not scored in all; see the status and error columns of the results.")


def show_samples(console: Console, samples: Sequence[JudgmentSample]) -> None:
    """Each judge's judgment behind a verdict: how far they agree, and one line per sample."""
    scored = [sample for sample in samples if sample.status == RowState.SCORED]
    split = split_text(scored)
    agree = f"split {split}" if split else f"{len(scored)}/{len(scored)} agree"
    failed = f" · {len(samples) - len(scored)} not scored" if len(scored) < len(samples) else ""
    console.print(shown(f"{len(samples)} samples · {agree}{failed}"), style="yellow" if split else None)
    for sample in sorted(samples, key=lambda sample: sample.sample):  # saved as they arrived: shown in order
        if sample.status == RowState.SCORED:
            mark = "pass" if sample.passed else "fail"
            what = f"{sample.headline:.0f}/100 {mark}" + (f" {sample.tag}" if sample.tag else "")
        else:
            what = f"{sample.status}: {sample.error or ''}"
        console.print("  " + shown(f"{sample.judge_model} #{sample.sample}: {what}"), highlight=False)


def show_verdict(console: Console, rubric: Rubric, verdict: Verdict, passages: int | None = None) -> None:
    """One judgment in full (with how many retrieved passages the judge read, for a case with context)."""
    if verdict.status != RowState.SCORED:
        console.print(f"[red bold]{verdict.status}[/]: {shown(verdict.error or '')}", highlight=False)
        if verdict.raw_reply:
            console.print(f"judge reply: {printable(verdict.raw_reply[:2000])}", markup=False, highlight=False)
        return
    mark = "PASS" if verdict.passed else "FAIL"
    console.print(f"[bold]{shown(rubric.title)}[/]: {shown(verdict.label or '')}  "
                  f"(headline {verdict.headline:.0f}/100, {mark})")
    console.print(printable(json.dumps({**(verdict.output or {}), **verdict.derived}, ensure_ascii=False, indent=2)),
                  markup=False, highlight=False)
    for flag in verdict.flags:
        console.print(f"[yellow]warning[/]: {shown(flag)}")
    read = "" if passages is None else f"{passages} retrieved {plural(passages, 'passage')} · "
    judge = judge_named(verdict.judge_model, verdict.reasoning_effort)
    console.print("[dim]" + shown(f"judge {judge} · rubric {verdict.rubric_name} "
                                   f"{verdict.rubric_version} · {read}{verdict.tokens_in} + {verdict.tokens_out} "
                                   f"tokens · {verdict.latency_ms} ms") + "[/]")
