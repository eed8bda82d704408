"""`/judge ...` parsed into one request: every command's way in, and the commands of grading, the history, a channel's
defaults and budget (the digest's are in bot.slack.commands.digest, the trust loop's in bot.slack.commands.trust)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.errors import CommandError, RubricError, SetupError
from bot.judge.panel import MAX_SAMPLES
from bot.llm.sampling import Effort, parse_effort
from bot.records import Triple, is_period, typed_passages
from bot.rubric import Rubric, RubricSet
from bot.slack.commands.digest import (
    DigestNow,
    DigestOff,
    DigestOn,
    DigestPreview,
    DigestShow,
    digest_command,
)
from bot.slack.commands.trust import (
    AlignRubric,
    CompareJudges,
    CompareModels,
    ReviewBlind,
    ReviewersSet,
    ReviewersShow,
    ReviewNext,
    ReviewNudge,
    align_command,
    compare_command,
    judges_command,
    review_command,
    reviewers_command,
)
from bot.slack.commands.words import JUDGE_NAME, STATS_DEFAULT_DAYS, days_of
from bot.slack.text import clean, escape, unescape

SEPARATOR = "||"
HISTORY_DEFAULT, HISTORY_MAX = 10, 40


@dataclass(frozen=True)
class Help:
    """Usage and the rubric list."""


@dataclass(frozen=True)
class ListRubrics:
    """The rubrics with their one-line descriptions."""


@dataclass(frozen=True)
class History:
    """The latest judgments of this channel."""

    limit: int = HISTORY_DEFAULT


@dataclass(frozen=True)
class Stats:
    """Per model and rubric figures of this channel over the last `days` (None: all time)."""

    days: int | None = STATS_DEFAULT_DAYS
    model: str | None = None


@dataclass(frozen=True)
class ShowDefault:
    """The rubric files shared in this channel are judged with by default."""


@dataclass(frozen=True)
class SetDefault:
    """Set (or with None, clear) the channel's default rubric."""

    rubric: Rubric | None


@dataclass(frozen=True)
class SetSamples:
    """Set how many times files shared and triples judged in this channel are judged per row (1: once)."""

    samples: int


@dataclass(frozen=True)
class SetJudge:
    """Show (`show`), set (with the reasoning effort it is asked at, when given), or with None clear the channel's own
    judge model."""

    model: str | None
    show: bool = False
    effort: Effort | None = None




@dataclass(frozen=True)
class OpenForm:
    """A modal to fill in, with `rubric` chosen."""

    rubric: Rubric


@dataclass(frozen=True)
class Inline:
    """A triple typed on the command line, judged at once (`samples` times when it says)."""

    rubric: Rubric
    triple: Triple
    samples: int | None = None


@dataclass(frozen=True)
class CalibrationCheck:
    """How far the judge agrees with people's labels in this channel: one rubric (None: the default, else each
    labeled one) over the last `days` (None: all time)."""

    rubric: Rubric | None = None
    days: int | None = None


@dataclass(frozen=True)
class BudgetShow:
    """What the channel spent this month, its monthly budget and the estimate above which a file asks first."""


@dataclass(frozen=True)
class BudgetSet:
    """Set (or with None, clear) the channel's monthly budget or its confirmation threshold, in USD."""

    limit: Literal["monthly_budget", "confirm_above"]
    amount: float | None


Command = (Help | ListRubrics | History | Stats | ShowDefault | SetDefault | SetSamples | SetJudge | OpenForm | Inline
           | DigestShow | DigestOn | DigestOff | DigestNow | DigestPreview | CalibrationCheck | BudgetShow | BudgetSet
           | ReviewNext | ReviewersShow | ReviewersSet | ReviewBlind | ReviewNudge | AlignRubric
           | CompareModels | CompareJudges)

