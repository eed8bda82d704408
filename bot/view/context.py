"""What every page of the view is given: the settings, the history, the rubrics, and who is looking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from bot.config import Settings
from bot.view.security import Handler
from bot.view.viewer import Viewer, ViewerFor

if TYPE_CHECKING:
    from bot.rubric import RubricSet
    from bot.store import Store

SETTINGS: web.AppKey[Settings] = web.AppKey("settings", Settings)
STORE: web.AppKey[Store] = web.AppKey("store")
RUBRICS: web.AppKey[RubricSet] = web.AppKey("rubrics")
VIEWER_FOR: web.AppKey[ViewerFor] = web.AppKey("viewer_for")
VIEWER: web.RequestKey[Viewer] = web.RequestKey("viewer", Viewer)
SIGN_IN = ("Sign in to see judgebot's history: this view shows a person the judgments of the channels they are "
           "in.")


@web.middleware
async def viewer_of(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Who makes the request, for every page (nobody: 401 with a sentence saying so)."""
    viewer = await request.app[VIEWER_FOR](request)
    if viewer is None:
        raise web.HTTPUnauthorized(text=SIGN_IN)
    request[VIEWER] = viewer
    return await handler(request)


def viewer(request: web.Request) -> Viewer:
    """The person making the request."""
    return request[VIEWER]


def store(request: web.Request) -> Store:
    """The history."""
    return request.app[STORE]


def rubrics(request: web.Request) -> RubricSet:
    """The rubrics in force."""
    return request.app[RUBRICS]


def settings(request: web.Request) -> Settings:
    """The settings."""
    return request.app[SETTINGS]


def number(request: web.Request, name: str, default: int, *, least: int = 1, most: int = 1_000_000) -> int:
    """A whole-number query parameter, within [least, most]; 400 with a sentence when it is not a number."""
    text = request.query.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a whole number.") from None
    return min(max(value, least), most)
