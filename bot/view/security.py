"""What every response of the view carries and every request must be: a strict Content-Security-Policy and its
companions, a Host that is the view's own (a page of another site that rebinds its name to 127.0.0.1 reads
nothing), a signed session, and on every POST that session's CSRF token."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.view.session import COOKIE, CSRF_FIELD, Session, Sessions

HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SESSIONS: web.AppKey[Sessions] = web.AppKey("sessions", Sessions)
HOSTS: web.AppKey[frozenset[str] | None] = web.AppKey("hosts", frozenset)
SESSION: web.RequestKey[Session] = web.RequestKey("session", Session)
FORM: web.RequestKey[Any] = web.RequestKey("form")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def secure_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every response, a page, a stylesheet or an error, with the policy headers (on_response_prepare)."""
    for name, value in HEADERS.items():
        response.headers[name] = value


def host_name(host: str) -> str:
    """A Host header without its port: 127.0.0.1, localhost, [::1]."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[:host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@web.middleware
async def own_host(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request whose Host is not one of the view's (HOSTS; None: any) is refused with 421."""
    hosts = request.app[HOSTS]
    if hosts is not None and host_name(request.host or "") not in hosts:
        raise web.HTTPMisdirectedRequest(text="This judgebot view answers only at its own address.")
    return await handler(request)


PROXIED = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP")  # a proxy passes on another's request
LOCAL_ONLY = ("This judgebot view answers only on the machine it runs on: without Sign in with Slack configured it "
              "would show every channel's judgments to anyone. Open it on that machine (or through an SSH tunnel), or "
              "set up Sign in with Slack (VIEW_URL with the OAuth install; docs/view.md).")


def from_this_machine(request: web.Request) -> bool:
    """Whether the request comes straight from this machine: a loopback peer that no proxy passed it on for."""
    try:
        peer = ipaddress.ip_address((request.remote or "").split("%")[0])
    except ValueError:  # no address (a Unix socket is not how the view is served)
        return False
    return peer.is_loopback and not any(name in request.headers for name in PROXIED)


@web.middleware
async def loopback_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request from another machine (or passed on by a proxy) is refused with 403 and a sentence."""
    if not from_this_machine(request):
        raise web.HTTPForbidden(text=LOCAL_ONLY)
    return await handler(request)


def session_of(request: web.Request) -> Session:
    """The request's session (set by `signed_session`)."""
    return request[SESSION]


@web.middleware
async def signed_session(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The request's signed session, a new one when its cookie holds none (set on the response: HttpOnly,
    SameSite=Strict, Secure over HTTPS); a POST without that session's CSRF token is refused with 403."""
    sessions = request.app[SESSIONS]
    session = sessions.load(request.cookies.get(COOKIE))
    fresh = session is None
    request[SESSION] = session or sessions.new()
    if request.method == "POST" and request.match_info.http_exception is None:  # else its 404 or 405
        form = await request.post()
        if fresh or not sessions.csrf_ok(session, str(form.get(CSRF_FIELD) or "")):
            raise web.HTTPForbidden(text="This form has expired or did not come from this page: open the page again "
                                         "and send it from there.")
        request[FORM] = form
    try:
        response = await handler(request)
    except web.HTTPException as answer:  # a redirect or an error page gets the session too
        if fresh:
            set_session(request, answer, request[SESSION])
        raise
    if fresh and not response.prepared:
        set_session(request, response, request[SESSION])
    return response


def set_session(request: web.Request, response: web.StreamResponse, session: Session) -> None:
    """Give the browser `session` (a sign-in replaces the session it signed in from)."""
    response.set_cookie(COOKIE, request.app[SESSIONS].dump(session), max_age=request.app[SESSIONS].max_age, path="/",
                        httponly=True, samesite="Strict", secure=request.secure)


def csrf_token(request: web.Request) -> str:
    """The CSRF token of the request's session, for its page's forms."""
    return request.app[SESSIONS].csrf_token(session_of(request))
