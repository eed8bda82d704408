"""The card of `/judge compare`: B against A on the questions both have a score for, a block per rubric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.slack.text import clip, code_block, escape, shown
from bot.slack.views.blocks import context, message, section, warning_blocks
from bot.slack.views.size_limits import HEADER_LIMIT
from bot.trust.model_comparison import ModelComparison, judges_text, summary_text, warnings

MOVES_SHOWN, TEXT_ROOM = 5, 120
RUBRICS_SHOWN = 4  # rubrics with pairs shown on one card (up to ten blocks each, within Slack's 50)


def compare_card(a: str, b: str, reports: Sequence[ModelComparison], days: int | None) -> dict[str, Any]:
    """Is B better than A, from this channel's history: a block per rubric with pairs, in the order given, the first
    RUBRICS_SHOWN (answers graded with different rubrics are never pooled), the rubric named in each."""
    period = f"the last {days} days" if days else "all time"
    paired = [found for found in reports if found.pairs]
    blocks: list[Block] = [HeaderBlock(text=clip(f"Is {b} better than {a}?", HEADER_LIMIT)[0])]
    if len(paired) > 1:
        blocks.append(context(f"{len(paired)} rubrics, each compared on its own: "
                              f"{escape(', '.join(found.rubric for found in paired))}"))
    for found in paired[:RUBRICS_SHOWN]:
        blocks += _rubric_blocks(a, b, found, period)
    if len(paired) > RUBRICS_SHOWN:
        blocks.append(context(f"and {len(paired) - RUBRICS_SHOWN} more rubrics: `judgebot compare --model A --model B "
                              "--rubric NAME` shows each"))
    text = "; ".join(summary_text(a, b, found) for found in paired[:RUBRICS_SHOWN])
    return message(blocks, escape(f"Is {b} better than {a}? {text}"))


def _rubric_blocks(a: str, b: str, found: ModelComparison, period: str) -> list[Block]:
    passed_a = sum(bool(pair.a.passed) for pair in found.pairs)
    passed_b = sum(bool(pair.b.passed) for pair in found.pairs)
    width = max(len(a), len(b), 5)
    table = "\n".join([f"{'model':<{width}}  mean headline  passed",
                       f"{a:<{width}}  {found.mean_a:>13.1f}  {passed_a:>6}",
                       f"{b:<{width}}  {found.mean_b:>13.1f}  {passed_b:>6}"])
    blocks: list[Block] = [
        section(f"*Rubric {escape(found.rubric)}*: {escape(summary_text(a, b, found))} ({period}, this channel)"),
        section(code_block(escape(table))),
        context(escape(judges_text(a, b, found))),
        *warning_blocks(warnings(a, b, found)),
    ]
    if found.transitions:
        moves = ", ".join(f"{before} → {after} {count}" for (before, after), count
                          in sorted(found.transitions.items(), key=lambda item: (-item[1], item[0])))
        blocks.append(section(f"*Tags, {escape(a)} → {escape(b)}* {escape(moves)}"))
    for title, pairs in (("Biggest regressions", found.regressions), ("Biggest improvements", found.improvements)):
        if pairs:
            lines = [f"• {pair.difference:+.0f} ({pair.a.headline:.0f} → {pair.b.headline:.0f}) "
                     f"{shown(pair.a.question, TEXT_ROOM)[0]}" for pair in pairs[:MOVES_SHOWN]]
            blocks.append(section(f"*{title}*\n" + "\n".join(lines)))
    similar = ("no pair of similar length" if found.similar is None else
               f"over the pairs of similar length, paired difference {found.similar.text('pairs')}")
    blocks.append(context(escape(f"length: {similar}"), "the chart of paired differences is in the thread"))
    return blocks
