"""The OAuth install's Slack tokens sealed at rest with SECRETS_KEY: Fernet (cryptography's authenticated encryption),
several keys during a rotation (MultiFernet: the first seals, any opens), and the stored tokens sealed anew."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from bot.errors import SetupError
from bot.store.tables.oauth import BOTS, INSTALLATIONS

if TYPE_CHECKING:
    from bot.store.database import Store

# Every Fernet token starts so (its version byte, 0x80, and a timestamp's leading zero bytes, in base64); a Slack
# token never does (xoxb-, xoxp-, xoxe-): what a column holds is told apart without a marker of our own.
SEALED = "gAAAAA"
WIDTH = 200  # characters of slack_sdk's token columns: a sealed bot token (about 57 characters) takes 164
TOKEN_COLUMNS = {BOTS: ("bot_token", "bot_refresh_token"),
                 INSTALLATIONS: ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")}
MAKE_KEY = '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`'
BAD_KEY = ("SECRETS_KEY's key number {n} is not a Fernet key (44 characters of URL-safe base64): make one with "
           f"{MAKE_KEY}; while rotating, list the new key first, then the old, separated by a comma")
WRONG_KEY = ("a Slack token in the history database was encrypted with a key SECRETS_KEY does not hold: set SECRETS_KEY "
             "to the key it was encrypted with (while rotating: the new key, a comma, the old one)")
TOO_LONG = ("a Slack token of {length} characters is too long to keep encrypted in the history's {width}-character "
            "token columns: keep token rotation off (token_rotation_enabled: false in manifest.yml)")
NO_KEY = ("the Slack tokens in the history database are encrypted, and SECRETS_KEY is not set: set it to the key they "
          "were encrypted with")


def sealed(value: str | None) -> bool:
    """Whether a stored value is a sealed token (not a plain one, nor none)."""
    return bool(value) and str(value).startswith(SEALED)


class Sealer:
    """Seals and opens tokens with the keys of SECRETS_KEY, newest first; with none, tokens stay plain."""

    def __init__(self, keys: Sequence[str] = ()) -> None:
        fernets = []
        for n, key in enumerate(keys, start=1):
            try:
                fernets.append(Fernet(key.strip().encode()))
            except (ValueError, TypeError):
                raise SetupError(BAD_KEY.format(n=n)) from None
        self._keys = MultiFernet(fernets) if fernets else None

    @property
    def keyed(self) -> bool:
        """Whether tokens are sealed (SECRETS_KEY is set)."""
        return self._keys is not None

    def seal(self, value: str | None) -> str | None:
        """`value` sealed with the first key (as it is without a key, or when it is none or sealed already)."""
        if self._keys is None or not value or sealed(value):
            return value
        done = self._keys.encrypt(value.encode()).decode()
        if len(done) > WIDTH:
            raise SetupError(TOO_LONG.format(length=len(value), width=WIDTH))
        return done

    def open(self, value: str | None) -> str | None:
        """A stored value as the token it holds; SetupError in a sentence when no key of SECRETS_KEY opens it."""
        if not sealed(value):
            return value
        if self._keys is None:
            raise SetupError(NO_KEY)
        try:
            return self._keys.decrypt(str(value).encode()).decode()
        except InvalidToken:
            raise SetupError(WRONG_KEY) from None

    def reseal(self, value: str | None) -> str | None:
        """A stored value sealed with the first key (a plain one sealed, one sealed with an older key sealed anew)."""
        if self._keys is None or not value:
            return value
        if not sealed(value):
            return self.seal(value)
        try:
            return self._keys.rotate(value.encode()).decode()
        except InvalidToken:
            raise SetupError(WRONG_KEY) from None


def stored_tokens(store: Store) -> list[str]:
    """Every token the installation store holds, as stored (sealed or plain)."""
    found: list[str] = []
    with store.engine.connect() as conn:
        for table, columns in TOKEN_COLUMNS.items():
            for row in conn.execute(sa.select(*(table.c[name] for name in columns))):
                found.extend(value for value in row if value)
    return found


def reseal_tokens(store: Store, sealer: Sealer) -> int:
    """Seal every stored token with the first key of `sealer`, in one transaction (none is changed when one cannot be
    opened: SetupError); return how many tokens were written."""
    written = 0
    with store.engine.begin() as conn:
        for table, columns in TOKEN_COLUMNS.items():
            for row in conn.execute(sa.select(table.c.id, *(table.c[name] for name in columns))).all():
                now = {name: sealer.reseal(value) for name, value in zip(columns, row[1:]) if value}
                if now:
                    conn.execute(sa.update(table).where(table.c.id == row[0]).values(**now))
                    written += len(now)
    return written
