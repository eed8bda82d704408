"""The card of `/judge compare`: B against A on the questions both answered, its figures in a table, the biggest
moves."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.slack.text import clip, code_block, escape, shown
from bot.slack.views.blocks import context, message, section
from bot.slack.views.limits import HEADER_LIMIT
from bot.trust.mcnemar import p_text
from bot.trust.paired import PairedReport, summary_text

MOVES_SHOWN, TEXT_ROOM = 5, 120


def compare_card(a: str, b: str, found: PairedReport, days: int | None) -> dict[str, Any]:
    """Is B better than A, from this channel's history."""
    period = f"the last {days} days" if days else "all time"
    passed_a = sum(bool(pair.a.passed) for pair in found.pairs)
    passed_b = sum(bool(pair.b.passed) for pair in found.pairs)
    width = max(len(a), len(b), 5)
    table = "\n".join([f"{'model':<{width}}  mean headline  passed",
                       f"{a:<{width}}  {found.mean_a:>13.1f}  {passed_a:>6}",
                       f"{b:<{width}}  {found.mean_b:>13.1f}  {passed_b:>6}"])
    blocks: list[Block] = [
        HeaderBlock(text=clip(f"Is {b} better than {a}?", HEADER_LIMIT)[0]),
        section(f"{escape(summary_text(a, b, found))} ({period}, this channel)"),
        section(code_block(escape(table))),
    ]
    if found.transitions:
        moves = ", ".join(f"{before} → {after} {count}" for (before, after), count in found.transitions.most_common())
        blocks.append(section(f"*Tags, {escape(a)} → {escape(b)}* {escape(moves)}"))
    for title, pairs in (("Biggest regressions", found.regressions), ("Biggest improvements", found.improvements)):
        if pairs:
            lines = [f"• {pair.difference:+.0f} ({pair.a.headline:.0f} → {pair.b.headline:.0f}) "
                     f"{shown(pair.a.question, TEXT_ROOM)[0]}" for pair in pairs[:MOVES_SHOWN]]
            blocks.append(section(f"*{title}*\n" + "\n".join(lines)))
    similar = ("no pair of similar length" if found.similar_difference is None else
               f"{found.similar_difference:+.1f} over the {found.similar_n} pairs of similar length")
    unpaired = f"{len(found.unpaired_a)} answered by {escape(a)} only, {len(found.unpaired_b)} by {escape(b)} only"
    sign = "n/a" if found.sign_p is None else p_text(found.sign_p)
    blocks.append(context(f"length: {similar}", unpaired, f"sign test {sign}",
                          "the chart of paired differences is in the thread"))
    return message(blocks, escape(f"Is {b} better than {a}? {summary_text(a, b, found)}"))
