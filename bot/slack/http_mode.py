"""HTTP mode's front door: Slack's signature checked first on the raw bytes, then the bolt app (whose first middleware,
bot.slack.deliveries, drops a request or event taken already, by this process or another); and the install pages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)

REFUSED = {"error": "invalid request"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def signed(verifier: SignatureVerifier, body: bytes, timestamp: str, signature: str) -> bool:
    """Whether Slack signed `body`: anything malformed (a timestamp that is no number, bytes that are not UTF-8)
    is simply not signed."""
    try:
        return verifier.is_valid(body, timestamp, signature)
    except (ValueError, TypeError):  # UnicodeDecodeError included; TypeError: a signature that is not ASCII
        return False


def events_handler(app: AsyncApp, signing_secret: str) -> Handler:
    """The POST handler of the events URL: refuse what Slack did not sign (401), let bolt answer the rest."""
    verifier = SignatureVerifier(signing_secret)

    async def events(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        if not signed(verifier, body, timestamp, signature):
            log.info("refused a request to %s without a valid Slack signature", request.path)
            return web.json_response(REFUSED, status=401)
        try:
            bolt_request = AsyncBoltRequest(body=body.decode(), query=request.query_string,
                                            headers=dict(request.headers))
        except (ValueError, AttributeError, TypeError):  # not UTF-8, not JSON, or JSON that is not an object
            log.warning("refused a signed request whose body is not in Slack's format")
            return web.json_response(REFUSED, status=400)
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    return events


def install_handler(app: AsyncApp) -> Handler:
    """The GET handler of the install pages (many workspaces): bolt's OAuth flow starts an install (a state issued,
    set as the installer's cookie, and the link to Slack's authorize page) or finishes one (the state checked against
    the store and the cookie, the code exchanged for the workspace's bot token, the installation saved)."""
    flow = app.oauth_flow
    assert flow is not None, "the install pages exist only with the OAuth install"

    async def install(request: web.Request) -> web.StreamResponse:
        bolt_request = AsyncBoltRequest(body="", query=request.query_string, headers=dict(request.headers))
        if request.path == flow.install_path:
            return await to_aiohttp_response(await flow.handle_installation(bolt_request))
        return await to_aiohttp_response(await flow.handle_callback(bolt_request))

    return install
