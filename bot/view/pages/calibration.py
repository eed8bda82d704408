"""The calibration page."""

from __future__ import annotations

from aiohttp import web


async def calibration_page(request: web.Request) -> web.StreamResponse:
    """GET /calibration."""
    raise web.HTTPNotFound(text="not yet")
