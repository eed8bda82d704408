"""The card of `/judge judges compare`: a candidate judge beside the channel's, against its people's labels and on a
sample of its recent judgments, with Use this judge in this channel and Keep the current judge."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, HeaderBlock

from bot.figures import percent
from bot.slack.text import clip, escape, shown
from bot.slack.views.blocks import context, message, section
from bot.slack.views.size_limits import HEADER_LIMIT
from bot.trust.calibration_texts import agreement_text
from bot.trust.judge_comparison import HistorySide, LabeledSide

JUDGE_USE, JUDGE_KEEP = "judgebot_judge_use", "judgebot_judge_keep"
FLIPS_SHOWN, TEXT_ROOM = 5, 120
FIGURES_ROOM = 900  # characters of figures a button carries (Slack allows 2,000 in a value)


def choice_value(channel_id: str, model: str, rubric: str = "", figures: str = "") -> str:
    """What the card's buttons carry: the channel the comparison was made for, the candidate, the rubric and the
    figures it rests on (kept with the channel's judge when it is used)."""
    return json.dumps({"channel": channel_id, "model": model, "rubric": rubric,
                       "figures": clip(figures, FIGURES_ROOM)[0]}, separators=(",", ":"))


def figures_note(old: str, new: str, labeled: LabeledSide | None, history: HistorySide) -> str:
    """The comparison's figures in one plain line, such as the channel's judge record keeps."""
    parts = []
    if labeled is not None:
        parts.append(f"against people {new} {agreement_text(labeled.new, note=False)}, {old} "
                     f"{agreement_text(labeled.old, note=False)}, {labeled.mcnemar_text()}")
    if history.pass_n:
        parts.append(f"on {history.n} recent judgments the same pass/fail {percent(history.agreement)} "
                     f"({history.same_pass}/{history.pass_n}), pass to fail {history.to_fail}, fail to pass "
                     f"{history.to_pass}")
    return "; ".join(parts) or "no figures (nothing both judges scored)"


def judges_card(old: str, new: str, rubric: str, labeled: LabeledSide | None, history: HistorySide,
                channel_id: str) -> dict[str, Any]:
    """Both judges against people and against each other, and the buttons that decide."""
    blocks: list[Block] = [HeaderBlock(text=clip(f"{new} against {old}, the judge of this channel", HEADER_LIMIT)[0])]
    if labeled is not None:
        blocks.append(section(
            f"*Against this channel's labels* (`{escape(rubric)}`)\n"
            f"*{escape(old)}* (in use) {escape(agreement_text(labeled.old))}; kappa "
            f"{escape(labeled.old.kappa_pass.text(note=False))}\n"
            f"*{escape(new)}* (candidate) {escape(agreement_text(labeled.new))}; kappa "
            f"{escape(labeled.new.kappa_pass.text(note=False))}\n"
            f"right where the other was wrong: {escape(new)} {labeled.new_right}, {escape(old)} {labeled.old_right} "
            f"({escape(labeled.mcnemar_text())})"))
    else:
        blocks.append(section("No labeled cases here: the judges are compared on recent judgments only."))
    if history.n:
        blocks.append(section(_between(history)))
        flips = [f"• {shown(flip.question, TEXT_ROOM)[0]}: {escape(old)} "
                 f"{'pass' if flip.old.passed else 'fail'}, {escape(new)} {'pass' if flip.new.passed else 'fail'}"
                 for flip in history.flips[:FLIPS_SHOWN]]
        if flips:
            more = len(history.flips) - FLIPS_SHOWN
            blocks.append(section("*Flipped*\n" + "\n".join(flips) + (f"\n…and {more} more" if more > 0 else "")))
    value = choice_value(channel_id, new, rubric, figures_note(old, new, labeled, history))
    blocks.append(ActionsBlock(elements=[
        ButtonElement(text="Use this judge in this channel", action_id=JUDGE_USE, value=value, style="primary"),
        ButtonElement(text="Keep the current judge", action_id=JUDGE_KEEP, value=value)]))
    blocks.append(context("admins decide; the runs of this comparison count in no figure of the channel"))
    return message(blocks, escape(f"{new} against {old}, the judge of this channel"))


def _between(history: HistorySide) -> str:
    """The two judges against each other on the recent judgments: same pass/fail, kappa, flips, headline shift."""
    shift = "" if history.shift is None else f"; mean headline shift {history.shift_text()}"
    interval = "" if history.interval is None else \
        f", 95% CI {percent(history.interval[0])}-{percent(history.interval[1])}"
    kappa = f"; kappa between them {escape(history.kappa.text(note=False))}" if history.pass_n else ""
    return (f"*On {history.n} recent judgments* (a random sample, judged again by both)\n"
            f"the same pass/fail on {percent(history.agreement)} ({history.same_pass}/{history.pass_n}){interval}"
            f"{kappa}; pass → fail {history.to_fail}, fail → pass {history.to_pass}{shift}")
