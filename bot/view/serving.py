"""Serving the view: on loopback unless people sign in (without sign-in every channel is shown to whoever reaches
it, so nothing is served beyond this machine), until the task serving it is cancelled."""

from __future__ import annotations

import asyncio

from aiohttp import web

from bot.config import loopback
from bot.errors import UsageError
from bot.view.security import LOOPBACK_HOSTS

REMOTE = ("--host {host} would show every channel's judgments to whoever reaches {where}: without Sign in with Slack "
          "configured, judgebot view serves only this machine. Keep the default --host 127.0.0.1 (open it from another "
          "machine through an SSH tunnel: ssh -L {port}:127.0.0.1:{port} HOST).")



def refuse_remote(host: str, port: int, *, sign_in: bool = False) -> None:
    """UsageError, saying why and what to do, when `host` reaches beyond this machine and nobody signs in."""
    if sign_in or loopback(host):
        return
    everywhere = host.strip().strip("[]") in ("0.0.0.0", "::", "")
    where = "every interface of this machine" if everywhere else f"{host}, an address other machines reach"
    raise UsageError(REMOTE.format(host=host, where=where, port=port))


def loopback_hosts(host: str) -> frozenset[str]:
    """The Host names a view served on loopback `host` answers to: the loopback names, and `host` itself."""
    name = host.strip().lower()
    return LOOPBACK_HOSTS | {f"[{name.strip('[]')}]" if ":" in name else name}


async def serve_view(app: web.Application, *, host: str, port: int, started: asyncio.Future[int] | None = None) -> None:
    """Serve `app` at http://host:port/ until cancelled; `started` is given the port once it listens (the one the
    system chose when `port` is 0)."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as err:
            raise UsageError(f"cannot listen on {host}:{port}: {err.strerror or err}; pick another --port") from None
        bound = runner.addresses[0][1] if runner.addresses else port
        if started is not None and not started.done():
            started.set_result(bound)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
