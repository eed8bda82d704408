"""`judgebot view`: the history in a browser, served on this machine (127.0.0.1) until stopped."""

from __future__ import annotations

from typing import Any

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK
from bot.errors import UsageError


async def view(ctx: Context) -> int:
    """Serve the web view at http://HOST:PORT/ for the person at this machine (every channel, labels under their
    login name), refusing an address other machines reach while nobody signs in."""
    from bot.view import make_view_app, refuse_remote, serve_view
    from bot.view.serving import loopback_hosts

    args = ctx.args
    if not 0 <= args.port < 65536:
        raise UsageError("--port must be from 0 (any free port) to 65535")
    refuse_remote(args.host, args.port)
    app = make_view_app(ctx.settings, ctx.store, rubrics=ctx.rubrics, allowed_hosts=loopback_hosts(args.host))
    settled()
    import asyncio

    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    serving: asyncio.Future[None] = asyncio.ensure_future(serve_view(app, host=args.host, port=args.port,
                                                                     started=started))
    either: set[asyncio.Future[Any]] = {serving, started}
    done, _ = await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if serving in done:
        serving.result()  # a port already taken: its sentence
        return EXIT_OK
    host = f"[{args.host}]" if ":" in args.host else args.host
    ctx.console.print(f"judgebot view: http://{host}:{started.result()}/ (this machine only). Ctrl-C stops it.",
                      highlight=False, markup=False)
    await serving
    return EXIT_OK