USAGE = (
    "`/judge <rubric>` opens a form for one question, reference answer and answer\n"
    "`/judge <rubric> [samples=N] <question> || <reference> || <answer>` judges at once (N times: see how far the "
    "judge agrees with itself); a rubric that grades against retrieved passages takes them as a fourth part, "
    "`|| <context>` (a blank line between passages)\n"
    "`/judge history [N]` the latest judgments in this channel\n"
    f"`/judge stats [7d|30d|all] [model]` figures per model and rubric in this channel (default {STATS_DEFAULT_DAYS}d)\n"
    "`/judge default [<rubric>|none]` the rubric CSV files shared in this channel are judged with; "
    f"`/judge default samples N` how many times each row is judged here (1-{MAX_SAMPLES}: N times the cost; "
    "setting it: admins); "
    "`/judge default judge [<model> [effort]|none]` this channel's own judge model, and the reasoning effort it is "
    "asked at (setting it: admins)\n"
    "`/judge digest [on [day] [HH:MM] [timezone] | off | now | preview]` this channel's weekly digest (on and off: "
    "admins)\n"
    "`/judge calibration [rubric] [7d|30d|all]` how far the judge agrees with people's labels in this channel\n"
    "`/judge judges compare <model> [rubric]` a candidate judge against this channel's (admins)\n"
    "`/judge compare <model A> <model B> [7d|30d|all]` is B better than A, on the questions both answered here\n"
    "`/judge align <rubric>` a revision of the rubric with examples from this channel's corrections, measured on "
    "held-out cases (admins)\n"
    "`/judge review` the next case waiting for your label here; `/judge reviewers [@a @b | none]` who is asked; "
    "`/judge review blind [on|off]` and `/judge review nudge [HH:MM [timezone] | off]` (setting them: admins)\n"
    "`/judge budget [USD a month | off]` what this channel spent this month and its budget; `/judge budget ask USD` "
    "the estimate above which a shared file asks before it is judged (setting them: admins)\n"
    "Share a CSV or TSV (columns question, reference, answer, optionally model, and context for a rubric that "
    "reads retrieved passages) with the rubric in the message, "
    "such as `eth`: every row is judged in its thread\n"
    "`/judge rubrics` the rubrics · `/judge help` this help"
)


def parse_command(text: str, rubrics: RubricSet) -> Command:
    """Parse the text after `/judge`; CommandError names what is wrong and how to write it."""
    text = clean(unescape(text)).strip()
    word, rest = (text.split(None, 1) + ["", ""])[:2]
    word, rest = word.lower(), rest.strip()
    if word in ("", "help"):
        return Help()
    if word == "rubrics":
        return ListRubrics()
    if word == "history":
        return _history(rest)
    if word == "stats":
        return _stats(rest)
    if word == "default":
        return _default(rest, rubrics)
    if word == "digest":
        return digest_command(rest)
    if word == "calibration":
        return _calibration(rest, rubrics)
    if word == "budget":
        return _budget(rest)
    if word == "review":
        return review_command(rest)
    if word == "reviewers":
        return reviewers_command(rest)
    if word == "align":
        return align_command(rest, rubrics)
    if word == "compare":
        return compare_command(rest)
    if word == "judges":
        return judges_command(rest, rubrics)
    try:
        rubric = rubrics.get(word)
    except RubricError as err:
        raise CommandError(f"{escape(str(err))} `/judge help` shows the usage.") from None
    if not rest:
        return OpenForm(rubric)
    samples = None
    if found := LEADING_SAMPLES.match(rest):  # only in front: a question may well hold "samples=3"
        samples, rest = samples_count(found.group(1)), rest[found.end():]
    return Inline(rubric, _triple(rest, rubric), samples)


def _history(rest: str) -> History:
    if not rest:
        return History()
    if not (rest.isascii() and rest.isdigit()) or not 1 <= int(rest) <= HISTORY_MAX:
        raise CommandError(f"`/judge history [N]` takes a number from 1 to {HISTORY_MAX}, not `{escape(rest)}`.")
    return History(int(rest))


def _stats(rest: str) -> Stats:
    first, _, model = rest.partition(" ")
    if is_period(first):
        return Stats(days_of(first), model.strip() or None)
    return Stats(model=rest or None)


BUDGET_USAGE = "`/judge budget [USD a month | off]` or `/judge budget ask [USD | off]`, for example `/judge budget 200`"
MAX_USD = 1_000_000


def _budget(rest: str) -> BudgetShow | BudgetSet:
    words = rest.lower().split()
    if not words:
        return BudgetShow()
    limit: Literal["monthly_budget", "confirm_above"] = "monthly_budget"
    if words[0] == "ask":
        limit, words = "confirm_above", words[1:]
    if len(words) != 1:
        raise CommandError(f"{BUDGET_USAGE}.")
    if words[0] in ("off", "none", "clear"):
        return BudgetSet(limit, None)
    return BudgetSet(limit, usd(words[0]))


def usd(word: str) -> float:
    """An amount of dollars written in a command ("200", "$12.50", "1,000"); CommandError when it is not one."""
    cleaned = word.strip("`*_").removeprefix("$").removesuffix("usd").replace(",", "")
    try:
        amount = float(cleaned)
    except ValueError:
        raise CommandError(f"`{escape(word)}` is not an amount of dollars: {BUDGET_USAGE}.") from None
    if not 0.01 <= amount <= MAX_USD:  # NaN fails too
        raise CommandError(f"An amount from $0.01 to ${MAX_USD:,}, not `{escape(word)}`: {BUDGET_USAGE}.")
    return round(amount, 2)


