"""functions.*: how a workflow step of the app ends, completed with its outputs or failed with a sentence."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from tests.support.slack_server.core import SlackCore

FUNCTION_TOKEN_PREFIX = "xwfp-"  # Slack's function execution tokens (an event's bot_access_token) start so
_executions = itertools.count(1)


@dataclass
class StepEnd:
    """How one function execution ended: its outputs, or its error, and the token it was ended with."""

    execution_id: str
    outputs: dict[str, Any] | None = None
    error: str | None = None
    token: str | None = None


def _outputs(params: dict) -> dict[str, Any] | None:
    """The outputs of a functions.completeSuccess call (slack_sdk sends them as JSON text in a form field)."""
    outputs = params.get("outputs")
    if isinstance(outputs, str):
        try:
            outputs = json.loads(outputs)
        except ValueError:
            return None
    return outputs if isinstance(outputs, dict) else None


class FunctionMethods(SlackCore):
    """functions.completeSuccess and functions.completeError, recorded per execution; and the executions to send."""

    def new_execution(self) -> tuple[str, str]:
        """A new function execution: (function_execution_id, its bot_access_token)."""
        n = next(_executions)
        return f"Fx{n:010d}", f"{FUNCTION_TOKEN_PREFIX}{self.team_id}-{n:06d}"

    def step_ends(self, execution_id: str | None = None) -> list[StepEnd]:
        """How executions ended (each call to functions.complete*), oldest first; of one execution when given."""
        ends = []
        for call in self.calls_to("functions.completeSuccess") + self.calls_to("functions.completeError"):
            auth = call.headers.get("Authorization", "")
            token = auth[7:] if auth.lower().startswith("bearer ") else call.params.get("token")
            outputs = _outputs(call.params) if call.method.endswith("Success") else None
            ends.append((call.at, StepEnd(str(call.params.get("function_execution_id")), outputs=outputs,
                                          error=call.params.get("error"), token=token)))
        return [end for _, end in sorted(ends, key=lambda pair: pair[0])
                if execution_id is None or end.execution_id == execution_id]

    def _complete_success(self, params: dict) -> dict:
        if not params.get("function_execution_id"):
            return {"ok": False, "error": "invalid_arguments"}
        if _outputs(params) is None:
            return {"ok": False, "error": "invalid_arguments"}
        return self._end(str(params["function_execution_id"]))

    def _complete_error(self, params: dict) -> dict:
        if not params.get("function_execution_id") or not str(params.get("error") or "").strip():
            return {"ok": False, "error": "invalid_arguments"}
        return self._end(str(params["function_execution_id"]))

    def _end(self, execution_id: str) -> dict:
        """As Slack: an execution ends once; ending it again is refused."""
        with self._lock:
            if execution_id in self.ended_executions:
                return {"ok": False, "error": "execution_not_in_running_state"}
            self.ended_executions.add(execution_id)
        return {"ok": True}
