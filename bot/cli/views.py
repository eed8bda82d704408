"""What the terminal shows: a run's estimate and summary, one verdict and its samples, rubric lists and goldens, runs,
history, stats and a channel's digest."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from bot.cli.screen import DASH, Column, fitted_table, printable, shown
from bot.figures import money, number, percent, spend_parts
from bot.judge.samples import split_text
from bot.records import RowState, RunState

if TYPE_CHECKING:  # only types: the terminal must not load the judge or the database to draw a table
    from bot.digest import Digest
    from bot.records import Verdict
    from bot.rubric import Rubric
    from bot.runs import Summary
    from bot.runs.estimate import Estimate
    from bot.runs.goldens import GoldenResult
    from bot.store import Figures, Judgment, JudgmentSample, Run


def show_estimate(console: Console, lead: str, estimate: Estimate) -> None:
    """What a run is likely to cost, before it starts, and what the expected reply size rests on."""
    console.print(shown(f"{lead}: {estimate.text()}; replies sized from {estimate.reply_basis}, prompts without "
                        "the provider's cache discount."), highlight=False)


def show_summary(console: Console, run: Run, rubric: Rubric, summary: Summary, out: Any) -> None:
    """The end-of-run table: counts, pass rate, mean of each criterion, tags, tokens, cost, worst rows."""
    table = Table(title=shown(f"Run {run.id} · {rubric.title} ({rubric.name} {rubric.version}) · judge {run.judge_model}"),
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
    table.add_row("tokens", f"{summary.tokens_in:,} in{cached} · {summary.tokens_out:,} out")
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


def show_verdict(console: Console, rubric: Rubric, verdict: Verdict) -> None:
    """One judgment in full."""
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
    console.print("[dim]" + shown(f"judge {verdict.judge_model} · rubric {verdict.rubric_name} "
                                   f"{verdict.rubric_version} · {verdict.tokens_in} + {verdict.tokens_out} tokens · "
                                   f"{verdict.latency_ms} ms") + "[/]")


def show_rubrics(console: Console, rubrics: Iterable[Rubric]) -> None:
    """The rubric list."""
    table = Table("name", "aliases", "version", "description")
    for rubric in rubrics:
        table.add_row(*(shown(text) for text in (rubric.name, ", ".join(rubric.aliases), rubric.version,
                                                   rubric.description)))
    console.print(table)


def show_goldens(console: Console, rubric: Rubric, results: list[GoldenResult]) -> None:
    """How a rubric's goldens came out."""
    for result in results:
        verdict = result.verdict
        state = "[green]ok[/]" if result.ok else "[red]MISS[/]"
        detail = verdict.label if verdict.status == RowState.SCORED else f"{verdict.status}: {verdict.error}"
        console.print(f"{state} {shown(f'{rubric.name}/{result.golden.name}: {detail}')}", highlight=False)
        for miss in result.misses:
            console.print(f"     {shown(miss)}", highlight=False)


def show_runs(console: Console, runs: Iterable[Run]) -> None:
    """Recent runs."""
    columns = [Column("run"), Column("created (UTC)", 2), Column("status", free_text=True), Column("rubric", 1),
               Column("rows", 1), Column("source", 3, free_text=True), Column("judge", 4)]
    runs = list(runs)
    rows = [(str(run.id), f"{run.created_at:%Y-%m-%d %H:%M}", run.status, f"{run.rubric_name} {run.rubric_version}",
             str(run.total_rows), run.source_name or run.source, run.judge_model) for run in runs]
    console.print(fitted_table(console, columns, rows))
    for run in runs:  # why each run stopped, a line each: the status column keeps a word
        if run.stop_reason and run.status != RunState.PENDING:
            resume = f"; `judgebot resume {run.id}` finishes it" if run.status in ("paused", "interrupted") else ""
            console.print(shown(f"run {run.id} {run.status} ({run.stop_reason}){resume}"), highlight=False)


def show_history(console: Console, judgments: Iterable[Judgment]) -> None:
    """The latest judgments of a channel, newest first."""
    columns = [Column("#", 4), Column("when (UTC)", 3), Column("rubric", 2), Column("model under test"),
               Column("headline", 1, free_text=True), Column("asked by", 5), Column("question", 2, free_text=True)]
    rows = []
    for row in judgments:
        headline = row.label or "" if row.status == RowState.SCORED else f"judge {row.status}"
        mark = "" if row.status != RowState.SCORED else ("pass · " if row.passed else "fail · ")
        rows.append((str(row.id), f"{row.created_at:%Y-%m-%d %H:%M}", row.rubric_name, row.model_name or DASH,
                     mark + headline, row.user_id or DASH, " ".join(row.question.split())[:60]))
    console.print(fitted_table(console, columns, rows))


def people_text(figures: Figures) -> str:
    """How far people agree with the judge on a model's rows: every label, correction and vote, with its interval
    and n; a dash when none says pass or fail."""
    from bot.trust.calibration_texts import agreement_text
    from bot.trust.report import people_agreement

    agreement = people_agreement(figures.said)
    return DASH if agreement.agreement is None else agreement_text(agreement)


def show_stats(console: Console, figures: Iterable[Figures], title: str) -> None:
    """Per model and rubric figures, each case once: cases, judgments of them a later one replaced, mean headline,
    pass rate, tags, judge errors, agreement with people's labels; then what the verdicts mix."""
    figures = list(figures)
    columns = [Column("model under test"), Column("rubric", 1), Column("cases", 2), Column("judged again", 4),
               Column("mean headline", 1), Column("pass rate", 2), Column("tags", 5, free_text=True),
               Column("judge errors", 3), Column("people agree", 4)]
    rows = []
    for f in figures:
        tags = ", ".join(f"{tag} {n}" for tag, n in sorted(f.tags.items(), key=lambda item: -item[1]))
        unsure = "" if f.unsure_rate is None else f" · unsure {f.unsure_rate:.0%}"
        rows.append((f.model_name or DASH, f.rubric_name, str(f.cases), str(f.rejudged),
                     number(f.mean_headline, 1, missing=DASH), percent(f.pass_rate, missing=DASH) + unsure, tags or DASH,
                     str(f.errors), people_text(f)))
    console.print(fitted_table(console, columns, rows, title=shown(title)))
    show_mixed(console, figures)


