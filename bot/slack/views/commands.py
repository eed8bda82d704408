"""Block Kit of the answers to `/judge`: help, the rubric list, the form, history and stats."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from slack_sdk.models.blocks import (
    Block,
    InputBlock,
    Option,
    PlainTextInputElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.figures import MISSING, number, percent
from bot.records import RowState
from bot.rubric import Rubric, RubricSet
from bot.slack.commands.parsing import USAGE
from bot.slack.text import clean, clip, date, escape, permalink, shown
from bot.slack.views.blocks import context, listing, message, notice, section, size, text_sections, warning_blocks
from bot.slack.views.mixed_verdicts import mixed_blocks
from bot.slack.views.size_limits import (
    BUTTON_LIMIT,
    INPUT_LIMIT,
    LABEL_ROOM,
    MESSAGE_CHARS,
    MODEL_ROOM,
    SELECT_OPTIONS,
)
from bot.slack.views.table_block import NOTE_ROOM, Cell, Column, Table, table, text, untrusted
from bot.store import Figures, Judgment
from bot.trust.calibration_texts import agreement_text
from bot.trust.report import people_agreement

FORM = "judgebot_form"
RUBRIC_BLOCK, MODEL_BLOCK, CONTEXT_BLOCK = "rubric", "model", "context"
TEXT_BLOCKS = ("question", "reference", "answer")
CONTEXT_HINT = ("For a rubric that grades against the passages your assistant retrieved (required then). Put a blank "
                "line between passages, or give a JSON list of strings such as [\"first\", \"second\"].")
DESCRIPTION_LIMIT = 300


FORM_UNCHECKED = (
    "I cannot check where this form was opened (it was opened before the bot's settings changed, or it was "
    "altered), so I cannot judge it. Copy your texts, close the form and open a new one with `/judge <rubric>`."
)


class FormContext(BaseModel):
    """Where the form was opened: the card goes there; problems go to the person through `response_url`."""

    team_id: str
    channel_id: str
    response_url: str | None = None


class FormSeal:
    """A form's context in its private metadata, signed (HMAC-SHA256), so a submission cannot change where it acts."""

    def __init__(self, secret: str) -> None:
        # A key of its own, derived from the secret, so a form's signature is never valid for anything else.
        self._key = hmac.new(secret.encode(), b"judgebot form context", hashlib.sha256).digest()

    def _signature(self, context: str) -> str:
        return hmac.new(self._key, context.encode(), hashlib.sha256).hexdigest()

    def seal(self, context: FormContext) -> str:
        """The private metadata of a form opened in `context`: its signature, a dot, and the context as JSON."""
        data = context.model_dump_json(exclude_none=True)
        return f"{self._signature(data)}.{data}"

    def open(self, metadata: str) -> FormContext | None:
        """The context a form was opened in, or None unless this bot signed it exactly so."""
        signature, _, data = metadata.partition(".")
        if not hmac.compare_digest(signature.encode(), self._signature(data).encode()):
            return None
        try:
            return FormContext.model_validate_json(data)
        except ValidationError:
            return None


def rubric_lines(rubrics: RubricSet) -> list[str]:
    """One line per rubric: name, aliases, one-line description, and whether it needs the retrieved context."""
    lines = []
    for rubric in rubrics:
        aliases = f" (also {', '.join(f'`{escape(a)}`' for a in rubric.aliases)})" if rubric.aliases else ""
        needs = " _Needs the retrieved context._" if rubric.uses_context else ""
        lines.append(f"• `{escape(rubric.name)}`{aliases}: {escape(clip(rubric.description, DESCRIPTION_LIMIT)[0])}"
                     f"{needs}")
    return lines


def help_message(rubrics: RubricSet) -> dict[str, Any]:
    """The answer to `/judge` and `/judge help`."""
    head = [section("*judgebot* grades an answer against a reference answer with a rubric.\n" + USAGE)]
    entries = text_sections(rubric_lines(rubrics), "*Rubrics*")
    blocks = listing(head, entries, more="_…and more rubrics: `/judge rubrics` lists them._")
    blocks.append(context("Results stay in the channel where they were asked. Drop a rubric file into the bot's "
                          "rubrics folder to add your own."))
    return message(blocks, "judgebot: how to use /judge")


