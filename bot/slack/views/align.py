"""The card of `/judge align`: the rubric as it is beside the candidate on held-out cases, the cases it fixed and broke,
its examples and people's notes, and Use in this channel, Download and Discard."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, HeaderBlock

from bot.slack.text import clip, escape, shown
from bot.slack.views.blocks import context, message, section
from bot.slack.views.size_limits import HEADER_LIMIT
from bot.trust.align import Aligned
from bot.trust.align_report import verdict_text
from bot.trust.calibration_texts import agreement_text, tag_agreement_text
from bot.trust.stats.mcnemar import p_text

ALIGN_USE, ALIGN_DOWNLOAD, ALIGN_DISCARD = "judgebot_align_use", "judgebot_align_download", "judgebot_align_discard"
CASES_SHOWN, EXAMPLES_SHOWN, TEXT_ROOM = 5, 6, 200


def align_card(revision_id: int, found: Aligned, title: str, base_version: str) -> dict[str, Any]:
    """The result of aligning a rubric in a channel, with the buttons that decide what becomes of the candidate."""
    report, candidate = found.report, found.candidate
    sides = ((f"as it is ({escape(base_version)})", report.before), (f"candidate ({escape(candidate.version)})",
                                                                      report.after))
    lines = [f"*{name}* agreement on pass/fail {escape(agreement_text(side))}; kappa {escape(side.kappa_pass.text())}"
             for name, side in sides]
    lines.append(f"pass/fail: fixed {len(report.fixed)}, broken {len(report.broken)} (McNemar {_p(report.p)})")
    if report.tag_fixed or report.tag_broken:  # the tag moved: its own agreement and test, beside pass/fail's
        lines += [f"*{name}* the same tag {escape(tag_agreement_text(side))}" for name, side in sides]
        lines.append(f"the tag: fixed {len(report.tag_fixed)}, broken {len(report.tag_broken)} (McNemar "
                     f"{_p(report.tag_p)})")
    blocks: list[Block] = [
        HeaderBlock(text=clip(f"Aligning {title} with this channel's labels", HEADER_LIMIT)[0]),
        section(f"*On {report.n} held-out cases* ({report.corrections} corrections, {found.folds}-fold "
                f"cross-validation by question: each case judged by a candidate whose examples came from other "
                f"questions)\n" + "\n".join(lines) + f"\n{verdict_text(report)}"),
    ]
    for name, changes in (("Fixed", report.fixed), ("Broken", report.broken), ("Tag fixed", report.tag_fixed),
                          ("Tag broken", report.tag_broken)):
        if changes:
            lines = [f"• people {escape(change.human)}; before {escape(change.before)}, after {escape(change.after)} · "
                     f"{shown(change.question, TEXT_ROOM)[0]}" for change in changes[:CASES_SHOWN]]
            more = f"\n…and {len(changes) - CASES_SHOWN} more" if len(changes) > CASES_SHOWN else ""
            blocks.append(section(f"*{name}*\n" + "\n".join(lines) + more))
    examples = [f"• {shown(example.question, TEXT_ROOM)[0]} → {shown(example.answer, TEXT_ROOM)[0]}: "
                f"{escape(', '.join(f'{path} {value}' for path, value in example.expected.items()))}"
                for example in candidate.examples[:EXAMPLES_SHOWN]]
    if examples:
        blocks.append(section("*The candidate's examples* (from people's corrections)\n" + "\n".join(examples)))
    if found.notes:
        notes = "\n".join(f"• {shown(note, TEXT_ROOM)[0]}" for note in found.notes[:EXAMPLES_SHOWN])
        blocks.append(section("*People's notes, to consider as guidelines* (not in the candidate: a guideline is "
                              f"not measured until it is in use)\n{notes}"))
    blocks.append(ActionsBlock(elements=[
        ButtonElement(text="Use in this channel", action_id=ALIGN_USE, value=str(revision_id), style="primary"),
        ButtonElement(text="Download", action_id=ALIGN_DOWNLOAD, value=str(revision_id)),
        ButtonElement(text="Discard", action_id=ALIGN_DISCARD, value=str(revision_id)),
    ]))
    blocks.append(context("Use in this channel: cards and files judged here use the candidate from then on (admins)",
                          f"revision #{revision_id}"))
    return message(blocks, f"Aligning {title}: agreement on held-out cases {agreement_text(report.before)} as it is, "
                           f"{agreement_text(report.after)} with the candidate")


def _p(p: float | None) -> str:
    return "n/a" if p is None else p_text(p)


def decided(card_blocks: list[dict[str, Any]], line: str) -> list[dict[str, Any]]:
    """The card's blocks once decided: its buttons replaced by what was decided, by whom."""
    kept = [block for block in card_blocks if block.get("type") != "actions"]
    return [*kept, context(line).to_dict()]
