"""Block Kit for one judgment: the placeholder, the result card, the error card and its full detail (the Details
modal is in details.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextActionsBlock,
    ContextBlock,
    DividerBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    HeaderBlock,
    MarkdownBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.figures import plural
from bot.judge.samples import split_text
from bot.records import RowState, context_of
from bot.rubric import Rubric
from bot.slack.text import clip, escape, literal_markdown, pieces, shown, shown_markdown
from bot.slack.views.blocks import alert, context, message, packed, section, size, warning_blocks
from bot.slack.views.size_limits import (
    FIELD_LIMIT,
    HEADER_LIMIT,
    MESSAGE_BLOCKS,
    MESSAGE_CHARS,
    MODEL_ROOM,
    SECTION_FIELDS,
    SECTION_LIMIT,
)
from bot.slack.views.verdict_fields import field_label, is_short, long_value, short_value, walk_fields
from bot.slack.views.view_links import row_link
from bot.store import Judgment, JudgmentSample, Label
from bot.trust.labels import value_at

AGREE, DISAGREE, REJUDGE, DETAILS, RETRY, CORRECT = (
    "judgebot_agree", "judgebot_disagree", "judgebot_rejudge", "judgebot_details", "judgebot_retry",
    "judgebot_correct")
# Slack's own thumbs for AI answers (a context_actions block); each button's value says which one and the judgment:
# "agree:42". Cards posted before them carry AGREE and DISAGREE buttons, which still count.
FEEDBACK = "judgebot_feedback"
LINE_ROOM = 600  # characters of the samples line and the corrections line of a card
MIN_TEXT = 300  # the shortest cut of a long text in a card
TRIPLE_LIMITS = {"question": 600, "reference": 600, "answer": 1200}  # the card stays readable; the thread has all
CUT_NOTE = "\n_(cut here: the full text is in the thread)_"
MARKDOWN_CUT_NOTE = "\n\n_(cut here: the full text is in the thread)_"
MARKDOWN_SCALE = 3  # a long text of the judge's in a markdown block: up to three sections' worth
LABEL_ROOM = 300  # characters of a verdict's label (the rubric builds it from what the judge returned)


@dataclass
class Card:
    """A message: fallback text, blocks, and the texts that had to be cut (label, full text) for a thread reply."""

    text: str
    blocks: list[Block]
    overflow: list[tuple[str, str]] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        """Keyword arguments for chat.postMessage / chat.update."""
        return message(self.blocks, self.text)


def placeholder(rubric: Rubric, user_id: str | None, model_name: str | None) -> Card:
    """What the channel sees at once, before the judge answers."""
    who = f" for <@{user_id}>" if user_id else ""
    model = f" · model under test *{_model(model_name)}*" if model_name else ""
    text = f":hourglass_flowing_sand: Judging with *{escape(rubric.title)}*{who}{model}…"
    return Card(text=escape(f"Judging with {rubric.title}…"), blocks=[section(text)])


def _model(name: str) -> str:
    return shown(name, MODEL_ROOM)[0]


def _headline(judgment: Judgment) -> str:
    mark = "✅" if judgment.passed else "❌"
    label = shown(judgment.label or "", LABEL_ROOM)[0]
    score = f"{judgment.headline:.0f}/100" if judgment.headline is not None else "no score"
    return f"{mark} *{label}*\n{score} · {'passed' if judgment.passed else 'did not pass'}"


def _meta(judgment: Judgment) -> list[str]:
    model = _model(judgment.model_name) if judgment.model_name else "_not named_"
    who = f"<@{judgment.user_id}>" if judgment.user_id else "—"
    meta = [f"*Model under test*\n{model}", f"*Asked by*\n{who}"]
    if (passages := context_of(judgment.context)) is not None:  # what the judge was shown, beside the three texts
        meta.append(f"*Retrieved context*\n{len(passages)} {plural(len(passages), 'passage')}")
    return meta


def _footer(judgment: Judgment, view_url: str | None = None) -> ContextBlock:
    tokens = judgment.tokens_in + judgment.tokens_out
    return context(
        f"judge `{escape(judgment.judge_model)}`" + (f" · effort {escape(judgment.reasoning_effort)}"
                                                     if judgment.reasoning_effort else ""),
        f"{escape(judgment.rubric_name)} {escape(judgment.rubric_version)} (`{judgment.rubric_hash[:8]}`)",
        f"{tokens:,} tokens" + (f" ({judgment.tokens_reasoning:,} reasoning)" if judgment.tokens_reasoning else "")
        if tokens else "",
        f"{judgment.latency_ms / 1000:.1f} s" if judgment.latency_ms else "",
        "reused from an earlier identical judgment" if judgment.cached_from else "",
        f"#{judgment.id}",
        row_link(view_url, judgment.id),
    )


def _fields_sections(fields: list[str]) -> list[SectionBlock]:
    return [SectionBlock(fields=[MarkdownTextObject(text=f) for f in fields[i:i + SECTION_FIELDS]])
            for i in range(0, len(fields), SECTION_FIELDS)]


def _text_section(label: str, text: str, limit: int, overflow: list[tuple[str, str]]) -> SectionBlock:
    heading = f"*{escape(label)}*\n"
    body, was_cut = shown(text, limit - len(heading) - len(CUT_NOTE))
    if was_cut:
        overflow.append((label, text))
        body += CUT_NOTE
    return section(heading + body)


def _long_field(label: str, text: str, limit: int, overflow: list[tuple[str, str]]) -> Block:
    """A long text the judge returned: a section while it fits one, else a `markdown` block, which holds
    MARKDOWN_SCALE times more before the rest goes to the thread (its line breaks kept, its marks literal)."""
    if len(escape(text)) + len(escape(label)) + 3 <= limit:
        return _text_section(label, text, limit, overflow)
    heading = f"**{literal_markdown(label)}**\n\n"
    body, was_cut = shown_markdown(text, limit * MARKDOWN_SCALE - len(heading) - len(MARKDOWN_CUT_NOTE))
    if was_cut:
        overflow.append((label, text))
    lines = "\n\n".join("\\\n".join(paragraph.split("\n")) for paragraph in re.split(r"\n{2,}", body.strip("\n")))
    return MarkdownBlock(text=heading + lines + (MARKDOWN_CUT_NOTE if was_cut else ""))


def _triple_sections(judgment: Judgment, overflow: list[tuple[str, str]], scale: float = 1.0) -> list[Block]:
    return [_text_section(name.capitalize(), getattr(judgment, name), max(MIN_TEXT, int(limit * scale)), overflow)
            for name, limit in TRIPLE_LIMITS.items()]


def sampled(judgment: Judgment) -> bool:
    """Whether the verdict was made of several judgments (samples of one judge, or a jury)."""
    return (judgment.samples or 1) > 1


def samples_line(judgment: Judgment, samples: Sequence[JudgmentSample]) -> str:
    """How the samples behind a verdict went: "3 samples · 3/3 agree", or "⚠ split 2/1: Correct, Generic"; with
    how many failed. Empty for a verdict of one judgment."""
    if not sampled(judgment) or not samples:
        return ""
    scored = [sample for sample in samples if sample.status == RowState.SCORED]
    judges = list(dict.fromkeys(sample.judge_model for sample in samples))
    jury = f" from {', '.join(_model(name) for name in judges)}" if len(judges) > 1 else ""
    splits = split_text(scored)
    parts = [f"⚠ split {escape(splits)}"] if splits else [f"{len(samples)} samples{jury}",
                                                          f"{len(scored)}/{len(scored)} agree"]
    if splits and jury:
        parts.append(f"{len(samples)} samples{jury}")
    if len(scored) < len(samples):
        parts.append(f"{len(samples) - len(scored)} failed")
    return clip(" · ".join(parts), LINE_ROOM)[0]


def _shown_value(path: str, value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{escape(path.rsplit('.', 1)[-1].replace('_', ' '))} {value:g}"
    return "—" if value is None else shown(str(value), MODEL_ROOM)[0]


def corrections_line(judgment: Judgment, labels: Sequence[Label]) -> str:
    """The newest label of a judgment: who gave it and which of their values differ from the judge's."""
    if not labels:
        return ""
    newest = labels[-1]
    who = f"corrected by <@{newest.user_id}>" if newest.source == "correction" else "labeled from a file"
    changed = [_shown_value(path, value) for path, value in newest.values.items()
               if value != value_at(judgment.output, path)]
    more = f" (+{len(labels) - 1} more)" if len(labels) > 1 else ""
    line = f":pencil2: {who}: {', '.join(changed) if changed else 'the same values as the judge'}{more}"
    return clip(line, LINE_ROOM)[0]


