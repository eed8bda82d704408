"""The weekly trend of a channel (or the terminal): each model's pass rate and mean headline per ISO week, counted
by the history's counting rule from the hourly tallies, drawn as SVG, with the weeks a judge or a rubric text
changed marked."""

from __future__ import annotations

from datetime import datetime, timedelta

from aiohttp import web

from bot.figures import iso_week
from bot.store import judges_used, rubric_texts_used, utcnow, weekly_figures
from bot.view.charts import weekly_chart
from bot.view.context import number, store, viewer
from bot.view.pages.review import channel_param
from bot.view.templates import render


def week_bounds(now: datetime, count: int) -> list[tuple[datetime, datetime]]:
    """The `count` ISO weeks (UTC, Monday to Monday) up to the one under way, oldest first."""
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    starts = [monday - timedelta(weeks=back) for back in range(count - 1, -1, -1)]
    return [(start, start + timedelta(weeks=1)) for start in starts]


def changes(used: list[tuple[datetime, str]], weeks: list[tuple[datetime, datetime]]) -> list[set[str]]:
    """What was used in each week (judges, or rubric texts)."""
    found: list[set[str]] = [set() for _ in weeks]
    for at, what in used:
        for index, (start, end) in enumerate(weeks):
            if start <= at < end:
                found[index].add(what)
    return found


def marked(weeks: list[tuple[datetime, datetime]], judges: list[set[str]], texts: list[set[str]]) -> list[tuple[int, str]]:
    """The weeks whose judges or rubric texts differ from those of the last week before with any: (index, why)."""
    marks, last_judges, last_texts = [], set[str](), set[str]()
    for index in range(len(weeks)):
        why = []
        if judges[index] and last_judges and judges[index] != last_judges:
            why.append("judge: " + ", ".join(sorted(judges[index])))
        if texts[index] and last_texts and texts[index] != last_texts:
            why.append("rubric changed")
        if why:
            marks.append((index, "; ".join(why)))
        last_judges = judges[index] or last_judges
        last_texts = texts[index] or last_texts
    return marks


async def trend_page(request: web.Request) -> web.StreamResponse:
    """GET /trend?channel=C&weeks=12."""
    channel = viewer(request).channel(request.query.get("channel"))
    count = number(request, "weeks", 12, least=2, most=52)
    weeks = week_bounds(utcnow(), count)
    history = store(request)
    since, until = weeks[0][0], weeks[-1][1]
    figures = weekly_figures(history, channel_id=channel, weeks=weeks)
    judges = changes(judges_used(history, channel_id=channel, since=since, until=until, cut=since), weeks)
    texts = changes([(at, f"{rubric} {digest}") for at, rubric, _, digest in
                     rubric_texts_used(history, channel_id=channel, since=since, until=until, cut=since)], weeks)
    marks = marked(weeks, judges, texts)
    names = [iso_week(start.date()) for start, _ in weeks]
    charts = []
    for (model, rubric), found in sorted(figures.items(), key=lambda item: (item[0][0] or "", item[0][1])):
        pass_rates = [None if week.pass_rate is None else week.pass_rate * 100 for week in found]
        means = [week.mean_headline for week in found]
        chart = weekly_chart(names, [("pass rate %", "pass-rate", pass_rates), ("mean headline", "headline", means)],
                             marks)
        charts.append((model, rubric, chart, list(zip(names, found))))
    return render(request, "trend.html", title=f"Weekly trend of {'the terminal' if channel is None else channel}",
                  charts=charts, weeks=count, channel=channel_param(channel), marks=[(names[i], why) for i, why in marks])
