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
PUBLIC = frozenset({"stylesheet", "signin", "signin_callback", "signout"})  # routes anyone may reach, signed in or not
SIGN_IN_ROUTE = "signin"


@web.middleware
async def viewer_of(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Who makes the request, for every page but the PUBLIC ones (nobody: to the sign-in page when there is one, else
    401 with a sentence saying so)."""
    route = request.match_info.route.name
    if route in PUBLIC:
        return await handler(request)
    viewer = await request.app[VIEWER_FOR](request)
    if viewer is None:
        if request.method == "GET" and SIGN_IN_ROUTE in request.app.router.named_resources():
            raise web.HTTPFound(base_of(request) + "/signin")
        raise web.HTTPUnauthorized(text=SIGN_IN)
    request[VIEWER] = viewer
    return await handler(request)


def base_of(request: web.Request) -> str:
    """The path the view is mounted at ("" at the root of its own site, "/view" inside `judgebot serve`'s): every
    link and redirect starts with it."""
    return request.app.router["home"].canonical.rstrip("/")


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
