"""The words and values a `/judge` command is written with: periods, judge models' names, days of the week, clock
times and timezones."""

from __future__ import annotations

import difflib
import re
import zoneinfo

from bot.errors import CommandError
from bot.records import period_days
from bot.slack.text import escape

STATS_DEFAULT_DAYS = 30
JUDGE_NAME = re.compile(r"^[A-Za-z0-9][\w.:/@+-]{0,127}$")  # a model name as endpoints spell them
DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$", re.IGNORECASE)


def days_of(word: str) -> int | None:
    """The days of a period word (None: all time); CommandError for 0 days, the one period word that names none."""
    try:
        return period_days(word)
    except ValueError:
        raise CommandError("A period of 0 days holds nothing: try `7d`, `30d` or `all`.") from None


def weekday_of(word: str) -> int | None:
    """The day of the week `word` names (0: Monday), written whole or from its first three letters."""
    word = word.lower().rstrip(",.s") if len(word) > 3 else word.lower()
    for index, name in enumerate(DAY_NAMES):
        if len(word) >= 3 and name.startswith(word):
            return index
    return None


def clock_of(word: str) -> tuple[int, int] | None:
    """(hour, minute) of a clock time such as 09:00, 9 or 5pm; None when `word` is not one, CommandError when out of
    range."""
    match = CLOCK.match(word)
    if not match:
        return None
    hour, minute, half = int(match.group(1)), int(match.group(2) or 0), (match.group(3) or "").lower()
    if half:
        if not 1 <= hour <= 12:
            raise CommandError(f"`{escape(word)}` is not a time: with am or pm the hour is 1 to 12.")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise CommandError(f"`{escape(word)}` is not a time of day: write it like 09:00 or 17:30.")
    return hour, minute


def timezone_named(name: str) -> str:
    """The IANA timezone called `name` (any case, such as europe/berlin or UTC); CommandError with suggestions."""
    known = {zone.lower(): zone for zone in zoneinfo.available_timezones()}
    if name.lower() in known:
        return known[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(known), n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(f'`{known[c]}`' for c in close)}?" if close else \
        " Use a name such as `Europe/Berlin`, `America/New_York` or `UTC`."
    raise CommandError(f"I do not know the timezone `{escape(name)}`.{hint}")