def show_mixed(console: Console, figures: Iterable[Figures]) -> None:
    """A warning for each model and rubric whose counted verdicts mix judge models or rubric texts."""
    for f in figures:
        if f.mixed:
            console.print(f"[yellow]mixed verdicts[/]: {shown(f.model_name or DASH)} · {shown(f.rubric_name)}: "
                          f"{shown('; '.join(f.mixed))} (each case counted once, with its latest verdict)",
                          highlight=False)


def show_digest(console: Console, digest: Digest, title: str) -> None:
    """A channel's digest: per model and rubric figures against the week before, regressions, worst, judge changes,
    and how far people's labels say the judge can be trusted."""

    for warning in digest.warnings:
        console.print(f"[yellow]warning[/]: {shown(warning)}", highlight=False)
    if digest.quiet:
        console.print(f"{shown(title)}: no judgments over these 7 days.")
        return
    if digest.lines:
        _digest_table(console, digest, title)
    else:
        console.print(shown(title), highlight=False)
    if digest.pairwise:
        from bot.trust.pairwise_texts import win_rate_text

        console.print("Pairwise win rates (each pair judged in both orders, ties split):", highlight=False)
        for match in digest.pairwise:
            console.print(shown(f"  {win_rate_text(match)}"), highlight=False)
    _digest_rest(console, digest)


def _digest_table(console: Console, digest: Digest, title: str) -> None:
    """The digest's figures per model and rubric, against the week before."""
    from bot.digest import signed

    columns = [Column("model under test"), Column("rubric", 1), Column("cases", 1), Column("mean headline", 1),
               Column("change", 1), Column("pass rate", 2), Column("change", 2), Column("tags", 5, free_text=True),
               Column("judge errors", 3), Column("people agree", 4)]
    rows = []
    for line in digest.lines:
        f = line.now
        tags = ", ".join(f"{tag} {n / f.scored:.0%}" for tag, n in sorted(f.tags.items(), key=lambda item: -item[1]))
        agree = people_text(f)
        errors = DASH if line.error_rate is None else f"{line.error_rate:.0%} ({f.errors})"
        unsure = "" if f.unsure_rate is None else f" · unsure {f.unsure_rate:.0%}"
        rows.append((f.model_name or DASH, f.rubric_name, str(f.cases), number(f.mean_headline, 1, missing=DASH),
                     signed(line.change) or "new", percent(f.pass_rate, missing=DASH) + unsure,
                     signed(line.pass_change, " pts") or "new", tags or DASH, errors, agree))
    console.print(fitted_table(console, columns, rows, title=shown(title)))
    show_mixed(console, [line.now for line in digest.lines])


def _digest_rest(console: Console, digest: Digest) -> None:
    """What the digest says besides its figures: spend, judge changes, trust, the review queue, the judges among
    themselves, regressions and the lowest scores."""
    from bot.trust.calibration_texts import labels_text as labels

    if digest.spend is not None and digest.spend.by_judge:
        console.print(shown(f"Spent on judging: {money(digest.spend.usd)} ({', '.join(spend_parts(digest.spend.by_judge))})"),
                      highlight=False)
    for change in digest.changes:
        console.print(f"[yellow]the judge changed[/]: {shown(change.what)} {shown(change.before)} -> "
                      f"{shown(change.after)} from {change.since:%Y-%m-%d %H:%M} UTC")
    if digest.trust:
        console.print("How far to trust the judge this week (people's labels of these judgments):", highlight=False)
    for found in digest.trust:
        console.print(shown(f"  {found.rubric_name}"), highlight=False)
        console.print(shown(f"    this week: {labels(found.week)}"), highlight=False)
        console.print(shown(f"    the 4 weeks before: {labels(found.before)}"), highlight=False)
        for doubt in found.doubts:
            console.print(f"  [yellow]warning[/]: {shown(str(doubt))}", highlight=False)
    if digest.queue is not None:
        from bot.trust.review import queue_text

        console.print(f"{queue_text(digest.queue)}.", highlight=False)
    for name, alphas, tagged in digest.alphas:
        console.print(shown(f"Judges among themselves, {name}: {alphas.text(tagged)} (Krippendorff's alpha)"),
                      highlight=False)
    if digest.regressions:
        columns = [Column("#", 3), Column("model under test"), Column("rubric", 1), Column("before", 1),
                   Column("after", 1), Column("question", 2, free_text=True)]
        regressions = [(str(r.example.judgment_id), r.example.model_name or DASH, r.example.rubric_name, f"{r.before:.0f}",
                 f"{r.after:.0f}", " ".join(r.example.question.split())[:60]) for r in digest.regressions]
        console.print(fitted_table(console, columns, regressions, title="Biggest regressions"))
    if digest.worst:
        columns = [Column("#", 3), Column("headline", 1), Column("model under test"), Column("rubric", 1),
                   Column("row", 4), Column("question", 2, free_text=True)]
        worst = [(str(e.judgment_id), f"{e.headline:.0f}", e.model_name or DASH, e.rubric_name,
                 DASH if e.row_number is None else str(e.row_number), " ".join(e.question.split())[:60])
                for e in digest.worst]
        console.print(fitted_table(console, columns, worst, title="Lowest scores"))
