"""What `/judge ...` asks for: the command text parsed into one request, or a message saying what is wrong."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.judge import Triple
from bot.rubrics import Rubric, RubricError, RubricSet
from bot.slack.text import escape, unescape

SEPARATOR = "||"
HISTORY_DEFAULT, HISTORY_MAX = 10, 40
STATS_DEFAULT_DAYS = 30
WINDOW = re.compile(r"^(\d{1,4})d$|^all$", re.IGNORECASE)


class CommandError(ValueError):
    """The command text cannot be understood; the message says how to write it."""


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
class OpenForm:
    """A modal to fill in, with `rubric` chosen."""

    rubric: Rubric


@dataclass(frozen=True)
class Inline:
    """A triple typed on the command line, judged at once."""

    rubric: Rubric
    triple: Triple


Command = Help | ListRubrics | History | Stats | OpenForm | Inline

USAGE = (
    "`/judge <rubric>` opens a form for one question, reference answer and answer\n"
    "`/judge <rubric> <question> || <reference> || <answer>` judges at once\n"
    "`/judge history [N]` the latest judgments in this channel\n"
    f"`/judge stats [7d|30d|all] [model]` figures per model and rubric in this channel (default {STATS_DEFAULT_DAYS}d)\n"
    "`/judge rubrics` the rubrics · `/judge help` this help"
)


def parse_command(text: str, rubrics: RubricSet) -> Command:
    """Parse the text after `/judge`; CommandError names what is wrong and how to write it."""
    text = unescape(text).strip()
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
    try:
        rubric = rubrics.get(word)
    except RubricError as err:
        raise CommandError(f"{escape(str(err))} `/judge help` shows the usage.") from None
    if not rest:
        return OpenForm(rubric)
    return Inline(rubric, _triple(rest, rubric))


def _history(rest: str) -> History:
    if not rest:
        return History()
    if not (rest.isascii() and rest.isdigit()) or not 1 <= int(rest) <= HISTORY_MAX:
        raise CommandError(f"`/judge history [N]` takes a number from 1 to {HISTORY_MAX}, not `{escape(rest)}`.")
    return History(int(rest))


def _stats(rest: str) -> Stats:
    first, _, model = rest.partition(" ")
    if match := WINDOW.match(first):
        days = int(match.group(1)) if match.group(1) else None
        if days == 0:
            raise CommandError("A period of 0 days holds nothing: try `7d`, `30d` or `all`.")
        return Stats(days, model.strip() or None)
    return Stats(model=rest or None)


def _triple(rest: str, rubric: Rubric) -> Triple:
    parts = [part.strip() for part in rest.split(SEPARATOR)]
    if len(parts) != 3 or not all(parts):
        raise CommandError(
            f"To judge at once, give three parts separated by `{SEPARATOR}`: "
            f"`/judge {rubric.name} <question> {SEPARATOR} <reference answer> {SEPARATOR} <answer>` "
            f"(found {len([p for p in parts if p])} non-empty part(s)). Or type `/judge {rubric.name}` for a form."
        )
    return Triple(question=parts[0], reference=parts[1], answer=parts[2])
