"""`judgebot mcp`: judgebot's tools served to agents over MCP, over stdio or streamable HTTP, until stopped."""

from __future__ import annotations

import getpass

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK
from bot.cli.panels import NO_ENDPOINT
from bot.errors import UsageError


async def mcp(ctx: Context) -> int:
    """Serve the MCP tools: over stdio for the person at this machine (every channel), or over HTTP for an agent
    presenting MCP_TOKEN (the channels of MCP_CHANNELS)."""
    from bot.mcp.server import build_server  # the MCP SDK loads only to serve it
    from bot.mcp.tools import Caller, Tools

    settings, args = ctx.settings, ctx.args
    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    tools = Tools(settings, ctx.store, ctx.rubrics)
    try:
        local = Caller(name=f"mcp:{getpass.getuser()}")
    except (KeyError, OSError):  # no name for this uid, as in some containers
        local = Caller(name="mcp:local")
    remote = Caller(name="mcp:token", channels=settings.mcp_channel_ids)
    if not args.http:
        await build_server(tools, local=local, remote=remote).run_stdio_async()
        return EXIT_OK
    token = settings.mcp_token.get_secret_value().strip() if settings.mcp_token else None
    url = f"http://{args.host}:{args.port}/mcp"
    server = build_server(tools, local=local, remote=remote, url=url, token=token)
    ctx.console.print(f"judgebot serves MCP at {url} (bearer token: MCP_TOKEN). Ctrl-C stops it.", highlight=False)
    await server.run_streamable_http_async(host=args.host, port=args.port)
    return EXIT_OK