def samples_count(word: str) -> int:
    """A number of samples written in a command or message; CommandError when it is not 1 to MAX_SAMPLES."""
    word = word.strip("`*_,.;")
    if not (word.isascii() and word.isdigit()) or not 1 <= int(word) <= MAX_SAMPLES:
        raise CommandError(f"samples takes a number from 1 to {MAX_SAMPLES}, not `{escape(word)}`.")
    return int(word)


def _default(rest: str, rubrics: RubricSet) -> ShowDefault | SetDefault | SetSamples | SetJudge:
    if not rest:
        return ShowDefault()
    first, _, value = rest.replace("=", " ").replace(":", " ").partition(" ")
    if first.lower() == "samples":
        return SetSamples(samples_count(value.strip()))
    if first.lower() == "judge":
        return _judge(rest.split(None, 1)[1].strip() if len(rest.split(None, 1)) > 1 else "")
    if rest.lower() in ("none", "off", "clear"):
        return SetDefault(None)
    try:
        return SetDefault(rubrics.get(rest))
    except RubricError as err:
        raise CommandError(f"{escape(str(err))} `/judge rubrics` lists them.") from None


def _judge(words: str) -> SetJudge:
    if not words:
        return SetJudge(None, show=True)
    if words.lower() in ("none", "off", "clear"):
        return SetJudge(None)
    model, _, effort = words.partition(" ")
    if not JUDGE_NAME.match(model):
        raise CommandError(f"`{escape(model[:140])}` is not a judge model name; name one as its endpoint spells it, "
                           "such as `gpt-6-luna`.")
    if not effort.strip():
        return SetJudge(model)
    try:
        return SetJudge(model, effort=parse_effort(effort, f"`{escape(words[:140])}`"))
    except SetupError as err:
        raise CommandError(f"{escape(str(err))}, as in `/judge default judge gpt-6-luna low`.") from None


LEADING_SAMPLES = re.compile(r"samples\s*[:=]\s*(\S+)\s*", re.IGNORECASE)


def _calibration(rest: str, rubrics: RubricSet) -> CalibrationCheck:
    rubric: Rubric | None = None
    days: int | None = None
    for word in rest.split():
        if is_period(word):
            days = days_of(word)
        elif rubric is None:
            try:
                rubric = rubrics.get(word)
            except RubricError as err:
                raise CommandError(f"{escape(str(err))} `/judge calibration [rubric] [7d|30d|all]`.") from None
        else:
            raise CommandError(f"`/judge calibration` takes one rubric and one period, such as "
                               f"`/judge calibration {escape(rubric.name)} 30d`; `{escape(word)}` is one too many.")
    return CalibrationCheck(rubric, days)


def _triple(rest: str, rubric: Rubric) -> Triple:
    parts = [part.strip() for part in rest.split(SEPARATOR)]
    wanted = 4 if rubric.uses_context else 3
    usage = (f"`/judge {escape(rubric.name)} <question> {SEPARATOR} <reference answer> {SEPARATOR} <answer>"
             + (f" {SEPARATOR} <retrieved context>`" if rubric.uses_context else "`"))
    if len(parts) == 4 and not rubric.uses_context:
        raise CommandError(f"*{escape(rubric.name)}* does not read retrieved context (its template has no "
                           f"`$context`), so it takes three parts: {usage}. A rubric that grades against the passages "
                           "takes them as a fourth part.")
    if len(parts) == 3 and rubric.uses_context:
        raise CommandError(f"*{escape(rubric.name)}* grades the answer against the passages retrieved for the "
                           f"question: give them as a fourth part, {usage} ({PASSAGES_TYPED}). Or type "
                           f"`/judge {escape(rubric.name)}` for a form.")
    if len(parts) != wanted or not all(parts):
        raise CommandError(
            f"To judge at once, give {'four' if rubric.uses_context else 'three'} parts separated by `{SEPARATOR}`: "
            f"{usage} (found {len([p for p in parts if p])} non-empty part(s)). Or type "
            f"`/judge {escape(rubric.name)}` for a form."
        )
    context = context_typed(parts[3]) if rubric.uses_context else None
    return Triple(question=parts[0], reference=parts[1], answer=parts[2], context=context)


PASSAGES_TYPED = "a blank line between passages, or a JSON list of strings"


def context_typed(text: str) -> list[str]:
    """The passages typed as one text (a blank line between them, or a JSON list of strings); CommandError says why
    a text that opens like a JSON list is not one."""
    passages = typed_passages(text)
    if isinstance(passages, str):
        raise CommandError(f"{escape(passages[:1].upper() + passages[1:])}.")
    return passages
