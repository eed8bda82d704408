"""The summary card of a file of pairs judged pairwise: B's win rate over A with its interval, the judge's position
consistency and bias, a ranking for more than two models, the inconsistent pairs, tokens and cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.figures import plural
from bot.records import RowState
from bot.slack.text import clip, escape, plain, shown
from bot.slack.views.blocks import context, listing, message, section, warning_blocks
from bot.slack.views.size_limits import HEADER_LIMIT
from bot.trust.pairwise_texts import consistency_text, outcomes_text, people_text, position_text, rated_text, win_rate_text

if TYPE_CHECKING:
    from bot.rubric import Rubric
    from bot.runs.pairwise_summary import PairsSummary
    from bot.store import Run
    from bot.trust.review import SentToReview

INCONSISTENT_SHOWN = 10
PROBLEMS_SHOWN = 10


def pairs_card(run: Run, rubric: Rubric, found: PairsSummary, results_name: str,
               review: SentToReview | None = None, warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The end of a pairwise run, every text from outside escaped (model names, questions, reasons); `warnings`
    (such as its judge's coming shutdown) under its header."""
    summary, figures = found.summary, found.report
    orders = "in both orders" if figures.swapped else "once each (every other pair B first)"
    head: list[Block] = [
        HeaderBlock(text=clip(f"Pairwise · {plain(run.source_name or 'file', 80)} · {rubric.title}", HEADER_LIMIT)[0]),
        *warning_blocks(warnings),
        section(f"*{figures.pairs:,} {plural(figures.pairs, 'pair')}* judged {orders}: {escape(outcomes_text(figures))}"
                + (f", {found.malformed:,} malformed rows" if found.malformed else "")
                + (f", {summary.errors:,} judge errors" if summary.errors else "")),
    ]
    if figures.matchups:
        head.append(section("*Win rate* (ties split)\n" + "\n".join(f"• {escape(win_rate_text(match))}"
                                                                     for match in figures.matchups[:10])))
    bias = ":warning: " if figures.position_bias else ""
    people = people_text(figures)
    head.append(section(f"*Position consistency*: {escape(consistency_text(figures))}\n"
                        f"*Position*: {bias}{escape(position_text(figures))}"
                        + (f"\n*People*: {escape(people)}" if people else "")))
    if review is not None and review.total:
        head.append(section(f":mag: {review.text()}: `/judge review` asks you which answer is better."))
    elif review is not None and review.text():
        head.append(section(f":mag: {review.text()}."))
    if figures.ranking:
        ranked = [f"{place}. *{shown(item.model, 80)[0]}* {escape(rated_text(item))}"
                  for place, item in enumerate(figures.ranking[:15], 1)]
        head.append(section("*Bradley-Terry ranking* (Elo scale)\n" + "\n".join(ranked)))
    inconsistent = [section(f"• row {pair.line}: {shown(' '.join(pair.question.split()), 150)[0]}")
                    for pair in figures.inconsistent[:INCONSISTENT_SHOWN]]
    if inconsistent:
        head.append(section(f"*Inconsistent pairs* ({len(figures.inconsistent):,}, counted as ties): the winner "
                            "changed with the order"))
    problems = [section(f"• row {row} ({status}): {shown(reason, 400)[0]}")
                for row, status, reason in summary.problems[:PROBLEMS_SHOWN]]
    entries = [*inconsistent, *problems]
    blocks = listing(head, entries, more="{n} more; the consistent, status and error columns of the results file "
                                         "list them")
    pending = summary.counts[RowState.PENDING]
    reused = f"{summary.cached:,} judgments reused from the history (not billed)" if summary.cached else ""
    blocks.append(context(f"{summary.tokens_in + summary.tokens_out:,} tokens", escape(summary.cost_text()), reused,
                          f"{pending:,} judgments not made" if pending else "", f"judge `{escape(run.judge_model)}`",
                          f"{escape(rubric.name)} {escape(rubric.version)}",
                          f"every pair with both orders' verdicts is in {escape(results_name)}"))
    lead = figures.matchups[0] if figures.matchups else None
    fallback = (f"Pairwise results of {shown(run.source_name or 'file', 80)[0]}: "
                + (shown(win_rate_text(lead), 300)[0] if lead is not None else "no pair was judged"))
    return message(blocks, fallback)


def chart_rows(found: PairsSummary) -> list[tuple[str, str, int, int, int]]:
    """The matchups as the win-rate chart draws them: (A, B, B's wins, ties, B's losses)."""
    return [(match.a, match.b, match.wins, match.ties, match.losses) for match in found.report.matchups]
