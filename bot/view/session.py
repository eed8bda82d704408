"""The view's signed session: a cookie (HttpOnly, SameSite=Strict) holding a random id and, once someone signs in,
who they are, signed with HMAC-SHA256 under a key derived from SECRETS_KEY (else a random key per process); and the
CSRF token every form that changes something carries, bound to that session."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.config import Settings

COOKIE = "judgebot_view"
MAX_AGE = 12 * 3600  # seconds a session lasts
CSRF_FIELD = "csrf_token"  # the form field that carries the token
PURPOSE = b"judgebot view session v1"  # the key is derived for this use alone: SECRETS_KEY also seals Slack tokens


class Session(BaseModel):
    """One browser's session: its random id, when it was issued, and who signed in with it (nobody yet: None)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    issued: int
    team_id: str | None = None
    user_id: str | None = None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Sessions:
    """Sessions issued, signed and read back under one key; the CSRF tokens of each."""

    def __init__(self, key: bytes, *, max_age: int = MAX_AGE) -> None:
        self._key = hmac.new(key, PURPOSE, hashlib.sha256).digest()
        self.max_age = max_age

    @classmethod
    def from_settings(cls, settings: Settings) -> Sessions:
        """Under the first key of SECRETS_KEY (sessions then outlive a restart and are shared by replicas), else
        under a random key of this process."""
        keys = settings.secrets_keys
        return cls(keys[0].encode("utf-8") if keys else secrets.token_bytes(32))

    def new(self, *, team_id: str | None = None, user_id: str | None = None) -> Session:
        """A new session with a random id, for nobody yet or for a person who just signed in."""
        return Session(id=secrets.token_urlsafe(18), issued=int(time.time()), team_id=team_id, user_id=user_id)

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def dump(self, session: Session) -> str:
        """The cookie's value: the session, then its signature."""
        payload = _b64(session.model_dump_json().encode("utf-8"))
        return f"{payload}.{self._sign(payload)}"

    def load(self, value: str | None) -> Session | None:
        """The session a cookie holds, when its signature is ours and it has not expired; else None."""
        if not value or value.count(".") != 1:
            return None
        payload, signature = value.split(".")
        if not hmac.compare_digest(signature, self._sign(payload)):
            return None
        try:
            session = Session.model_validate(json.loads(_unb64(payload)))
        except (ValueError, ValidationError):
            return None
        return session if 0 <= time.time() - session.issued < self.max_age else None

    def csrf_token(self, session: Session) -> str:
        """The token the forms of this session carry."""
        return _b64(hmac.new(self._key, f"csrf|{session.id}".encode("ascii"), hashlib.sha256).digest())

    def mac(self, purpose: str, value: str) -> str:
        """A tag of `value` for one `purpose` under the sessions' key (a sign-in's state and nonce)."""
        return _b64(hmac.new(self._key, f"{purpose}|{value}".encode(), hashlib.sha256).digest())

    def csrf_ok(self, session: Session | None, token: str | None) -> bool:
        """Whether `token` is this session's CSRF token."""
        return session is not None and bool(token) and hmac.compare_digest(str(token), self.csrf_token(session))
