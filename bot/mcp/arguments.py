"""A tool called with arguments missing or of the wrong kind answers with a sentence naming them and what the tool
takes, rather than pydantic's text (with the caller's values and a link) that the MCP SDK passes on."""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError


def problems(err: ValidationError) -> list[str]:
    """Each argument that is wrong, and how, in words (never the value sent: it is the caller's data)."""
    said = []
    for problem in err.errors(include_url=False, include_input=False, include_context=False):
        name = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "missing":
            said.append(f"the argument `{name}` is missing")
        else:
            message = str(problem["msg"])
            said.append(f"the argument `{name}` is wrong ({message[:1].lower()}{message[1:]})")
    return said


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def takes(tool: str, schema: dict[str, Any]) -> str:
    """What a tool takes, from its input schema: `grade takes question, reference, answer and rubric, and optionally
    samples and model`."""
    names = list(schema.get("properties") or {})
    required = [name for name in names if name in set(schema.get("required") or [])]
    optional = [name for name in names if name not in required]
    if not required:
        return f"{tool} takes {_listed(optional)}, each optional" if optional else f"{tool} takes no arguments"
    return f"{tool} takes {_listed(required)}" + (f", and optionally {_listed(optional)}" if optional else "")


class JudgebotServer(MCPServer):
    """The MCP SDK's server, with argument problems said as a sentence."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if isinstance(err, UnexpectedToolError) or not isinstance(err.__cause__, ValidationError):
                raise
            schema = next((tool.input_schema for tool in await self.list_tools() if tool.name == name), {})
            said = "; ".join(problems(err.__cause__))
            raise ToolError(f"Error executing tool {name}: {said}. {takes(name, schema)}") from err.__cause__
