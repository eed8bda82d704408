"""`judgebot mcp`: judgebot's tools served to agents over MCP, over stdio or streamable HTTP (to an agent with
MCP_TOKEN, and to Slackbot with Slack's signature), until stopped."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK
from bot.cli.panels import NO_ENDPOINT
from bot.cli.views.terminal_text import shown
from bot.errors import SetupError, UsageError

if TYPE_CHECKING:
    from bot.slack.mcp_identity import SlackReach

MIN_TOKEN = 16  # characters of MCP_TOKEN: fewer can be guessed by trying
SHORT_TOKEN = ("MCP_TOKEN is {length} characters long: an agent's token needs at least {least}, random (make one with "
               "`python -c \"import secrets; print(secrets.token_urlsafe(32))\"`)")
REMOTE = ("--host {host} would serve MCP over plain HTTP (no TLS) on {where}: MCP_TOKEN and everything agents send "
          "would travel unencrypted. Keep the default 127.0.0.1 behind a TLS proxy, or pass --allow-remote when a TLS "
          "proxy in front is the only way in.")
REMOTE_WARNING = ("judgebot serves plain HTTP (no TLS) on {where} (--allow-remote): MCP_TOKEN and what agents send "
                  "travel unencrypted unless a TLS proxy is the only way in")


async def mcp(ctx: Context) -> int:
    """Serve the MCP tools: over stdio for the person at this machine (every channel), or over HTTP for an agent
    presenting MCP_TOKEN (the channels of MCP_CHANNELS) and, with SLACK_SIGNING_SECRET, Slackbot calling for a Slack
    person (the channels they are in)."""
    from bot.mcp.replays import SignedOnce
    from bot.mcp.server import build_server, serve_http  # the MCP SDK loads only to serve it
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
    if token and len(token) < MIN_TOKEN:
        raise SetupError(SHORT_TOKEN.format(length=len(token), least=MIN_TOKEN))
    where = _remote(args.host, args.allow_remote)
    slack = slack_reach(ctx)
    doors = [door for door, open_ in (("an agent presenting MCP_TOKEN", token),
                                      ("Slackbot, for the Slack person it asks for", slack)) if open_]
    if not doors:
        raise SetupError("set MCP_TOKEN to serve MCP over HTTP (an agent presents it as a bearer token), or "
                         "SLACK_SIGNING_SECRET with the Slack app's token so that Slackbot may call it")
    server = build_server(tools, local=local, remote=remote, http=True, slack=slack)
    ctx.console.print(f"judgebot serves MCP at http://{args.host}:{args.port}/mcp to {' and '.join(doors)}. Ctrl-C "
                      "stops it.", highlight=False, markup=False)
    if where is not None:
        ctx.console.print(f"[yellow]warning[/]: {REMOTE_WARNING.format(where=shown(where))}", highlight=False)
    await serve_http(server, host=args.host, port=args.port, token=token or None, slack=slack,
                     once=SignedOnce(ctx.store) if slack else None, public_hosts=settings.mcp_public_hosts)
    return EXIT_OK


def _remote(host: str, allowed: bool) -> str | None:
    """Where a host other machines reach serves (None for a loopback address); UsageError unless `allowed`."""
    from bot.config import loopback

    if loopback(host):
        return None
    everywhere = host.strip().strip("[]") in ("0.0.0.0", "::", "")
    where = "every interface" if everywhere else f"{host}, an address other machines reach"
    if not allowed:
        raise UsageError(REMOTE.format(host=host, where=where))
    return where


def slack_reach(ctx: Context) -> SlackReach | None:
    """Slack's side of Slackbot's calls when SLACK_SIGNING_SECRET is set: the bot token, or the OAuth install's."""
    from bot.slack.mcp_identity import SlackReach
    from bot.slack.oauth import installation_store, sealing_warnings
    from bot.store import Sealer

    settings = ctx.settings
    secret = settings.slack_signing_secret.get_secret_value().strip() if settings.slack_signing_secret else ""
    if not secret:
        return None
    install = settings.oauth_install()
    if install is not None:
        sealer = Sealer(settings.secrets_keys)
        sealing_warnings(ctx.store, sealer)  # a key that opens no stored token is said now, not at each request
        installations = installation_store(install[0], ctx.store, sealer)
        return SlackReach(secret, settings.slack_api_url, installations=installations)
    try:
        bot_token = settings.bot_token()
    except SetupError as err:
        raise UsageError(f"SLACK_SIGNING_SECRET is set, so Slackbot may call this server, and judgebot asks Slack "
                         f"which channels the person is in with its bot token (or the OAuth install's): {err}") from None
    return SlackReach(secret, settings.slack_api_url, bot_token=bot_token)