def result_card(judgment: Judgment, rubric: Rubric | None, *, votes: tuple[int, int] = (0, 0),
                samples: Sequence[JudgmentSample] = (), labels: Sequence[Label] = (),
                warnings: Sequence[str] = (), view_url: str | None = None) -> Card:
    """The card of a judgment: a scored one shows its scores, how its samples went and people's corrections;
    anything else is an error card. `warnings` (such as its judge's coming shutdown) are shown under its headline;
    with `view_url` (VIEW_URL), its footer links to the row in the web view.

    Long texts get shorter cuts until the whole card fits in one message; what is cut goes to the thread.
    """
    if judgment.status != RowState.SCORED:
        return error_card(judgment, rubric, warnings, view_url=view_url)
    lines = (samples_line(judgment, samples), corrections_line(judgment, labels))
    limit = SECTION_LIMIT
    while True:
        parts = _Parts.of(judgment, rubric, votes, limit, lines, warnings, view_url)
        if parts.fits() or limit == MIN_TEXT:
            return parts.card(judgment, rubric)
        limit = max(MIN_TEXT, limit * 2 // 3)


@dataclass
class _Parts:
    """A scored card in its parts: what it opens with, the long fields, the three texts, and the buttons."""

    head: list[Block]
    long: list[tuple[Block, tuple[str, str] | None]]  # each section with the full text it had to cut, if any
    triple: list[Block]
    tail: list[Block]
    overflow: list[tuple[str, str]]  # full texts of the three texts it had to cut

    @classmethod
    def of(cls, judgment: Judgment, rubric: Rubric | None, votes: tuple[int, int], limit: int,
           lines: tuple[str, str] = ("", ""), warnings: Sequence[str] = (), view_url: str | None = None) -> _Parts:
        short: list[str] = []
        long: list[tuple[Block, tuple[str, str] | None]] = []
        for path, value, spec in walk_fields(judgment.output or {}, rubric.output if rubric else None):
            if is_short(value, spec):
                short.append(clip(f"*{escape(field_label(path))}*\n{short_value(value, spec)}", FIELD_LIMIT)[0])
            else:
                cut: list[tuple[str, str]] = []
                long.append((_long_field(field_label(path), long_value(value), limit, cut), cut[0] if cut else None))
        for name, value in (judgment.derived or {}).items():
            short.append(f"*{escape(name.replace('_', ' '))}*\n{value:g}")
        title = rubric.title if rubric else judgment.rubric_name
        head: list[Block] = [HeaderBlock(text=clip(title, HEADER_LIMIT)[0]),
                             SectionBlock(text=MarkdownTextObject(text="\n".join(
                                 part for part in (_headline(judgment), lines[0]) if part)),
                                          fields=[MarkdownTextObject(text=f) for f in _meta(judgment)]),
                             *warning_blocks(warnings), *_fields_sections(short)]
        if judgment.flags:
            head.append(alert(", ".join(escape(f) for f in judgment.flags)))
        overflow: list[tuple[str, str]] = []
        triple = _triple_sections(judgment, overflow, limit / SECTION_LIMIT)
        tail: list[Block] = [_thumbs(judgment), _buttons(judgment, scored=True), _footer(judgment, view_url)]
        if any(votes):
            tail.append(context(f"People: :+1: {votes[0]} agree · :-1: {votes[1]} disagree"))
        if lines[1]:
            tail.append(context(lines[1]))
        return cls(head, long, triple, tail, overflow)

    def blocks(self, long: int | None = None, head: int | None = None) -> list[Block]:
        """The card's blocks, with only the first `long` long fields and `head` opening blocks when given."""
        kept = [block for block, _ in self.long[:long]]
        return [*self.head[:head], DividerBlock(), *kept, DividerBlock(), *self.triple, *self.tail]

    def fits(self, blocks: list[Block] | None = None) -> bool:
        """Whether the blocks fit in one message."""
        blocks = self.blocks() if blocks is None else blocks
        return len(blocks) <= MESSAGE_BLOCKS and size(blocks) <= MESSAGE_CHARS

    def card(self, judgment: Judgment, rubric: Rubric | None) -> Card:
        """The card; if even the shortest cuts do not fit, fields give way (last first) to a note and the thread."""
        title = rubric.title if rubric else judgment.rubric_name
        fallback = f"{escape(title)}: {shown(judgment.label or '', LABEL_ROOM)[0]}" + (
            f" (model {_model(judgment.model_name)})" if judgment.model_name else "")
        cut = [entry for _, entry in self.long if entry]
        if self.fits():
            return Card(text=fallback, blocks=self.blocks(), overflow=[*cut, *self.overflow])
        note = context("_More than a message can hold: everything the judge returned is in the thread._")
        long, head = len(self.long), len(self.head)
        while long > 0 and not self.fits([*self.blocks(long, head), note]):
            long -= 1
        while head > 2 and not self.fits([*self.blocks(long, head), note]):
            head -= 1  # the title and the headline stay
        blocks = self.blocks(long, head)
        blocks.insert(len(blocks) - len(self.tail), note)
        whole = ("Everything the judge returned", json.dumps(judgment.output, ensure_ascii=False, indent=2))
        return Card(text=fallback, blocks=blocks, overflow=[whole, *self.overflow])


def error_card(judgment: Judgment, rubric: Rubric | None, warnings: Sequence[str] = (), *,
               view_url: str | None = None) -> Card:
    """A judgment that got no score: what went wrong and what to do, with a Retry button (and `warnings`, such as
    its judge's coming shutdown). Never a score."""
    title = rubric.title if rubric else judgment.rubric_name
    if judgment.status == RowState.MALFORMED:  # the answer itself: asking again gives the same
        what = "This row could not be graded"
        todo = "Asking again gives the same: fix the row and judge it again."
    elif judgment.status == RowState.INVALID:
        what = "The judge's reply broke the rubric's rules, so it was not scored"
        todo = "Judges are noisy: *Retry* asks again. *Details* shows the reply."
    else:
        what = "The judge could not grade this answer"
        todo = ("Press *Retry* in a moment. If it keeps failing, the bot's admin should check the judge settings "
                "(`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `JUDGE_MODEL`).")
    overflow: list[tuple[str, str]] = []
    reason, _ = shown(judgment.error or "no reason was recorded", 1500)
    blocks: list[Block] = [
        HeaderBlock(text=clip(title, HEADER_LIMIT)[0]),
        SectionBlock(text=MarkdownTextObject(text=f":warning: *{what}.*\n{reason}\n\n{todo}"),
                     fields=[MarkdownTextObject(text=f) for f in _meta(judgment)]),
        *warning_blocks(warnings), DividerBlock(), *_triple_sections(judgment, overflow),
        *([_buttons(judgment, scored=False)] if judgment.status != RowState.MALFORMED else []),
        _footer(judgment, view_url),
    ]
    return Card(text=escape(f"{title}: {what.lower()}"), blocks=blocks, overflow=overflow)


def _buttons(judgment: Judgment, *, scored: bool) -> ActionsBlock:
    value = str(judgment.id)
    if scored:
        buttons = [ButtonElement(text=":pencil2: Correct it", action_id=CORRECT, value=value),
                   ButtonElement(text=":repeat: Re-judge", action_id=REJUDGE, value=value)]
    else:
        buttons = [ButtonElement(text=":repeat: Retry", action_id=RETRY, value=value, style="primary")]
    if judgment.raw_reply:
        buttons.append(ButtonElement(text="Details", action_id=DETAILS, value=value))
    return ActionsBlock(elements=buttons)


def _thumbs(judgment: Judgment) -> ContextActionsBlock:
    """Agree / Disagree as Slack's feedback buttons."""
    return ContextActionsBlock(elements=[FeedbackButtonsElement(
        action_id=FEEDBACK,
        positive_button=FeedbackButtonObject(text="Agree", value=f"agree:{judgment.id}",
                                             accessibility_label="Agree with the judge's verdict"),
        negative_button=FeedbackButtonObject(text="Disagree", value=f"disagree:{judgment.id}",
                                             accessibility_label="Disagree with the judge's verdict"))])


def vote_of(action: dict[str, Any]) -> tuple[bool, str] | None:
    """(agree, the judgment id as written) a click on Agree or Disagree says, from the feedback buttons or the buttons
    of an older card; None for any other value."""
    if action.get("action_id") in (AGREE, DISAGREE):
        return action["action_id"] == AGREE, str(action.get("value") or "")
    way, _, judgment_id = str(action.get("value") or "").partition(":")
    return (way == "agree", judgment_id) if way in ("agree", "disagree") else None


def full_detail(overflow: list[tuple[str, str]]) -> list[Card]:
    """Thread replies holding, uncut, every text the card had to cut."""
    blocks: list[Block] = []
    for label, text in overflow:
        parts = pieces(text, SECTION_LIMIT - 200)
        for number, piece in enumerate(parts, 1):
            part = f" ({number}/{len(parts)})" if len(parts) > 1 else ""
            blocks.append(section(f"*{escape(label)}*{part}\n{piece}"))
    return [Card(text="The full texts of the card above", blocks=chunk) for chunk in packed(blocks)]
