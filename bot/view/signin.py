"""Sign in with Slack (OpenID Connect) for the view: a person signs in at Slack, comes back with a code exchanged for
an ID token whose signature, audience, issuer, nonce and workspace are checked, and sees the channels they are in
(asked of Slack with judgebot's bot token in their workspace, kept a few minutes per session)."""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlencode, urljoin

import aiohttp
import jwt
from aiohttp import web
from pydantic import BaseModel, ConfigDict

from bot.errors import UsageError
from bot.view.context import base_of
from bot.view.security import SESSION, SESSIONS, session_of, set_session
from bot.view.templates import render
from bot.view.viewer import Viewer

log = logging.getLogger(__name__)

ATTEMPT_COOKIE = "judgebot_view_signin"  # SameSite=Lax: Slack's redirect back is a cross-site navigation
ATTEMPT_SECONDS = 600  # how long a sign-in started at /signin may take to come back
KEEP_SECONDS = 300.0  # how long the channels a signed-in person is in are believed
ISSUER = "https://slack.com"
TEAM_CLAIM, USER_CLAIM, ORG_CLAIM = ("https://slack.com/team_id", "https://slack.com/user_id",
                                     "https://slack.com/enterprise_id")
SCOPES = "openid profile"
AGAIN = "This sign-in has expired or did not start on this page: sign in again."


