"""The review queue."""

from __future__ import annotations

from aiohttp import web


async def queue_page(request: web.Request) -> web.StreamResponse:
    """GET /review."""
    raise web.HTTPNotFound(text="not yet")


async def take_next(request: web.Request) -> web.StreamResponse:
    """POST /review/next."""
    raise web.HTTPNotFound(text="not yet")


async def case_page(request: web.Request) -> web.StreamResponse:
    """GET /review/cases/{id}."""
    raise web.HTTPNotFound(text="not yet")


async def label_case_form(request: web.Request) -> web.StreamResponse:
    """POST label."""
    raise web.HTTPNotFound(text="not yet")


async def skip_case_form(request: web.Request) -> web.StreamResponse:
    """POST skip."""
    raise web.HTTPNotFound(text="not yet")
