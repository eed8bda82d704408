"""Slack's side of Sign in with Slack (OpenID Connect): the authorize page that sends a person back with a code, the
code exchanged at openid.connect.token for an ID token signed RS256 with a key published at /openid/connect/keys (as
Slack's are, https://slack.com/openid/connect/keys), and openid.connect.userInfo."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.slack_server.core import Call, SlackCore

ISSUER = "https://slack.com"
KEY_ID = "judgebot-test-key"
_codes = itertools.count(1)
_key: rsa.RSAPrivateKey | None = None


def signing_key() -> rsa.RSAPrivateKey:
    """The stand-in's one RSA key (made once per process: a key takes a moment to make)."""
    global _key
    if _key is None:
        _key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return _key


class OpenIDMethods(SlackCore):
    """/openid/connect/authorize and /keys, openid.connect.token and openid.connect.userInfo."""

    def openid_routes(self, app: web.Application) -> None:
        app.router.add_get("/openid/connect/authorize", self._authorize)
        app.router.add_get("/openid/connect/keys", self._keys)

    def sign_in_as(self, user_id: str, team_id: str | None = None) -> None:
        """Who allows the app at the authorize page next (of `team_id`, default this workspace)."""
        self.signing_in = (user_id, team_id or self.team_id)

    async def _authorize(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != self.client_id or "openid" not in query.get("scope", "").split() \
                or query.get("response_type") != "code" or not redirect_uri:
            return web.Response(status=400, text="invalid_request")
        with self._lock:
            self.calls.append(Call(method="openid.authorize", params=dict(query), headers={}, at=time.monotonic()))
            who = self.signing_in
            if who is None:
                answer = {"error": "access_denied", "state": query.get("state", "")}
            else:
                code = f"oidc-{who[0]}-{next(_codes)}"
                self.oidc_codes[code] = {"user": who[0], "team": who[1], "nonce": query.get("nonce"),
                                         "redirect_uri": redirect_uri}
                answer = {"code": code, "state": query.get("state", "")}
        raise web.HTTPFound(f"{redirect_uri}?{urlencode(answer)}")

    async def _keys(self, request: web.Request) -> web.Response:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(signing_key().public_key()))
        return web.json_response({"keys": [{**public, "kid": KEY_ID, "alg": "RS256", "use": "sig"}]})

    def _openid_token(self, request: web.Request, params: dict) -> dict:
        client_id, client_secret = self._credentials(request, params)  # type: ignore[attr-defined]
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            return {"ok": False, "error": "invalid_client_id" if client_id != self.client_id else "bad_client_secret"}
        with self._lock:
            granted = self.oidc_codes.pop(str(params.get("code") or ""), None)  # a code works once
        if granted is None:
            return {"ok": False, "error": "invalid_code"}
        if params.get("redirect_uri") != granted["redirect_uri"]:
            return {"ok": False, "error": "bad_redirect_uri"}
        now = int(time.time())
        user, team = granted["user"], granted["team"]
        claims: dict[str, Any] = {
            "iss": ISSUER, "sub": user, "aud": self.client_id, "exp": now + 3600, "iat": now, "auth_time": now,
            "https://slack.com/user_id": user, "https://slack.com/team_id": team, "ok": True,
            "name": self.users.get(user, {}).get("real_name", user), "locale": "en-US",
        }
        if granted["nonce"] is not None:
            claims["nonce"] = granted["nonce"]
        claims.update(self.id_token_changes or {})
        token = jwt.encode(claims, signing_key(), algorithm="RS256", headers={"kid": KEY_ID})
        access = f"xoxp-{team}-{user}-{now}"
        with self._lock:
            self.person_tokens[access] = claims
        return {"ok": True, "access_token": access, "token_type": "Bearer", "id_token": token}

    def _openid_user_info(self, token: str) -> dict:
        with self._lock:
            claims = self.person_tokens.get(token)
        if claims is None:
            return {"ok": False, "error": "invalid_auth"}
        return {"ok": True, **{k: v for k, v in claims.items() if k not in ("aud", "exp", "iat", "auth_time", "nonce")}}
