"""The digest's week: seven days of local time, named by ISO week, as the history's naive UTC bounds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.errors import WeekError
from bot.figures import iso_week

WEEK = timedelta(days=7)


def local_midnight(moment: datetime) -> datetime:
    """The start of the local day of an aware `moment`."""
    return datetime.combine(moment.date(), time(), moment.tzinfo)


@dataclass(frozen=True)
class Period:
    """Seven days of local time, [start, end); a week across a DST change is 167 or 169 hours long."""

    start: datetime
    end: datetime

    @classmethod
    def ending(cls, end: datetime) -> Period:
        """The seven days before an aware `end` (wall-clock days, as people in that timezone count them)."""
        start = (end.replace(tzinfo=None) - WEEK).replace(tzinfo=end.tzinfo)
        return cls(start, end)

    @classmethod
    def before_day_of(cls, moment: datetime) -> Period:
        """The seven days before the local day of `moment`: for a digest posted on Monday, last Monday to Sunday."""
        return cls.ending(local_midnight(moment))

    @classmethod
    def of_week(cls, text: str, zone: ZoneInfo) -> Period:
        """The ISO week `text` (such as 2026-W47), Monday to Sunday in `zone`."""
        try:
            year, week = text.strip().upper().split("-W")
            monday = date.fromisocalendar(int(year), int(week), 1)
        except ValueError:
            raise WeekError(f"`{text}` is not an ISO week: write it like 2026-W47.") from None
        start = datetime.combine(monday, time(), zone)
        return cls(start, datetime.combine(monday + WEEK, time(), zone))

    @property
    def last_day(self) -> date:
        """The last local day the period covers."""
        return (self.end - timedelta(microseconds=1)).date()

    @property
    def week(self) -> str:
        """The ISO week of the last day: the week the period's figures are of, on a Monday-to-Sunday period."""
        return iso_week(self.last_day)

    @property
    def posting_week(self) -> str:
        """The ISO week of the end: a scheduled digest is posted on that day, and a channel gets one per ISO week.

        Keyed so, a digest moved to another day still posts in the next week (Tuesday to Monday), and is not
        posted twice in a week it was posted in already (Monday to Friday).
        """
        return iso_week(self.end.date())

    @property
    def label(self) -> str:
        """Such as "16–22 Nov 2026"."""
        first, last = self.start.date(), self.last_day
        if (first.year, first.month) == (last.year, last.month):
            return f"{first.day}–{last.day} {last:%b %Y}"
        if first.year == last.year:
            return f"{first.day} {first:%b}–{last.day} {last:%b %Y}"
        return f"{first.day} {first:%b %Y}–{last.day} {last:%b %Y}"

    @property
    def utc(self) -> tuple[datetime, datetime]:
        """(start, end) as the naive UTC the history stores."""
        return _naive_utc(self.start), _naive_utc(self.end)

    def previous(self) -> Period:
        """The seven days before this one."""
        return Period.ending(self.start)

    def weeks(self, count: int) -> list[Period]:
        """`count` periods of seven days ending with this one, oldest first."""
        periods = [self]
        while len(periods) < count:
            periods.insert(0, periods[0].previous())
        return periods


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)
