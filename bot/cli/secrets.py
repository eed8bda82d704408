"""`judgebot secrets rotate`: the OAuth install's stored Slack tokens encrypted anew with the first key of SECRETS_KEY."""

from __future__ import annotations

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK
from bot.errors import UsageError

NO_KEY = ("SECRETS_KEY is not set: set it to a new key, a comma and the key the tokens are encrypted with now (or the "
          "new key alone, to encrypt tokens stored unencrypted)")


async def rotate(ctx: Context) -> int:
    """Encrypt every stored token with the first key of SECRETS_KEY (those stored unencrypted too), in one transaction;
    then the other keys may be dropped from SECRETS_KEY."""
    from bot.store import Sealer, reseal_tokens

    keys = ctx.settings.secrets_keys
    if not keys:
        raise UsageError(NO_KEY)
    written = reseal_tokens(ctx.store, Sealer(keys))
    if not written:
        ctx.console.print("The history database holds no Slack tokens: nothing to encrypt.")
        return EXIT_OK
    others = " Any other key may now be dropped from SECRETS_KEY." if len(keys) > 1 else ""
    ctx.console.print(f"{written} Slack tokens are encrypted with the first key of SECRETS_KEY.{others}")
    return EXIT_OK
