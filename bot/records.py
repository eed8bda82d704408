"""The vocabulary every layer shares: the triple, the verdict, the states of runs, rows, shares and posts, and the
periods people name ("7d", "30d", "all")."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, PrivateAttr


class RunState(StrEnum):
    """Where a run is: its rows being saved, waiting, being judged, stopped with work left, or over."""

    LOADING = "loading"
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


class RowState(StrEnum):
    """One row of a run: waiting for the judge, or the outcome it got (malformed: the input could not be graded)."""

    PENDING = "pending"
    SCORED = "scored"
    INVALID = "invalid"
    ERROR = "error"
    MALFORMED = "malformed"


class ShareState(StrEnum):
    """A file shared in Slack, from the event to the summary (store.shares holds the moves it may make)."""

    RECEIVED = "received"
    ASKING = "asking"  # which rubric? waits for a click
    CONFIRM = "confirm"  # the same file again: run again? waits for a click
    LOADING = "loading"
    RUNNING = "running"
    PAUSED = "paused"  # Resume or Finish here
    FINISHING = "finishing"
    DONE = "done"
    FAILED = "failed"  # the summary could not be made
    REFUSED = "refused"
    SKIPPED = "skipped"


class PostState(StrEnum):
    """A claim on a post (a channel's weekly digest, a reviewer's nudge): being posted, in the channel, or sent
    without an answer."""

    POSTING = "posting"
    POSTED = "posted"
    UNKNOWN = "unknown"  # the post was sent and no answer came: it may be in the channel


RESUMABLE = (RunState.PENDING, RunState.RUNNING, RunState.PAUSED)  # what `resume` picks up by itself
CLAIMABLE = (*RESUMABLE, RunState.DONE, RunState.CANCELLED)  # what may be judged again (rows re-judged, results)
JUDGED = (RowState.SCORED, RowState.INVALID, RowState.ERROR)  # rows a judge looked at
UNSCORED = (RowState.INVALID, RowState.ERROR, RowState.MALFORMED)  # rows without a score, for good
REJUDGEABLE = (RowState.ERROR, RowState.INVALID)  # what `resume --retry-errors` and Retry judge again
# Seconds without a heartbeat after which another host's "running" run counts as abandoned: a replica takes over
# the run of one that died within this and its next look for left-over work (bot.slack.flows.file_recovery), and
# `judgebot runs` shows it as interrupted. (Here rather than in bot.runs, so that listing runs loads no judge.)
STALE_AFTER = 20.0
# A review case's states, and the team that stands for whichever workspace (the terminal's view of a channel id).
OPEN, LABELED = "open", "labeled"
ANY_TEAM = "*"
DISAGREE = "disagree"  # the reason of a review case a person's label contradicts: asked again for a second opinion
COST_NOT_AGREED = "not started: its cost was not agreed to"  # the stop reason of a run refused at its estimate

# The states a judgment can end in (malformed: a bare answer that its rubric does not send to the judge).
Outcome = Literal[RowState.SCORED, RowState.INVALID, RowState.ERROR, RowState.MALFORMED]


class Triple(BaseModel):
    """The texts a judgment grades: a question, its reference and an answer, or two answers in the order a pairwise
    judge is shown them (`answer` first, then `answer_b`); with the passages a RAG assistant retrieved, in order,
    when its rubric reads them (`context`, None when the case has none)."""

    question: str
    reference: str
    answer: str
    answer_b: str | None = None
    context: list[str] | None = None
    # The passages as `context_text` writes them, with the list they were written from: kept for this triple's keys.
    _context_json: tuple[list[str], str] | None = PrivateAttr(None)

    def context_json(self) -> str | None:
        """The passages as the history keeps them and the keys read them (`context_text`), written once for this
        triple (one read from the history takes the history's own text: `keep_context_json`), and again only when
        its context is another list (a copy made with other passages)."""
        if self.context is None:
            return None
        private = self.__pydantic_private__ or {}  # read from pydantic's own dict: an attribute read costs more
        kept = private.get("_context_json")
        if kept is not None and kept[0] is self.context:
            return kept[1]
        text = json.dumps(self.context, ensure_ascii=False)
        private["_context_json"] = (self.context, text)
        return text

    def __eq__(self, other: object) -> bool:
        """The same texts and passages (whatever text of them a triple has kept for its keys)."""
        if not isinstance(other, Triple):
            return NotImplemented
        return (self.question, self.reference, self.answer, self.answer_b, self.context) == (
            other.question, other.reference, other.answer, other.answer_b, other.context)

    __hash__ = None  # type: ignore[assignment]  # mutable, as every pydantic model: never a key

    def keep_context_json(self, text: str | None) -> Triple:
        """This triple, told the text its passages are kept as (`context_text` of them, as the history holds it)."""
        if self.context is not None and text is not None and self.__pydantic_private__ is not None:
            self.__pydantic_private__["_context_json"] = (self.context, text)
        return self

    def answers(self) -> tuple[str, ...]:
        """The answer under test, or both answers of a pair."""
        return (self.answer,) if self.answer_b is None else (self.answer, self.answer_b)

    def texts(self) -> tuple[str, ...]:
        """Every text under test: the question, the reference, then the answer or answers, then the passages."""
        return (self.question, self.reference, *self.answers(), *(self.context or ()))

    def named_texts(self) -> list[tuple[str, str]]:
        """Every text under test with the words a warning names it by ("the answer", "passage 2 of the context")."""
        answers = ([("the answer", self.answer)] if self.answer_b is None
                   else [("the first answer", self.answer), ("the second answer", self.answer_b)])
        passages = [(f"passage {number} of the context", passage)
                    for number, passage in enumerate(self.context or (), 1)]
        return [*answers, ("the question", self.question), ("the reference", self.reference), *passages]


def context_text(context: list[str] | None) -> str | None:
    """The passages of a case as the history keeps them and its keys read them: one JSON list of strings (None for a
    case without context, whose keys stay as they were before context existed)."""
    return None if context is None else json.dumps(context, ensure_ascii=False)


def context_of(text: str | None) -> list[str] | None:
    """The passages the history keeps as `context_text`, read back."""
    return None if text is None else [str(passage) for passage in json.loads(text)]


JSON_LIST = re.compile(r"\[\s*[\"\]]")  # how a typed JSON list of strings opens: `["...` or `[]`
BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


def typed_passages(text: str) -> list[str] | str:
    """The passages a person or a workflow typed as one text: a JSON list of strings (several passages, in order), or
    plain text whose passages are separated by a blank line (none for an empty text). A text that opens like a JSON
    list and is not one is not guessed at: the reason a person reads is returned instead."""
    text = text.strip()
    if not JSON_LIST.match(text):
        return [passage.strip() for passage in BLANK_LINE.split(text) if passage.strip()]
    found = json_passages(text)
    if isinstance(found, list):
        return found
    return (f'the retrieved context opens like a JSON list, and {found}: write the passages as a JSON list of strings, '
            'such as ["first passage", "second passage"], or as plain text with a blank line between passages')


def json_passages(text: str) -> list[str] | str:
    """The passages of a text written as a JSON list of strings; else why it is not one ("is not valid JSON (...)",
    "is not a list of strings"), for the sentence that refuses it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return f"is not valid JSON ({err.msg} at character {err.pos + 1})"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return "is not a list of strings"


class Verdict(BaseModel):
    """Everything one judgment produced, enough to reproduce and audit it.

    Its fields are the verdict columns of a history row: the store writes and reads them by these names.
    """

    status: Outcome
    output: dict[str, Any] | None = None
    derived: dict[str, float] = {}
    headline: float | None = None
    passed: bool | None = None
    label: str | None = None
    tag: str | None = None
    raw_reply: str | None = None
    error: str | None = None
    flags: list[str] = []
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # input tokens the provider served from its prompt cache
    tokens_reasoning: int = 0  # output tokens the judge spent reasoning (billed as output, part of tokens_out)
    reasoning_effort: str | None = None  # the effort the judge was asked for (else the model's own); None: unknown
    cost_usd: float | None = None  # what the tokens cost; None when the judge's price is unknown
    latency_ms: int = 0  # time the judge took to answer, summed over the requests that got an answer
    attempts: int = 0
    samples: int | None = None  # the rest is set when several judgments (samples, a jury) make this one
    agreement: float | None = None
    spread: float | None = None
    unsure: bool | None = None
    rubric_name: str
    rubric_version: str
    rubric_hash: str
    judge_model: str
    prompt_hash: str


VERDICT_FIELDS = tuple(Verdict.model_fields)
JUDGED_FIELDS = ("output", "derived", "headline", "passed", "label", "tag", "raw_reply", "error", "flags", "samples",
                 "agreement", "spread", "unsure")
"""What a judgment adds to a row (cleared when the row is judged again); the rest says who judged and at what cost."""
SAMPLE_FIELDS = ("status", "prompt_hash", "output", "derived", "headline", "passed", "label", "tag", "raw_reply",
                 "error", "tokens_in", "tokens_out", "tokens_cached", "tokens_reasoning", "cost_usd", "latency_ms",
                 "attempts", "reasoning_effort")
"""What a saved sample keeps of one judge's judgment, to be read back as a verdict."""


CHECK_CHANNEL = "#calibration-check"
"""The channel key of the terminal's checks, alignments, comparisons of judges and pairwise runs: no Slack channel id
has a "#", so their judgments stay out of every channel's and the terminal's stats, history, tallies and digest (they
judge labeled rows a second time, or say which of two answers won rather than how good one is)."""


def checks_of(channel_id: str | None) -> str:
    """The channel key of the checks, alignments, comparisons and pairwise runs a Slack channel asked for (the
    terminal's for None): out of its figures like every check run's, but its own, so that they count against that
    channel's monthly budget and its digest can show its pairwise win rates."""
    return f"{CHECK_CHANNEL} {channel_id}" if channel_id else CHECK_CHANNEL


def channel_of_checks(channel_key: str | None) -> str | None:
    """The Slack channel whose checks a channel key holds (see `checks_of`): None for the terminal's."""
    prefix = f"{CHECK_CHANNEL} "
    return channel_key[len(prefix):] if channel_key and channel_key.startswith(prefix) else None


PERIOD = re.compile(r"(\d{1,4})d|all", re.IGNORECASE)  # how a period is written, in `/judge` and on the command line


def is_period(word: str) -> bool:
    """Whether `word` is written as a period ("7d", "30d", "all"), whatever the days it names."""
    return PERIOD.fullmatch(word.strip()) is not None


def period_days(word: str) -> int | None:
    """The days a period names: 7 for "7d", None for "all" (all time). ValueError when `word` is not written as a
    period, or names 0 days."""
    found = PERIOD.fullmatch(word.strip())
    if found is None:
        raise ValueError(f"{word!r} is not a period: write 7d, 30d or all")
    if found.group(1) is None:
        return None
    if int(found.group(1)) == 0:
        raise ValueError("a period of 0 days holds nothing: try 7d, 30d or all")
    return int(found.group(1))