class SlackPerson(BaseModel):
    """A person Slack signed in: their user id, their workspace, and its Enterprise organisation if any."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    team_id: str | None
    enterprise_id: str | None = None


class Membership(Protocol):
    """What Slack says of a person through judgebot's bot token in their workspace (bot.slack.mcp_identity.SlackReach,
    the rule the MCP server keeps)."""

    async def reach(self, person: SlackPerson) -> tuple[str, frozenset[str]]:
        """The person's direct conversation with judgebot, and the conversations they are in; UsageError when
        judgebot is not installed in their workspace or Slack does not answer."""
        ...


@dataclass
class SignIn:
    """Sign in with Slack for a view published at `view_url`, with the Slack app's client id and secret."""

    client_id: str
    client_secret: str = field(repr=False)
    view_url: str  # the public base URL of the view: https://judgebot.example.com/view
    api_url: str  # Slack's Web API: https://slack.com/api/ (its site serves the authorize page and the keys)
    membership: Membership
    keep_seconds: float = KEEP_SECONDS
    _known: dict[str, tuple[float, Viewer]] = field(default_factory=dict, init=False)
    _keys: jwt.PyJWKClient | None = field(default=None, init=False)

    @property
    def redirect_uri(self) -> str:
        """Where Slack sends a person back to (listed among the app's Redirect URLs)."""
        return self.view_url.rstrip("/") + "/signin/callback"

    @property
    def authorize_url(self) -> str:
        """Slack's authorize page of Sign in with Slack."""
        return urljoin(self.api_url, "../openid/connect/authorize")

    @property
    def keys_url(self) -> str:
        """Slack's keys that sign ID tokens (its JWKS)."""
        return urljoin(self.api_url, "../openid/connect/keys")

    def routes(self, app: web.Application) -> None:
        """/signin, /signin/callback and POST /signout on the view's `app`."""
        app.router.add_get("/signin", self.start, name="signin")
        app.router.add_get("/signin/callback", self.callback, name="signin_callback")
        app.router.add_post("/signout", self.sign_out, name="signout")

    async def viewer(self, request: web.Request) -> Viewer | None:
        """The signed-in person of the request's session and the channels they are in; None when nobody signed in."""
        session = session_of(request)
        if session.user_id is None:
            return None
        now = time.monotonic()
        known = self._known.get(session.id)
        if known is not None and known[0] > now:
            return known[1]
        return await self._remember(session.id, SlackPerson(user_id=session.user_id, team_id=session.team_id))

    async def _remember(self, session_id: str, person: SlackPerson) -> Viewer:
        try:
            home, channels = await self.membership.reach(person)
        except UsageError as err:
            raise web.HTTPForbidden(text=str(err)) from None
        viewer = Viewer(user_id=person.user_id, team_id=person.team_id, name=person.user_id,
                        channels=channels | {home})
        now = time.monotonic()
        self._known = {key: entry for key, entry in self._known.items() if entry[0] > now}
        self._known[session_id] = (now + self.keep_seconds, viewer)
        return viewer

    def _tags(self, request: web.Request, attempt: str) -> tuple[str, str]:
        """The state and the nonce of a sign-in attempt, tags of it under the sessions' key."""
        sessions = request.app[SESSIONS]
        return sessions.mac("signin-state", attempt), sessions.mac("signin-nonce", attempt)

    async def start(self, request: web.Request) -> web.StreamResponse:
        """GET /signin: to Slack's authorize page, with a state and a nonce bound to this browser's attempt."""
        attempt = f"{int(time.time())}.{secrets.token_urlsafe(18)}"
        state, nonce = self._tags(request, attempt)
        query = urlencode({"response_type": "code", "scope": SCOPES, "client_id": self.client_id, "state": state,
                           "nonce": nonce, "redirect_uri": self.redirect_uri})
        answer = web.HTTPFound(f"{self.authorize_url}?{query}")
        answer.set_cookie(ATTEMPT_COOKIE, attempt, max_age=ATTEMPT_SECONDS, path=base_of(request) + "/signin",
                          httponly=True, samesite="Lax", secure=self.view_url.startswith("https:"))
        raise answer

    def _attempt(self, request: web.Request) -> str:
        """The nonce of the attempt this callback ends, when its state is the one /signin gave; 400 otherwise."""
        attempt = request.cookies.get(ATTEMPT_COOKIE, "")
        issued, _, _ = attempt.partition(".")
        state, nonce = self._tags(request, attempt)
        if (not issued.isdigit() or not 0 <= time.time() - int(issued) < ATTEMPT_SECONDS
                or not hmac.compare_digest(request.query.get("state", ""), state)):
            raise web.HTTPBadRequest(text=AGAIN)
        return nonce

    async def callback(self, request: web.Request) -> web.StreamResponse:
        """GET /signin/callback: the code exchanged for an ID token, checked; the person's session issued."""
        if "error" in request.query:
            return render(request, "message.html", status=403, title="Not signed in", again=True, then=None,
                          message=f"Slack did not sign you in ({request.query['error'][:100]}).")
        nonce = self._attempt(request)
        code = request.query.get("code", "")
        if not code:
            raise web.HTTPBadRequest(text=AGAIN)
        person = await self._person(code, nonce)
        session = request.app[SESSIONS].new(team_id=person.team_id, user_id=person.user_id)
        await self._remember(session.id, person)  # not in any workspace judgebot is installed in: refused here
        request[SESSION] = session
        page = render(request, "message.html", title="Signed in", then="/runs", again=False,
                      message="You are signed in with Slack: this view shows the judgments of the channels you are in.")
        set_session(request, page, session)
        page.del_cookie(ATTEMPT_COOKIE, path=base_of(request) + "/signin")
        return page

    async def _person(self, code: str, nonce: str) -> SlackPerson:
        """Who Slack signed in: the code exchanged at openid.connect.token, the ID token's signature (Slack's keys),
        audience, issuer, expiry, nonce and workspace checked; 403 with a sentence when any is wrong."""
        from slack_sdk.errors import SlackApiError, SlackClientError
        from slack_sdk.web.async_client import AsyncWebClient

        client = AsyncWebClient(base_url=self.api_url)
        try:
            answer = await client.openid_connect_token(client_id=self.client_id, client_secret=self.client_secret,
                                                       code=code, redirect_uri=self.redirect_uri)
            token = str(answer.get("id_token") or "")
            claims = await self._claims(token)
        except SlackApiError as err:
            log.info("openid.connect.token answered %s", err.response.get("error"))
            raise web.HTTPForbidden(text=f"Slack refused this sign-in ({err.response.get('error', 'unknown error')}): "
                                         "sign in again.") from None
        except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError, jwt.PyJWKClientConnectionError):
            log.info("Slack could not be reached to finish a sign-in", exc_info=True)
            raise web.HTTPServiceUnavailable(text="judgebot could not reach Slack to finish signing you in: try again "
                                                  "in a minute.") from None
        except jwt.PyJWTError as err:  # a bad signature, audience, issuer, expiry; a key Slack does not list
            log.warning("refused a sign-in whose ID token is not valid: %s", err)
            raise web.HTTPForbidden(text="Slack's answer to this sign-in could not be verified: sign in again.") from None
        if not hmac.compare_digest(str(claims.get("nonce") or ""), nonce):
            log.warning("refused a sign-in whose ID token carries another nonce")
            raise web.HTTPForbidden(text=AGAIN)
        team = claims.get(TEAM_CLAIM)
        user = claims.get(USER_CLAIM) or claims.get("sub")
        if not isinstance(team, str) or not team or not isinstance(user, str) or not user:
            raise web.HTTPForbidden(text="Slack did not say who you are and from which workspace: sign in again.")
        org = claims.get(ORG_CLAIM)
        return SlackPerson(user_id=user, team_id=team, enterprise_id=org if isinstance(org, str) and org else None)

    async def _claims(self, token: str) -> dict[str, Any]:
        """The claims of an ID token signed with one of Slack's keys (RS256), for this app, not expired."""
        if self._keys is None:
            self._keys = jwt.PyJWKClient(self.keys_url, cache_keys=True, lifespan=3600, timeout=10)
        key = await asyncio.to_thread(self._keys.get_signing_key_from_jwt, token)
        claims: dict[str, Any] = jwt.decode(token, key.key, algorithms=["RS256"], audience=self.client_id,
                                            issuer=ISSUER, leeway=60,
                                            options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]})
        return claims

    async def sign_out(self, request: web.Request) -> web.StreamResponse:
        """POST /signout (with the session's CSRF token): the session forgotten, a new one without anybody."""
        self._known.pop(session_of(request).id, None)
        session = request.app[SESSIONS].new()
        request[SESSION] = session
        page = render(request, "message.html", title="Signed out", then=None, again=True,
                      message="You are signed out of judgebot's view.")
        set_session(request, page, session)
        return page
