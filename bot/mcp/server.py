"""The MCP server: judgebot's tools for agents, with the official `mcp` SDK, over stdio (the person at this machine) or
streamable HTTP (an agent presenting MCP_TOKEN as a bearer token, reading only the channels of MCP_CHANNELS)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ToolError

from bot.errors import JudgebotError, SetupError
from bot.mcp.tools import TERMINAL, Caller, Graded, RubricInfo, Tools

T = TypeVar("T")
INSTRUCTIONS = ("judgebot grades an answer against a reference with a rubric (an LLM judge), and keeps every judgment "
                "in its history. `rubrics` lists the rubrics; `grade` judges one question, reference and answer; "
                f"`stats` and `calibration` read a channel's figures (\"{TERMINAL}\" or none: the judgments made here).")


class BearerToken:
    """Lets in a request whose bearer token is MCP_TOKEN (compared in constant time); nothing else."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if secrets.compare_digest(token.encode(), self._token):
            return AccessToken(token="MCP_TOKEN", client_id="mcp-token", scopes=[])  # the secret is not kept
        return None


async def _answered(work: Awaitable[T]) -> T:
    """A tool's result, or a known problem as a sentence the agent reads (never a traceback)."""
    try:
        return await work
    except JudgebotError as err:
        raise ToolError(str(err)) from None


async def _off_loop(work: Any, *args: Any, **kwargs: Any) -> Any:
    """A tool that only reads the history, run off the event loop."""
    return await _answered(asyncio.to_thread(work, *args, **kwargs))


def build_server(tools: Tools, *, local: Caller, remote: Caller, url: str | None = None,
                 token: str | None = None) -> MCPServer:
    """The server of `tools`: a caller over HTTP is `remote` (with `token` required at `url`), else `local`."""
    auth = verifier = None
    if url is not None:
        if not token:
            raise SetupError("set MCP_TOKEN to serve MCP over HTTP: an agent presents it as a bearer token")
        verifier = BearerToken(token)
        auth = AuthSettings(issuer_url=url, resource_server_url=url)
    server: MCPServer = MCPServer("judgebot", instructions=INSTRUCTIONS, token_verifier=verifier, auth=auth)

    def caller() -> Caller:
        # Over HTTP every caller is `remote` (the SDK lets in only a verified token); stdio is the person here.
        return remote if url is not None else local

    @server.tool()
    async def grade(question: str, reference: str, answer: str, rubric: str, samples: int | None = None,
                    model: str | None = None) -> Graded:
        """Grade one answer to a question against a reference answer with a rubric (see `rubrics`). `samples` asks
        the judge several times and says how far the answers agreed (`unsure` when they split); `model` names the
        model under test that gave the answer. The judgment is kept in judgebot's history."""
        return await _answered(tools.grade(caller(), question=question, reference=reference, answer=answer,
                                           rubric=rubric, samples=samples, model=model))

    @server.tool()
    async def rubrics() -> list[RubricInfo]:
        """The rubrics `grade` may use: name, title, version, what they grade, their fields and tags."""
        return await _off_loop(tools.rubric_list)

    @server.tool()
    async def stats(channel: str | None = None, days: int = 30, model: str | None = None) -> list[dict[str, Any]]:
        """Per model and rubric figures of a Slack channel id (or "terminal": the judgments made here and by agents)
        over the last `days` (0: all time): judged, scored, mean headline, pass rate, tags, errors, unsure rows."""
        return await _off_loop(tools.stats, caller(), channel=channel, days=days, model=model)

    @server.tool()
    async def calibration(rubric: str, channel: str | None = None) -> dict[str, Any]:
        """How far the judge agrees with people's labels on `rubric` in a Slack channel id (or "terminal"): agreement
        on pass/fail with its interval, kappa, the confusion matrix of tags, per-criterion gaps, and what to doubt."""
        return await _off_loop(tools.calibration, caller(), rubric=rubric, channel=channel)

    return server
