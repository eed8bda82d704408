"""Figures read the same everywhere: a ratio is None when there is nothing to divide by, and numbers, shares,
durations and ISO weeks are written one way in the terminal and in Slack."""

from __future__ import annotations

from datetime import date

MISSING = "–"  # what a figure that cannot be computed shows


def ratio(part: float, whole: float) -> float | None:
    """`part / whole`, or None when `whole` is zero (a pass rate of no scored rows is not 0 %)."""
    return part / whole if whole else None


def number(value: float | None, digits: int = 2, *, missing: str = MISSING) -> str:
    """A number with `digits` decimals, or `missing`."""
    return missing if value is None else f"{value:.{digits}f}"


def percent(part: float | None, *, missing: str = MISSING) -> str:
    """A share as a whole percentage, or `missing`."""
    return missing if part is None else f"{part:.0%}"


def percents_apart(first: float, second: float) -> tuple[str, str]:
    """Two shares as percentages with as many decimals (up to two) as it takes to tell them apart: 78% against
    78% reads as 77.6% against 78.0% when they differ."""
    for digits in range(3):
        shown = f"{first:.{digits}%}", f"{second:.{digits}%}"
        if first == second or shown[0] != shown[1]:
            return shown
    return shown


def duration(seconds: float) -> str:
    """Such as 42 s, 3 min 05 s, 1 h 02 min."""
    seconds = max(int(seconds), 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def money(usd: float | None, *, missing: str = "price unknown") -> str:
    """US dollars as a person reads them: cents from a dollar up, four decimals below (a row costs fractions of a cent)."""
    if usd is None:
        return missing
    return f"${usd:,.2f}" if usd >= 0.995 else f"${usd:.4f}"


def spend_parts(by_judge: list[tuple[str, str, float, int]]) -> list[str]:
    """Each (rubric, judge, USD, judgments of unknown price) as "eth · gpt-4o $10.00 (3 judgments of unknown
    price)"."""
    return [f"{rubric} · {judge} {money(usd)}" + (f" ({count:,} {plural(count, 'judgment')} of unknown price)"
                                                 if count else "") for rubric, judge, usd, count in by_judge]


def judge_named(model: str, effort: str | None) -> str:
    """A judge as cards and summaries name it: "gpt-6-luna · effort low", or the model alone when its effort is not
    known."""
    return f"{model} · effort {effort}" if effort else model


def plural(count: int, word: str) -> str:
    """`word` as it goes with `count`: "1 row", "2 rows"."""
    return word if count == 1 else f"{word}s"


def iso_week(day: date) -> str:
    """The ISO week of a day (or of a moment's day), such as 2026-W47; 1 January 2027 is in 2026-W53."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
