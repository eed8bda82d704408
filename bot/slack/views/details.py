"""The Details modal of a card: every sample behind the verdict and the judge's reply exactly as returned, cut to
what a modal holds, and the plain-text file that holds the rest in the card's thread."""

from __future__ import annotations

import json
from collections.abc import Sequence

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from bot.records import RowState
from bot.slack.text import code_block, escape, pieces, shown
from bot.slack.views.blocks import Room, context, encoded_size, section, text_sections
from bot.slack.views.size_limits import MODEL_ROOM, VIEW_BLOCKS, VIEW_BYTES
from bot.slack.views.view_links import row_link
from bot.store import Judgment, JudgmentSample

SAMPLE_ERROR_ROOM = 300  # characters of a failed sample's error in the Details view
CODE_CHUNK = 2_900
VIEW_MARGIN = 1_000  # bytes of a modal besides its blocks (type, title, close) and the notes of what was cut


def sample_lines(samples: Sequence[JudgmentSample]) -> list[str]:
    """One line per sample: its judge, number, status, score, pass/fail and tag, or why it was not scored."""
    lines = []
    for sample in samples:
        parts = [f"`{shown(sample.judge_model, MODEL_ROOM)[0]}` #{sample.sample}", f"*{escape(sample.status)}*"]
        if sample.status == RowState.SCORED:
            parts += [f"{sample.headline:.0f}/100" if sample.headline is not None else "no score",
                      "pass" if sample.passed else "fail", shown(sample.tag or "no tag", MODEL_ROOM)[0]]
        else:
            parts.append(shown(sample.error or "no reason was recorded", SAMPLE_ERROR_ROOM)[0])
        lines.append("• " + " · ".join(parts))
    return lines


def reply_view(judgment: Judgment, samples: Sequence[JudgmentSample] = ()) -> View:
    """A modal showing every sample behind the verdict, then the judge's reply exactly as returned (pretty-printed
    when it is JSON), both cut to what a modal holds with a note saying so."""
    return details_view(judgment, samples)[0]


def details_file(judgment: Judgment) -> str:
    """The name of the file in the card's thread that holds what the Details modal could not."""
    return f"judgment-{judgment.id}-details.txt"


def details_text(judgment: Judgment, samples: Sequence[JudgmentSample]) -> str:
    """Every sample and the whole reply as plain text, for the card's thread when the modal cuts them."""
    lines = [f"Judgment #{judgment.id}: {judgment.rubric_name} {judgment.rubric_version}, judge {judgment.judge_model}, "
             f"status {judgment.status}"]
    for sample in samples:
        verdict = (f"{sample.headline:.0f}/100 {'pass' if sample.passed else 'fail'} {sample.tag or ''}"
                   if sample.status == RowState.SCORED else sample.error or "")
        lines.append(f"sample {sample.judge_model} #{sample.sample}: {sample.status} {verdict}".rstrip())
    return "\n".join([*lines, "", "The judge's reply:", judgment.raw_reply or ""])


def details_view(judgment: Judgment, samples: Sequence[JudgmentSample] = (), *,
                 view_url: str | None = None) -> tuple[View, bool]:
    """The Details modal, and whether it had to cut the samples or the reply (their whole text then goes to the
    card's thread as `details_file`); with `view_url` (VIEW_URL), a link to the row in the web view."""
    raw = judgment.raw_reply or ""
    try:
        reply = json.dumps(json.loads(raw), ensure_ascii=False, indent=2)
    except ValueError:
        reply = raw
    intro = section(f"*{escape(judgment.rubric_name)}* {escape(judgment.rubric_version)} · judge "
                    f"`{escape(judgment.judge_model)}`{_effort(judgment)} · judgment #{judgment.id} · status "
                    f"*{judgment.status}*" + (f" · {link}" if (link := row_link(view_url, judgment.id)) else ""))
    blocks: list[Block] = [intro]
    room = Room(VIEW_BLOCKS - 3, VIEW_BYTES - VIEW_MARGIN - encoded_size(blocks))  # 3: the two notes and a spare
    if samples:
        listed = text_sections(sample_lines(samples), f"*{len(samples)} samples*")
        shown_samples = room.take(listed, share=0.5)
        blocks.extend(shown_samples)
        if len(shown_samples) < len(listed):
            blocks.append(context("_… Cut here: more samples than a Slack modal holds; the card counts them all, and "
                                  f"the card's thread lists every one in `{details_file(judgment)}`._"))
    parts = pieces(reply, CODE_CHUNK)  # escaped: a fence in the reply cannot end ours
    shown_parts = room.take(section(code_block(piece)) for piece in parts)
    blocks.extend(shown_parts)
    cut = len(shown_parts) < len(parts) or (bool(samples) and len(shown_samples) < len(listed))
    if len(shown_parts) < len(parts):
        blocks.append(context(_reply_cut(judgment, len(raw))))
    return View(type="modal", title="Judge's reply", close="Close", blocks=blocks), cut


def _reply_cut(judgment: Judgment, length: int) -> str:
    """The note under a reply cut to fit the modal: where the rest is."""
    return (f"_… Cut here: the reply is {length:,} characters, more than a Slack modal holds. The whole reply is in "
            f"the card's thread as `{details_file(judgment)}`, and the history keeps it (judgment #{judgment.id})._")


def _effort(judgment: Judgment) -> str:
    return f" · effort {escape(judgment.reasoning_effort)}" if judgment.reasoning_effort else ""
