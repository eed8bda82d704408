"""The review queue in Slack: a case to label (with the judge's verdict unless the channel reviews blind), what was
saved, the reviewers' settings, and the nudge a reviewer gets."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement

from bot.figures import plural
from bot.records import context_of
from bot.slack.text import escape, shown
from bot.slack.views.blocks import context, message, notice, section
from bot.slack.views.card import LABEL_ROOM
from bot.slack.views.commands import FormContext
from bot.store import Judgment, QueueState, ReviewSetup
from bot.trust.review import REASONS

REVIEW_AGREE, REVIEW_LABEL, REVIEW_SKIP = "judgebot_review_agree", "judgebot_review_label", "judgebot_review_skip"
REVIEW_START = "judgebot_review_start"  # the nudge's button
REVIEW_FORM = "judgebot_review_form"  # the callback of a reviewer's label form
REVIEW_PICK = "judgebot_review_pick_"  # a pair's buttons: this, then the winner a reviewer picks (A, B or tie)
PICKS = {"A": ":point_left: A is better", "B": "B is better :point_right:", "tie": "Neither: a tie"}
TEXT_ROOM = 900  # characters of each text of a case shown


class ReviewContext(FormContext):
    """Where a reviewer's label form was opened (the case's channel and workspace), and the case it labels."""

    judgment_id: int
    case_id: int


def verdict_text(judgment: Judgment) -> str:
    """The judge's verdict in one line."""
    label = shown(judgment.label or "", LABEL_ROOM)[0]
    score = f"{judgment.headline:.0f}/100" if judgment.headline is not None else "no score"
    return f"*{label}* · {score} · {'passed' if judgment.passed else 'did not pass'}"


def case_card(case_id: int, reason: str, judgment: Judgment, *, blind: bool, waiting: int,
              done: str | None = None) -> dict[str, Any]:
    """One case to label: its texts (with the retrieved passages of a case that has them), why it is asked, the
    judge's verdict unless blind, and the buttons; `done` says first what was saved of the case before."""
    blocks: list[Block] = [section(done)] if done else []
    why = REASONS.get(reason, reason)
    more = f" · {waiting:,} more wait" if waiting else ""
    blocks.append(section(f":mag: *A case for your label* ({escape(why)}{more})"))
    for name in ("question", "reference", "answer"):
        blocks.append(section(f"*{name.capitalize()}*\n{shown(getattr(judgment, name), TEXT_ROOM)[0]}"))
    if (passages := context_of(judgment.context)) is not None:  # what the judge graded the answer against
        listed = "\n".join(f"[{number}] {passage}" for number, passage in enumerate(passages, 1))
        blocks.append(section(f"*Retrieved context* ({len(passages)} {plural(len(passages), 'passage')})\n"
                              f"{shown(listed or 'no passage was retrieved', TEXT_ROOM * 2)[0]}"))
    if blind:
        blocks.append(context("Blind review: the judge's verdict is shown once your label is saved."))
    else:
        blocks.append(section(f"*The judge said* {verdict_text(judgment)}"))
    buttons = [ButtonElement(text=":pencil2: Label it", action_id=REVIEW_LABEL, value=str(case_id), style="primary")]
    if not blind:
        buttons.insert(0, ButtonElement(text=":+1: The judge is right", action_id=REVIEW_AGREE, value=str(case_id)))
    buttons.append(ButtonElement(text="Skip", action_id=REVIEW_SKIP, value=str(case_id)))
    blocks.append(ActionsBlock(elements=buttons))
    blocks.append(context(f"{escape(judgment.rubric_name)} · judge `{escape(judgment.judge_model)}` · #{judgment.id}"))
    fallback = f"A case waits for your label: {shown(judgment.question, 100)[0]}"
    return {**message(blocks, fallback), "replace_original": True}


def judge_said_of_pair(orders: list[Judgment]) -> str:
    """What the judge said of a pair in each order, in the file's terms: "A with A shown first, B with B shown
    first"."""
    flip = {"A": "B", "B": "A", "tie": "tie"}
    said = []
    for order in sorted(orders, key=lambda row: bool(row.swapped)):
        winner = (order.output or {}).get("winner") if order.status == "scored" else None
        named = flip.get(str(winner), "-") if order.swapped else (str(winner) if winner else "-")
        said.append(f"{escape(named)} with {'B' if order.swapped else 'A'} shown first")
    return ", ".join(said)


