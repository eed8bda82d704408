"""The list of runs: file, rubric, judge, models under test, pass rate, cost and status, newest first, a page at a
time, only those of the channels the viewer may see."""

from __future__ import annotations

from aiohttp import web

from bot.store import run_lines
from bot.view.context import number, store, viewer
from bot.view.templates import render

PAGE = 50  # runs a page lists


async def runs_page(request: web.Request) -> web.StreamResponse:
    """GET /runs?page=N."""
    page = number(request, "page", 1)
    lines, total = run_lines(store(request), channels=viewer(request).channels, limit=PAGE, offset=(page - 1) * PAGE)
    pages = max((total + PAGE - 1) // PAGE, 1)
    return render(request, "runs.html", title="Runs", lines=lines, total=total, page=page, pages=pages)
