"""The compare page."""

from __future__ import annotations

from aiohttp import web


async def compare_page(request: web.Request) -> web.StreamResponse:
    """GET /compare."""
    raise web.HTTPNotFound(text="not yet")
