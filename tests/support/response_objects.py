"""What OpenAI's Responses API takes and gives, as the local servers model it: a request read as the chat body the
scripted responders know, the GPT-6 rules in its parameters' names, and the response object of a reply."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from tests.support.openai_server import Reply, gpt6_reasoning, gpt6_refusal

WINDOWS = ("soonest", "2h", "8h")  # background_options.completion_window
# The share of the Standard price each completion window is billed at (OpenAI's background guide, read 2026-12-07).
WINDOW_SHARES = {"soonest": 1.0, "2h": 0.7, "8h": 0.6}


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request as the chat completions body a responder reads: its input as messages, its effort as
    reasoning_effort, its format as response_format, its token cap as max_completion_tokens."""
    view: dict[str, Any] = {"model": body.get("model"), "messages": body.get("input") or []}
    if isinstance(body.get("reasoning"), dict) and "effort" in body["reasoning"]:
        view["reasoning_effort"] = body["reasoning"]["effort"]
    for name in ("temperature", "top_p", "top_logprobs"):
        if name in body:
            view[name] = body[name]
    fmt = (body.get("text") or {}).get("format")
    if isinstance(fmt, dict):
        view["response_format"] = ({"type": "json_schema", "json_schema": {k: v for k, v in fmt.items() if k != "type"}}
                                   if fmt.get("type") == "json_schema" else {"type": fmt.get("type")})
    if "max_output_tokens" in body:
        view["max_completion_tokens"] = body["max_output_tokens"]
    return view


def refusal(body: dict[str, Any], *, gpt6: bool = True) -> Reply | None:
    """The 400 OpenAI answers a Responses request: chat-only parameters, a background request it cannot run as asked,
    or (with `gpt6`) what a GPT-6 model refuses (gpt6_refusal, in the Responses API's names)."""
    for name in ("messages", "response_format", "reasoning_effort", "max_completion_tokens"):
        if name in body:
            return _bad(f"Unsupported parameter: '{name}'. In the Responses API, this parameter has moved.", name)
    options = body.get("background_options") or {}
    window = options.get("completion_window")
    if window is not None and window not in WINDOWS:
        return _bad(f"Invalid value: '{window}'. Supported values are: {', '.join(WINDOWS)}.",
                    "background_options.completion_window")
    if window in ("2h", "8h"):
        if not body.get("background"):
            return _bad(f"The '{window}' completion window requires background: true.", "background")
        if body.get("service_tier") not in (None, "auto", "default") or body.get("stream"):
            return _bad(f"The '{window}' completion window requires Standard processing without streaming.",
                        "service_tier")
    if body.get("background") and body.get("store") is False:
        return _bad("Background responses must be stored: set store to true.", "store")
    found = gpt6_refusal(chat_view(body)) if gpt6 else None
    if found is not None and found.error is not None:
        error = dict(found.error)
        error["message"] = str(error["message"]).replace("'reasoning_effort'", "'reasoning.effort'")
        error["param"] = "reasoning.effort" if error["param"] == "reasoning_effort" else error["param"]
        return dataclasses.replace(found, error=error)
    return None


def _bad(message: str, param: str) -> Reply:
    return Reply(status=400, error={"message": message, "type": "invalid_request_error", "param": param,
                                    "code": "invalid_value"})


def with_reasoning(body: dict[str, Any], reply: Reply) -> Reply:
    """A reply with the reasoning tokens a GPT-6 model spends at the request's effort (unless scripted)."""
    if reply.status != 200 or reply.body is not None or reply.reasoning_tokens is not None:
        return reply
    return dataclasses.replace(reply, reasoning_tokens=gpt6_reasoning(chat_view(body)))


def response_object(response_id: str, body: dict[str, Any], reply: Reply | None, status: str) -> dict[str, Any]:
    """The response object of `reply` to `body` (None: not answered yet) with `status`."""
    reasoning = (reply.reasoning_tokens or 0) if reply is not None else 0
    done = reply is not None and status in ("completed", "incomplete")
    output = [{"type": "reasoning", "id": f"rs_{response_id}", "summary": []}] if done and reasoning else []
    if done and reply is not None:
        output.append({"type": "message", "id": f"msg_{response_id}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.content, "annotations": []}]})
    return {
        "id": response_id, "object": "response", "created_at": int(time.time()), "status": status,
        "model": body.get("model", "fake"), "output": output, "background": bool(body.get("background")),
        "service_tier": "default", "store": body.get("store", True), "metadata": body.get("metadata") or {},
        "background_options": body.get("background_options"),
        "error": None if status != "failed" else {"code": "server_error", "message": "The model failed to answer."},
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "usage": None if not done or reply is None else {
            "input_tokens": reply.tokens_in,
            "input_tokens_details": {"cached_tokens": reply.cached_tokens or 0},
            "output_tokens": reply.tokens_out + reasoning,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": reply.tokens_in + reply.tokens_out + reasoning,
        },
    }
