"""The MCP server: judgebot's tools for agents, with the official `mcp` SDK, over stdio (the person at this machine) or
streamable HTTP (an agent presenting MCP_TOKEN, or Slackbot calling for a Slack person with Slack's signature)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations

from bot.config import loopback
from bot.errors import JudgebotError
from bot.mcp.arguments import JudgebotServer
from bot.mcp.gate import PRESENTED, Gate, Once, Presented
from bot.mcp.people import SlackReach, slack_caller
from bot.mcp.tools import TERMINAL, Caller, Graded, RubricInfo, Tools

T = TypeVar("T")
READ_ONLY = ToolAnnotations(readOnlyHint=True)  # Slackbot asks the person before it calls a tool that is not
INSTRUCTIONS = ("judgebot grades an answer against a reference with a rubric (an LLM judge), and keeps every judgment "
                "in its history. `rubrics` lists the rubrics; `grade` judges one question, reference and answer (with "
                "the passages retrieved for it, for a rubric that reads them); "
                "`stats` and `calibration` read a Slack channel's figures (none: the caller's own judgments: for a Slack person "
                f"those of their conversation with judgebot, else the \"{TERMINAL}\"'s, made here and by agents).")


async def _answered(work: Awaitable[T]) -> T:
    """A tool's result, or a known problem as a sentence the agent reads (never a traceback)."""
    try:
        return await work
    except JudgebotError as err:
        raise ToolError(str(err)) from None


async def _off_loop(work: Any, *args: Any, **kwargs: Any) -> Any:
    """A tool that only reads the history, run off the event loop."""
    return await _answered(asyncio.to_thread(work, *args, **kwargs))


def build_server(tools: Tools, *, local: Caller, remote: Caller, http: bool = False,
                 slack: SlackReach | None = None) -> MCPServer:
    """The server of `tools`: over HTTP a caller is `remote` (it presented MCP_TOKEN) or the Slack person Slackbot calls
    for (a request `slack` found signed by Slack), as `Gate` found; over stdio it is `local`."""
    server: MCPServer = JudgebotServer("judgebot", instructions=INSTRUCTIONS)

    async def caller(ctx: Context) -> Caller:
        if not http:
            return local
        request = ctx.request_context.request
        presented = getattr(request, "scope", {}).get("state", {}).get(PRESENTED)
        if isinstance(presented, Presented) and presented.kind == "token":
            return remote
        if isinstance(presented, Presented) and presented.kind == "slack" and slack is not None:
            return await _answered(slack_caller(slack, presented.person))
        raise ToolError("this request proved neither MCP_TOKEN nor Slack's signature")  # Gate lets in no such request

    @server.tool()
    async def grade(question: str, reference: str, answer: str, rubric: str, ctx: Context, samples: int | None = None,
                    model: str | None = None, context: str | list[str] | None = None) -> Graded:
        """Grade one answer to a question against a reference answer with a rubric (see `rubrics`). `samples` asks
        the judge several times and says how far the answers agreed (`unsure` when they split); `model` names the
        model under test that gave the answer. `context` holds the passages a RAG assistant retrieved before
        answering, for a rubric that grades against them (`needs_context` in `rubrics`; required there, refused
        elsewhere): a list of strings in the order retrieved, or a string for one passage. `flags` warns of words
        aimed at the judge in any text, naming the passage. The judgment is kept in judgebot's history."""
        passages = ([context] if context.strip() else []) if isinstance(context, str) else context
        return await _answered(tools.grade(await caller(ctx), question=question, reference=reference, answer=answer,
                                           rubric=rubric, samples=samples, model=model, context=passages))

    @server.tool(annotations=READ_ONLY)
    async def rubrics() -> list[RubricInfo]:
        """The rubrics `grade` may use: name, title, version, what they grade, their fields and tags."""
        return await _off_loop(tools.rubric_list)

    @server.tool(annotations=READ_ONLY)
    async def stats(ctx: Context, channel: str | None = None, days: int = 30,
                    model: str | None = None) -> list[dict[str, Any]]:
        """Per model and rubric figures of a Slack channel id (or "terminal": the judgments made here and by agents)
        over the last `days` (0: all time): judged, scored, mean headline, pass rate, tags, errors, unsure rows."""
        return await _off_loop(tools.stats, await caller(ctx), channel=channel, days=days, model=model)

    @server.tool(annotations=READ_ONLY)
    async def calibration(rubric: str, ctx: Context, channel: str | None = None) -> dict[str, Any]:
        """How far the judge agrees with people's labels on `rubric` in a Slack channel id (or "terminal"): agreement
        on pass/fail with its interval, kappa, the confusion matrix of tags, per-criterion gaps, and what to doubt."""
        return await _off_loop(tools.calibration, await caller(ctx), rubric=rubric, channel=channel)

    return server



async def serve_http(server: MCPServer, *, host: str, port: int, token: str | None, slack: SlackReach | None,
                     once: Once | None = None, public_hosts: frozenset[str] = frozenset()) -> None:
    """Serve `server` over streamable HTTP at http://host:port/mcp, each request on its own (no session: any replica
    answers), behind `Gate` (each signed request taken once, as `once` remembers); on a loopback address only to the
    Host headers of this machine and `public_hosts` (a TLS proxy's names)."""
    import uvicorn

    security = None
    if loopback(host):
        local = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        security = TransportSecuritySettings(allowed_hosts=[*local, *sorted(public_hosts)],
                                             allowed_origins=[f"http://{name}" for name in local])
    app = server.streamable_http_app(stateless_http=True, transport_security=security, host=host)
    config = uvicorn.Config(Gate(app, token=token, slack=slack, once=once), host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()
