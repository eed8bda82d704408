"""A run's rows (filtered by model, status, tag, pass/fail and flags, searched, sorted by headline, a page at a time)
and one row whole: its texts, every criterion, the reasoning, the samples or jury members, labels and votes."""

from __future__ import annotations

from aiohttp import web


async def run_page(request: web.Request) -> web.StreamResponse:
    """GET /runs/{id}."""
    raise web.HTTPNotFound(text="not yet")


async def row_page(request: web.Request) -> web.StreamResponse:
    """GET /rows/{id}."""
    raise web.HTTPNotFound(text="not yet")