def broken_lines(rubrics: RubricSet) -> list[str]:
    """One line per rubric file left out: the file and what is wrong with it (both untrusted)."""
    return [f"• {shown(broken.path.name, 200)[0]}: {shown(broken.problem, DESCRIPTION_LIMIT * 2)[0]}"
            for broken in rubrics.broken]


def rubrics_message(rubrics: RubricSet) -> dict[str, Any]:
    """The answer to `/judge rubrics`: the rubrics, then the files left out until they are fixed."""
    broken = text_sections(broken_lines(rubrics), "*Rubric files left out until they are fixed*")
    blocks = listing([], [*text_sections(rubric_lines(rubrics), "*Rubrics*"), *broken],
                     more="_{n} more section(s) of rubrics do not fit in one message._")
    return message(blocks, "The rubrics judgebot knows")


def _rubric_option(rubric: Rubric) -> Option:
    return Option(value=rubric.name, label=clip(rubric.title, BUTTON_LIMIT)[0])


def form_view(rubrics: RubricSet, chosen: Rubric, *, model_name: str | None, metadata: str) -> View:
    """The modal of `/judge <rubric>`: rubric, model under test, question, reference answer, answer, and the retrieved
    context for a rubric that reads it; `metadata` (a sealed FormContext) says where it was opened."""
    texts = {"question": ("Question", "What was asked"),
             "reference": ("Reference answer", "The answer known to be right"),
             "answer": ("Answer to grade", "What the model under test replied")}
    blocks: list[Block] = [
        InputBlock(block_id=RUBRIC_BLOCK, label="Rubric", element=StaticSelectElement(
            action_id=RUBRIC_BLOCK, options=[_rubric_option(r) for r in [r for r in rubrics if not r.pairwise][:SELECT_OPTIONS]],
            initial_option=_rubric_option(chosen))),
        InputBlock(block_id=MODEL_BLOCK, label="Model under test", optional=True,
                   hint="Remembered for your next judgment; stats are grouped by it.",
                   element=PlainTextInputElement(action_id=MODEL_BLOCK, initial_value=model_name or None,
                                                 max_length=200, placeholder="e.g. campus-bot-v2")),
    ]
    for name, (label, placeholder) in texts.items():
        blocks.append(InputBlock(block_id=name, label=label, element=PlainTextInputElement(
            action_id=name, multiline=True, max_length=INPUT_LIMIT, placeholder=placeholder)))
    blocks.append(InputBlock(block_id=CONTEXT_BLOCK, label="Retrieved context", optional=True, hint=CONTEXT_HINT,
                             element=PlainTextInputElement(action_id=CONTEXT_BLOCK, multiline=True,
                                                           max_length=INPUT_LIMIT,
                                                           placeholder="The passages the assistant answered from")))
    return View(type="modal", callback_id=FORM, title="Judge an answer", submit="Judge", close="Cancel",
                private_metadata=metadata, blocks=blocks)


def form_values(view: dict[str, Any]) -> dict[str, str]:
    """What was typed into the form: rubric, model, question, reference, answer, context (empty strings when blank;
    a form opened before it had a context field has none), without what no database takes (NUL characters, lone
    surrogates)."""
    state = view["state"]["values"]
    rubric = (state[RUBRIC_BLOCK][RUBRIC_BLOCK].get("selected_option") or {}).get("value", "")
    values = {"rubric": rubric, "model": state[MODEL_BLOCK][MODEL_BLOCK].get("value") or ""}
    for name in TEXT_BLOCKS:
        values[name] = state[name][name].get("value") or ""
    values[CONTEXT_BLOCK] = (state.get(CONTEXT_BLOCK) or {}).get(CONTEXT_BLOCK, {}).get("value") or ""
    return {name: clean(value).strip() for name, value in values.items()}


def judgment_entry(judgment: Judgment, team_url: str | None, *, channel: bool) -> str:
    mark = ("✅" if judgment.passed else "❌") if judgment.status == RowState.SCORED else ":warning:"
    # A label comes from the judge's reply (an enum, a number): cut so the entry's question, date and link keep room.
    headline = shown(judgment.label or "", LABEL_ROOM)[0] if judgment.status == RowState.SCORED else \
        f"judge {judgment.status}"
    model = f" · {shown(judgment.model_name, MODEL_ROOM)[0]}" if judgment.model_name else ""
    link = None
    if judgment.message_ts and judgment.channel_id:
        link = permalink(team_url, judgment.channel_id, judgment.message_ts, judgment.thread_ts)
    where = f" in <#{judgment.channel_id}>" if channel and judgment.channel_id else ""
    card = f" · <{link}|card>" if link else ""
    who = f" · <@{judgment.user_id}>" if judgment.user_id and not channel else ""
    question, _ = shown(" ".join(judgment.question.split()), 90)
    return (f"{mark} *{escape(judgment.rubric_name)}*{model} · {headline}\n"
            f"_{question}_\n{date(judgment.created_at)}{who}{where}{card}")


