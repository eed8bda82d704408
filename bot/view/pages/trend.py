"""The trend page."""

from __future__ import annotations

from aiohttp import web


async def trend_page(request: web.Request) -> web.StreamResponse:
    """GET /trend."""
    raise web.HTTPNotFound(text="not yet")