def pair_case_card(case_id: int, reason: str, judgment: Judgment, orders: list[Judgment], *, blind: bool,
                   waiting: int, done: str | None = None) -> dict[str, Any]:
    """A pair to settle: the question, the reference and both answers as A and B (never the models' names), what
    the judge said in each order unless blind, and a button per winner."""
    blocks: list[Block] = [section(done)] if done else []
    more = f" · {waiting:,} more wait" if waiting else ""
    blocks.append(section(f":mag: *Which answer is better?* ({escape(REASONS.get(reason, reason))}{more})"))
    for name, text in (("Question", judgment.question), ("Reference", judgment.reference),
                       ("Answer A", judgment.answer), ("Answer B", judgment.answer_b or "")):
        blocks.append(section(f"*{name}*\n{shown(text, TEXT_ROOM)[0]}"))
    if blind:
        blocks.append(context("Blind review: what the judge said is shown once your choice is saved."))
    else:
        blocks.append(section(f"*The judge said* {judge_said_of_pair(orders)}"))
    buttons = [ButtonElement(text=text, action_id=f"{REVIEW_PICK}{winner}", value=str(case_id))
               for winner, text in PICKS.items()]
    buttons.append(ButtonElement(text="Skip", action_id=REVIEW_SKIP, value=str(case_id)))
    blocks.append(ActionsBlock(elements=buttons))
    blocks.append(context(f"{escape(judgment.rubric_name)} · judge `{escape(judgment.judge_model)}` · #{judgment.id} · "
                          "the models' names are not shown"))
    fallback = f"Which answer is better? {shown(judgment.question, 100)[0]}"
    return {**message(blocks, fallback), "replace_original": True}


def saved_text(judgment: Judgment, *, passed: bool | None, agreed: bool) -> str:
    """What was saved of a case, and what the judge had said (shown only now in blind review)."""
    if agreed:
        return f":white_check_mark: Saved: you agree with the judge on #{judgment.id} ({verdict_text(judgment)})."
    if passed is None or judgment.passed is None:
        side = ""
    else:
        side = " You agree on pass/fail." if passed == judgment.passed else " You differ on pass/fail."
    return f":white_check_mark: Saved your label of #{judgment.id}. The judge said {verdict_text(judgment)}.{side}"


def queue_empty(channel_id: str, done: str | None, state: QueueState) -> dict[str, Any]:
    """No case waits for this person."""
    text = f"No case of <#{channel_id}> waits for your label"
    text += f" ({state.open:,} open, each held by another reviewer or labeled by you)." if state.open else "."
    return {**notice(f"{done}\n{text}" if done else text), "replace_original": True}


def reviewers_text(setup: ReviewSetup, state: QueueState, channel_id: str) -> str:
    """Who the channel's queue asks, blind review, the nudge, and the queue."""
    who = ", ".join(f"<!subteam^{ident}>" if ident.startswith("S") else f"<@{ident}>" for ident in setup.reviewers)
    lines = [f"*Reviewers of <#{channel_id}>*: {who or 'none set: anyone here may label with `/judge review`'}",
             f"Blind review: {'on' if setup.blind else 'off'} (`/judge review blind on|off`)"]
    if setup.nudges:
        lines.append(f"Nudge: weekdays at {setup.nudge_hour:02d}:{setup.nudge_minute:02d} "
                     f"{escape(setup.nudge_timezone or '')} (`/judge review nudge off`)")
    else:
        lines.append("Nudge: off (`/judge review nudge 10:00 Europe/Berlin`)")
    oldest = f", the oldest queued {state.oldest:%Y-%m-%d}" if state.oldest else ""
    lines.append(f"Queue: {state.open:,} open{oldest}; {state.labeled:,} labeled in the last 7 days")
    return "\n".join(lines)


def nudge_message(channel_id: str, waiting: int) -> dict[str, Any]:
    """A reviewer's nudge: how many cases wait in a channel, and a button that starts reviewing there."""
    cases = "1 case waits" if waiting == 1 else f"{waiting:,} cases wait"
    text = f":mag: {cases} for your label in <#{channel_id}>."
    button = ButtonElement(text="Start reviewing", action_id=REVIEW_START, value=channel_id, style="primary")
    return message([section(text), ActionsBlock(elements=[button])], text)
