"""The view's aiohttp application: its pages and their addresses, the stylesheet, and what every request passes
through (who looks, the Host, the signed session and its CSRF token, the policy headers). `judgebot view` serves it
alone; `judgebot serve` can mount the same application."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from aiohttp import web

from bot.config import Settings
from bot.view.context import RUBRICS, SETTINGS, STORE, VIEWER_FOR, base_of, viewer_of
from bot.view.pages import calibration, compare, review, rows, runs, trend
from bot.view.security import HOSTS, SESSIONS, loopback_only, own_host, secure_headers, signed_session
from bot.view.session import Sessions
from bot.view.templates import ENVIRONMENT, environment
from bot.view.viewer import ViewerFor, local_viewer

if TYPE_CHECKING:
    from bot.rubric import RubricSet
    from bot.store import Store
    from bot.view.signin import SignIn

STYLESHEET = "view.css"


def make_view_app(settings: Settings, store: Store, *, rubrics: RubricSet | None = None,
                  viewer_for_request: ViewerFor = local_viewer, sessions: Sessions | None = None,
                  allowed_hosts: frozenset[str] | None = None, sign_in: SignIn | None = None,
                  local_only: bool = False) -> web.Application:
    """The view over `store`: every page shows what `viewer_for_request` says the request's person may see (default:
    the person at this machine, every channel). `allowed_hosts`: the Host names it answers to (None: any; `judgebot
    view` on loopback gives the loopback names). `sessions`: signs its cookies (default: from SECRETS_KEY).
    `sign_in`: Sign in with Slack, whose signed-in person is the viewer of every page (nobody: to /signin).
    `local_only`: refuse, with 403 and a sentence, every request that does not come straight from this machine."""
    if rubrics is None:
        from bot.rubric import load_rubrics

        rubrics = load_rubrics(settings.rubrics_dir)
    if sign_in is not None:
        viewer_for_request = sign_in.viewer
    middlewares = [loopback_only] if local_only else []
    app = web.Application(middlewares=[*middlewares, own_host, signed_session, viewer_of], client_max_size=64 * 1024)
    app[SETTINGS], app[STORE], app[RUBRICS], app[VIEWER_FOR] = settings, store, rubrics, viewer_for_request
    app[SESSIONS] = sessions or Sessions.from_settings(settings)
    app[HOSTS] = allowed_hosts
    app[ENVIRONMENT] = environment()
    app.on_response_prepare.append(secure_headers)
    app.router.add_get("/", _home, name="home")
    app.router.add_get(f"/static/{STYLESHEET}", _stylesheet, name="stylesheet")
    app.router.add_get("/runs", runs.runs_page, name="runs")
    app.router.add_get("/runs/{run_id:[0-9]+}", rows.run_page, name="run")
    app.router.add_get("/rows/{judgment_id:[0-9]+}", rows.row_page, name="row")
    app.router.add_get("/compare", compare.compare_page, name="compare")
    app.router.add_get("/calibration", calibration.calibration_page, name="calibration")
    app.router.add_get("/trend", trend.trend_page, name="trend")
    app.router.add_get("/review", review.queue_page, name="review")
    app.router.add_post("/review/next", review.take_next, name="review_next")
    app.router.add_get("/review/cases/{case_id:[0-9]+}", review.case_page, name="review_case")
    app.router.add_post("/review/cases/{case_id:[0-9]+}/label", review.label_case_form, name="review_label")
    app.router.add_post("/review/cases/{case_id:[0-9]+}/skip", review.skip_case_form, name="review_skip")
    if sign_in is not None:
        sign_in.routes(app)
    return app


async def _home(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound(base_of(request) + "/runs")


async def _stylesheet(request: web.Request) -> web.StreamResponse:
    css = files("bot.view").joinpath("templates", STYLESHEET).read_text(encoding="utf-8")
    return web.Response(text=css, content_type="text/css", charset="utf-8")
