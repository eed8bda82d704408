"""What the terminal shows of the history: runs, latest judgments, each model's stats with what people said, and
a channel's digest."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.views.terminal_text import DASH, Column, fitted_table, shown
from bot.figures import money, number, percent, spend_parts
from bot.records import RowState, RunState

if TYPE_CHECKING:  # only types: the terminal must not load the judge or the database to draw a table
    from bot.digest import Digest
    from bot.store import Figures, ListedJudgment, ListedRun


def show_runs(console: Console, runs: Iterable[ListedRun]) -> None:
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


def show_history(console: Console, judgments: Iterable[ListedJudgment]) -> None:
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
    from bot.trust.people_agreement import people_agreement

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
        from bot.trust.review_queue import queue_text

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