def history_message(judgments: list[Judgment], channel_id: str, team_url: str | None) -> dict[str, Any]:
    """The answer to `/judge history`: the latest judgments of this channel."""
    if not judgments:
        return notice(f"No judgments in <#{channel_id}> yet. Try `/judge help`.")
    head = [section(f"*Latest {len(judgments)} judgment(s) in <#{channel_id}>*")]
    entries = [section(judgment_entry(j, team_url, channel=False)) for j in judgments]
    return message(listing(head, entries, more="_{n} older not shown: ask for fewer._"),
                   f"Latest judgments in this channel ({len(judgments)})")


STATS_COLUMNS = {"model": Column("Model"), "rubric": Column("Rubric"), "cases": Column("Cases", right=True),
                 "rejudged": Column("Judged again", right=True), "mean": Column("Mean /100", right=True),
                 "pass": Column("Pass", right=True), "unsure": Column("Unsure", right=True),
                 "errors": Column("Judge errors", right=True), "tags": Column("Tags", wrap=True),
                 "people": Column("People agree with the judge", wrap=True)}


def stats_row(figures: Figures) -> dict[str, Cell]:
    """One model on one rubric: its cases, the judgments of them a later one replaced, mean, pass and unsure rates,
    judge errors, tags, and how far people agree with the judge (every label, correction and vote on its rows), by
    column."""
    agreement = people_agreement(figures.said)
    tags = ", ".join(f"{tag} {n}" for tag, n in sorted(figures.tags.items(), key=lambda item: -item[1]))
    return {"model": untrusted(figures.model_name, MODEL_ROOM) if figures.model_name else text("model not named"),
            "rubric": untrusted(figures.rubric_name, MODEL_ROOM), "cases": text(f"{figures.cases:,}"),
            "rejudged": text(f"{figures.rejudged:,}"),
            "mean": text(number(figures.mean_headline, 0)), "pass": text(percent(figures.pass_rate)),
            "unsure": text(percent(figures.unsure_rate)), "errors": text(f"{figures.errors:,}"),
            "tags": untrusted(tags) if tags else text(MISSING),
            "people": text(agreement_text(agreement) if agreement.agreement is not None else MISSING)}


def stats_table(figures: Sequence[Figures], *, room: int) -> Table:
    """Per model and rubric figures as a table: the columns no row has a figure in are left out."""
    rows = [stats_row(f) for f in figures]
    needed = {"rejudged": any(f.rejudged for f in figures), "unsure": any(f.unsure_rate is not None for f in figures),
              "tags": any(f.tags for f in figures), "people": any(row["people"]["text"] != MISSING for row in rows)}
    names = [name for name in STATS_COLUMNS if needed.get(name, True)]
    return table([STATS_COLUMNS[name] for name in names], [[row[name] for name in names] for row in rows], room=room)


def stats_message(figures: list[Figures], channel_id: str, *, days: int | None, model: str | None,
                  warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The answer to `/judge stats`: per model and rubric figures of this channel as a table, after the judge's
    coming shutdown when it is near."""
    period = f"last {days} days" if days else "all time"
    scope = f" for model *{shown(model, MODEL_ROOM)[0]}*" if model else ""
    if not figures:
        empty = f"No judgments in <#{channel_id}>{scope} over the {period}."
        return message([section(empty), *warning_blocks(warnings)], empty) if warnings else notice(empty)
    head = [section(f"*Stats in <#{channel_id}>{scope}, {period}*"), *warning_blocks(warnings)]
    found = stats_table(figures, room=MESSAGE_CHARS - size(head) - size(mixed_blocks(figures)) - NOTE_ROOM)
    more = ("_{n} more model and rubric pair(s) not shown: name a model to narrow it down, or "
            f"`judgebot stats --channel {channel_id}` in a terminal lists them all._")
    return message([*head, *found.blocks(rows=more), *mixed_blocks(figures)], f"judgebot stats, {period}")
