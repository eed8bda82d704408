"""Calibration: how far the judge agrees with people's labels of a rubric (agreement and kappa with their intervals,
both sides' pass rates, the confusion matrix of tags, agreement per week), through the very report `judgebot
calibration` prints, of one channel the viewer may see or, for the person at this machine, of every channel."""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from bot.errors import JudgebotError
from bot.records import is_period, period_days
from bot.store import utcnow
from bot.trust.calibration_report import calibration_report
from bot.trust.calibration_texts import agreement_text, gap_text, pass_rates_text, tag_agreement_text
from bot.view.context import rubrics, settings, store, viewer
from bot.view.templates import render
from bot.view.viewer import TERMINAL

EVERYWHERE = "all"  # the channel parameter for every channel and the terminal (the person at this machine only)
PERIODS = ("7d", "30d", "90d", "all")


def since_of(text: str) -> tuple[str, timedelta | None]:
    """The period a page's `since` names (7d, 30d, 90d, all; default all), and how far back it reaches."""
    text = text.strip().lower() or "all"
    if not is_period(text) or text not in PERIODS:
        raise web.HTTPBadRequest(text=f"since must be one of {', '.join(PERIODS)}.")
    days = period_days(text)
    return text, None if days is None else timedelta(days=days)


async def calibration_page(request: web.Request) -> web.StreamResponse:
    """GET /calibration?rubric=NAME&channel=C|terminal|all&since=30d."""
    who, loaded = viewer(request), rubrics(request)
    asked = request.query.get("channel", "").strip()
    everywhere = asked == EVERYWHERE or (not asked and who.sees_everything)
    if everywhere and not who.sees_everything:
        raise web.HTTPNotFound(text="No such channel here.")
    channel = None if everywhere else who.channel(asked)
    period, back = since_of(request.query.get("since", ""))
    names = sorted(rubric.name for rubric in loaded if not rubric.pairwise)
    name = request.query.get("rubric", "").strip() or (names[0] if names else "")
    try:
        rubric = loaded.get(name)
    except JudgebotError as err:
        raise web.HTTPNotFound(text=str(err)) from None
    report = calibration_report(store(request), settings(request), rubric, channel=channel,
                                since=None if back is None else utcnow() - back)
    figures = report.figures
    where = "every channel and the terminal" if everywhere else ("the terminal" if channel is None else channel)
    channel_value = EVERYWHERE if everywhere else (TERMINAL if channel is None else channel)
    return render(request, "calibration.html", title=f"Calibration of {rubric.name}, {where}", report=report,
                  figures=figures, rubric=rubric, names=names, channel=channel_value, period=period, periods=PERIODS,
                  agreement=agreement_text(figures) if figures.n else None,
                  pass_rates=pass_rates_text(figures) if figures.n else None,
                  kappa=figures.kappa_pass.text(), tag_agreement=tag_agreement_text(figures) if figures.tag_n else None,
                  kappa_tag=figures.kappa_tag.text() if figures.tag_n else None,
                  gaps=[(path, gap_text(gap)) for path, gap in figures.gaps.items()],
                  doubts=[str(doubt) for doubt in report.doubts])
