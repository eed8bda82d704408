"""The card of `/judge judges compare`: a candidate judge beside the channel's, against its people's labels and on a
sample of its recent judgments, with Use this judge in this channel and Keep the current judge."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, HeaderBlock

from bot.figures import percent
from bot.slack.text import clip, escape, shown
from bot.slack.views.blocks import context, message, section
from bot.slack.views.limits import HEADER_LIMIT
from bot.trust.compare import HistorySide, LabeledSide
from bot.trust.mcnemar import p_text
from bot.trust.texts import agreement_text

JUDGE_USE, JUDGE_KEEP = "judgebot_judge_use", "judgebot_judge_keep"
FLIPS_SHOWN, TEXT_ROOM = 5, 120


def choice_value(channel_id: str, model: str) -> str:
    """What the card's buttons carry: the channel the comparison was made for, and the candidate."""
    return json.dumps({"channel": channel_id, "model": model}, separators=(",", ":"))


def judges_card(old: str, new: str, rubric: str, labeled: LabeledSide | None, history: HistorySide,
                channel_id: str) -> dict[str, Any]:
    """Both judges against people and against each other, and the buttons that decide."""
    blocks: list[Block] = [HeaderBlock(text=clip(f"{new} against {old}, the judge of this channel", HEADER_LIMIT)[0])]
    if labeled is not None:
        p = "n/a (they never differ)" if labeled.p is None else p_text(labeled.p)
        blocks.append(section(
            f"*Against this channel's labels* (`{escape(rubric)}`)\n"
            f"*{escape(old)}* (in use) {escape(agreement_text(labeled.old))}\n"
            f"*{escape(new)}* (candidate) {escape(agreement_text(labeled.new))}\n"
            f"right where the other was wrong: {escape(new)} {labeled.new_right}, {escape(old)} {labeled.old_right} "
            f"(McNemar {p}, over {labeled.paired} cases)"))
    else:
        blocks.append(section("No labeled cases here: the judges are compared on recent judgments only."))
    if history.n:
        shift = "" if history.shift is None else f"; mean headline shift {history.shift:+.1f} points" + (
            "" if history.shift_interval is None else
            f" (95% CI {history.shift_interval[0]:+.1f} to {history.shift_interval[1]:+.1f})")
        blocks.append(section(
            f"*On {history.n} recent judgments* (a random sample, judged again by both)\n"
            f"the same pass/fail on {percent(history.agreement)} ({history.same_pass}/{history.pass_n}); "
            f"pass → fail {history.to_fail}, fail → pass {history.to_pass}{shift}"))
        flips = [f"• {shown(flip.question, TEXT_ROOM)[0]}: {escape(old)} "
                 f"{'pass' if flip.old.passed else 'fail'}, {escape(new)} {'pass' if flip.new.passed else 'fail'}"
                 for flip in history.flips[:FLIPS_SHOWN]]
        if flips:
            blocks.append(section("*Flipped*\n" + "\n".join(flips)))
    value = choice_value(channel_id, new)
    blocks.append(ActionsBlock(elements=[
        ButtonElement(text="Use this judge in this channel", action_id=JUDGE_USE, value=value, style="primary"),
        ButtonElement(text="Keep the current judge", action_id=JUDGE_KEEP, value=value)]))
    blocks.append(context("admins decide; the runs of this comparison count in no figure of the channel"))
    return message(blocks, escape(f"{new} against {old}, the judge of this channel"))
