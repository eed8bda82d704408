"""The view's pages written from Jinja2 templates shipped in the package, every value escaped (autoescape on for
every template, whatever its name), with the filters that write figures as the terminal and Slack do."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import jinja2
from aiohttp import web

from bot.figures import money, percent
from bot.view.context import VIEWER, base_of
from bot.view.security import csrf_token
from bot.view.session import CSRF_FIELD

DASH = "—"
ENVIRONMENT: web.AppKey[jinja2.Environment] = web.AppKey("templates", jinja2.Environment)


def environment() -> jinja2.Environment:
    """The templates of bot/view/templates, autoescaped, an undefined name an error rather than an empty string."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("bot.view", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(percent=lambda value: DASH if value is None else percent(value),
                       money=lambda value: DASH if value is None else money(value),
                       number=lambda value: DASH if value is None else f"{value:,}",
                       score=lambda value: DASH if value is None else f"{value:.1f}",
                       when=lambda value: DASH if value is None else f"{value:%Y-%m-%d %H:%M}",
                       day=lambda value: DASH if value is None else f"{value:%Y-%m-%d}",
                       dash=lambda value: DASH if value is None or value == "" else value)
    return env


def query(base: dict[str, Any], **changes: Any) -> str:
    """A query string of `base` with `changes` (a None value leaves a key out): the links of filters and pages."""
    merged = {**base, **changes}
    return "?" + urlencode([(key, value) for key, value in merged.items() if value is not None and value != ""])


def render(request: web.Request, name: str, *, status: int = 200, **context: Any) -> web.Response:
    """The page `name` for this request, with what every page shows (who looks, the CSRF token of its forms, `base`:
    the path the view is mounted at, which every link starts with)."""
    template = request.app[ENVIRONMENT].get_template(name)
    base = base_of(request)
    text = template.render(viewer=request.get(VIEWER), csrf_field=CSRF_FIELD, csrf=csrf_token(request),
                           path=request.path, base=base, here=request.path.removeprefix(base), now=datetime.now(),
                           query=query, **context)
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")
