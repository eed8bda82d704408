"""The `/judge` commands of the trust loop: the review queue and its reviewers, comparing models and judges, and
aligning a rubric with people's labels."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import CommandError, RubricError
from bot.records import is_period
from bot.rubric import Rubric, RubricSet
from bot.slack.commands.words import JUDGE_NAME, STATS_DEFAULT_DAYS, clock_of, days_of, timezone_named
from bot.slack.text import escape


@dataclass(frozen=True)
class CompareJudges:
    """A candidate judge against this channel's judge, on its labeled cases and recent judgments (admins)."""

    model: str
    rubric: Rubric | None = None


@dataclass(frozen=True)
class CompareModels:
    """Is B better than A? Two models under test of this channel's history, paired on the same questions."""

    a: str
    b: str
    days: int | None = STATS_DEFAULT_DAYS


@dataclass(frozen=True)
class AlignRubric:
    """Align a rubric with this channel's labels: a candidate revision measured on held-out cases (admins)."""

    rubric: Rubric


@dataclass(frozen=True)
class ReviewNext:
    """The next case of the channel's review queue, for the caller to label."""


@dataclass(frozen=True)
class ReviewersShow:
    """Who the channel's review queue asks, blind review, the nudge, and the queue."""


@dataclass(frozen=True)
class ReviewersSet:
    """Set who the channel's review queue asks: user ids and user groups as S ids, and @handles typed as plain text
    (Slack sends mentions so when it does not escape them) to look up (none at all: nobody in particular)."""

    reviewers: tuple[str, ...]
    handles: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReviewBlind:
    """Whether reviewers see the judge's verdict only after saving their own label."""

    blind: bool


@dataclass(frozen=True)
class ReviewNudge:
    """Nudge the channel's reviewers on weekdays at a local time (None: stop)."""

    hour: int | None = None
    minute: int | None = None
    timezone: str | None = None


REVIEW_USAGE = ("`/judge review` (the next case for you), `/judge review blind on|off` or "
                "`/judge review nudge 10:00 Europe/Berlin` (or `off`)")
HANDLE = re.compile(r"@[\w.\-']{1,80}")  # a member's or a user group's handle, as typed
MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|<!subteam\^(S[A-Z0-9]+)(?:\|[^>]*)?>")


def review_command(rest: str) -> ReviewNext | ReviewBlind | ReviewNudge:
    """`/judge review [blind on|off | nudge HH:MM [timezone] | nudge off]`."""
    action, _, options = rest.partition(" ")
    action, options = action.lower(), options.strip()
    if not action:
        return ReviewNext()
    if action == "blind" and options.lower() in ("on", "off"):
        return ReviewBlind(options.lower() == "on")
    if action == "nudge":
        return _nudge(options)
    raise CommandError(f"I do not understand `/judge review {escape(rest)}`: {REVIEW_USAGE}.")


def _nudge(options: str) -> ReviewNudge:
    if options.lower() in ("off", "none", "stop"):
        return ReviewNudge()
    words = [word for word in options.replace(",", " ").split() if word.lower() not in ("weekdays", "on")]
    if not words or len(words) > 2 or (clock := clock_of(words[0])) is None:
        raise CommandError("Give the time of the weekday nudge: `/judge review nudge 10:00 Europe/Berlin` "
                           "(the timezone is optional), or `/judge review nudge off`.")
    return ReviewNudge(clock[0], clock[1], timezone_named(words[1]) if len(words) == 2 else None)


def judges_command(rest: str, rubrics: RubricSet) -> CompareJudges:
    """`/judge judges compare <model> [rubric]`."""
    words = rest.split()
    if len(words) not in (2, 3) or words[0].lower() != "compare" or not JUDGE_NAME.fullmatch(words[1]):
        raise CommandError("`/judge judges compare <model> [rubric]` compares a candidate judge with this channel's, "
                           "such as `/judge judges compare gpt-5.4-mini eth`.")
    if len(words) == 2:
        return CompareJudges(words[1])
    try:
        return CompareJudges(words[1], rubrics.get(words[2]))
    except RubricError as err:
        raise CommandError(f"{escape(str(err))} `/judge rubrics` lists them.") from None


def compare_command(rest: str) -> CompareModels:
    """`/judge compare <A> <B> [7d|30d|all]`."""
    words = rest.split()
    days: int | None = STATS_DEFAULT_DAYS
    if words and is_period(words[-1]):
        days, words = days_of(words[-1]), words[:-1]
    if len(words) != 2:
        raise CommandError("Name two models under test, A then B: `/judge compare bot-v1 bot-v2 [7d|30d|all]`.")
    return CompareModels(words[0], words[1], days)


def align_command(rest: str, rubrics: RubricSet) -> AlignRubric:
    """`/judge align <rubric>`."""
    if not rest.strip():
        raise CommandError("Name the rubric to align with this channel's labels, such as `/judge align eth`.")
    try:
        return AlignRubric(rubrics.get(rest.strip()))
    except RubricError as err:
        raise CommandError(f"{escape(str(err))} `/judge rubrics` lists them.") from None


def reviewers_command(rest: str) -> ReviewersShow | ReviewersSet:
    """`/judge reviewers [@people and @groups | none]`."""
    if not rest:
        return ReviewersShow()
    if rest.lower() in ("none", "off", "clear"):
        return ReviewersSet(())
    found = [user or group for user, group in MENTION.findall(rest)]
    words = MENTION.sub(" ", rest).replace(",", " ").split()
    left = [word for word in words if not HANDLE.fullmatch(word)]
    if left:
        raise CommandError(f"Name reviewers by mentioning them or a user group, for example `/judge reviewers @ana "
                           f"@ben`; `{escape(' '.join(left))}` is neither. `/judge reviewers none` clears the list.")
    return ReviewersSet(tuple(dict.fromkeys(found)), tuple(dict.fromkeys(word[1:].lower() for word in words)))
