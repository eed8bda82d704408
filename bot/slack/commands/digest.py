"""`/judge digest ...` parsed: show, on (a local day, time and timezone), off, now and preview."""

from __future__ import annotations

from dataclasses import dataclass

from bot.errors import CommandError
from bot.slack.commands.words import clock_of, timezone_named, weekday_of
from bot.slack.text import escape

DIGEST_USAGE = "`/judge digest on [day] [HH:MM] [timezone]`, for example `/judge digest on monday 09:00 Europe/Berlin`"


@dataclass(frozen=True)
class DigestShow:
    """The channel's digest subscription and its next posting time."""


@dataclass(frozen=True)
class DigestOn:
    """Post the channel's digest weekly at a local day and time (None: the defaults)."""

    weekday: int = 0
    hour: int = 9
    minute: int = 0
    timezone: str | None = None


@dataclass(frozen=True)
class DigestOff:
    """Stop the channel's weekly digest."""


@dataclass(frozen=True)
class DigestNow:
    """Post the digest of the last 7 days now."""


@dataclass(frozen=True)
class DigestPreview:
    """Show the digest of the last 7 days to the caller only."""


def digest_command(rest: str) -> DigestShow | DigestOn | DigestOff | DigestNow | DigestPreview:
    action, _, options = rest.partition(" ")
    action = action.lower()
    simple: dict[str, type[DigestShow | DigestOff | DigestNow | DigestPreview]] = {
        "": DigestShow, "show": DigestShow, "off": DigestOff, "now": DigestNow, "preview": DigestPreview}
    if action in simple:
        if options.strip():
            raise CommandError(f"`/judge digest {action}` takes nothing more. {DIGEST_USAGE}.")
        return simple[action]()
    if action != "on":
        raise CommandError(f"`/judge digest` knows `on`, `off`, `now` and `preview`, not `{escape(action)}`. "
                           f"{DIGEST_USAGE}.")
    weekday: int | None = None
    clock: tuple[int, int] | None = None
    timezone: str | None = None
    for word in options.split():
        if (day := weekday_of(word)) is not None:
            if weekday is not None:
                raise CommandError(f"Give one day only. {DIGEST_USAGE}.")
            weekday = day
        elif (time := clock_of(word)) is not None:
            if clock is not None:
                raise CommandError(f"Give one time only. {DIGEST_USAGE}.")
            clock = time
        else:
            if timezone is not None:
                raise CommandError(f"I do not understand `{escape(word)}`. {DIGEST_USAGE}.")
            timezone = timezone_named(word)
    hour, minute = clock or (9, 0)
    return DigestOn(weekday or 0, hour, minute, timezone)
