"""The Responses API beside Chat Completions: which one a judge endpoint is asked through (OpenAI's own: Responses;
any other: Chat Completions), a request's body in the Responses shape, and a response (live, polled in the
background, or a batch line's) read as the same Completion a chat reply gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.errors import JudgeCallError
from bot.llm.answers import Completion, NotACompletion, error_object, gist

Api = Literal["chat", "responses"]
ApiSetting = Literal["auto", "responses", "chat"]
OPENAI_HOST = "api.openai.com"
# The URL a batch line of each API names, and the endpoint its batch is created for.
BatchUrl = Literal["/v1/chat/completions", "/v1/responses"]
BATCH_URLS: dict[Api, BatchUrl] = {
    "chat": "/v1/chat/completions", "responses": "/v1/responses"}
# A background response's statuses: still to wait for, and ended.
WAITING = ("queued", "in_progress")
ENDED = ("completed", "incomplete", "failed", "cancelled")


def api_for(setting: ApiSetting, base_url: str | None) -> Api:
    """The API a judge at `base_url` (None: OpenAI's own) is asked through: as JUDGE_API says, or with "auto" the
    Responses API on OpenAI's own endpoint and Chat Completions on any other (vLLM, Ollama, llama.cpp, Azure's older
    deployments, routers), which seldom serve /v1/responses."""
    if setting != "auto":
        return setting
    host = urlsplit(base_url).hostname if base_url else OPENAI_HOST
    return "responses" if host == OPENAI_HOST else "chat"


def responses_body(chat: dict[str, Any]) -> dict[str, Any]:
    """The Responses request a chat completions body asks for: the messages as input items, the response format as
    `text.format`, the effort as `reasoning.effort`, the token cap as `max_output_tokens`; the temperature as is (the
    client sends one only where the model accepts it). The response is not stored unless it runs in the background."""
    body: dict[str, Any] = {"model": chat["model"], "input": chat["messages"], "store": False}
    if (given := chat.get("response_format")) is not None:
        if given["type"] == "json_schema":
            spec = given["json_schema"]
            body["text"] = {"format": {"type": "json_schema", "name": spec["name"], "schema": spec["schema"],
                                       "strict": spec.get("strict", True)}}
        else:
            body["text"] = {"format": {"type": given["type"]}}
    if "temperature" in chat:
        body["temperature"] = chat["temperature"]
    if "reasoning_effort" in chat:
        body["reasoning"] = {"effort": chat["reasoning_effort"]}
    if "max_completion_tokens" in chat:
        body["max_output_tokens"] = chat["max_completion_tokens"]
    return body


def in_background(body: dict[str, Any], window: str, tag: str) -> dict[str, Any]:
    """A Responses body sent in the background with the completion `window` ("2h", "8h"): stored (to be polled),
    Standard processing, and tagged with `tag` (the slot it asks for) in its metadata."""
    return {**body, "background": True, "store": True, "service_tier": "default",
            "background_options": {"completion_window": window}, "metadata": {"judgebot_slot": tag}}


@dataclass(frozen=True)
class Queued:
    """A background response created and not answered yet: its id and status. It used no tokens so far."""

    id: str
    status: str
    latency_ms: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class _InDetails(BaseModel):
    cached_tokens: int | None = None


class _OutDetails(BaseModel):
    reasoning_tokens: int | None = None


class _Usage(BaseModel):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_details: _InDetails | None = None
    output_tokens_details: _OutDetails | None = None


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None
    refusal: str | None = None


class _Item(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    content: list[_Part] | None = None


class _Incomplete(BaseModel):
    reason: str | None = None


class _Response(BaseModel):
    """The fields of a response judgebot reads; anything else is kept aside, not checked."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    status: str | None = None
    output: list[_Item] | None = None
    usage: _Usage | None = None
    incomplete_details: _Incomplete | None = None
    error: Any = None


def is_response(body: Any) -> bool:
    """Whether a parsed body is a Responses API response (rather than a chat completion)."""
    return isinstance(body, dict) and body.get("object") == "response"


def read_response(body: Any, latency_ms: int) -> Completion | Queued:
    """The Completion of a response that ended, or Queued for one still in the background; NotACompletion for a body
    that is not a response (an HTML page, an error object), JudgeCallError for a response that failed or was
    cancelled (saying why)."""
    not_one = "the judge endpoint answered 200 with a body that is not a response: {}"
    if not isinstance(body, dict):
        raise NotACompletion(not_one.format(gist(body)))
    if body.get("object") != "response" and body.get("error") is not None:
        raise error_object(body["error"])
    try:
        reply = _Response.model_validate(body)
    except ValidationError as err:
        field = str(err.errors()[0]["loc"][0])
        raise NotACompletion(not_one.format(gist(f"{field}: {body.get(field)!r}"))) from None
    if reply.status in WAITING:
        if not reply.id:
            raise NotACompletion(not_one.format(gist(body)))
        return Queued(reply.id, reply.status, latency_ms)
    if reply.status == "failed":
        error = reply.error if isinstance(reply.error, dict) else {}
        raise JudgeCallError(f"the judge's response {reply.id} failed: {gist(error.get('message') or reply.error)}")
    if reply.status == "cancelled":
        raise JudgeCallError(f"the judge's response {reply.id} was cancelled")
    if reply.output is None:
        raise NotACompletion(not_one.format(gist(body)))
    texts = [part.text or "" for item in reply.output if item.type == "message" for part in item.content or ()
             if part.type == "output_text"]
    refusals = [part.refusal or "" for item in reply.output if item.type == "message" for part in item.content or ()
                if part.type == "refusal"]
    usage = reply.usage or _Usage()
    cut = reply.status == "incomplete" and (reply.incomplete_details is None or
                                            reply.incomplete_details.reason == "max_output_tokens")
    return Completion(
        text="".join(texts),
        finish_reason="length" if cut else reply.status,
        tokens_in=usage.input_tokens or 0,
        tokens_out=usage.output_tokens or 0,
        latency_ms=latency_ms,
        refusal="".join(refusals) or None,
        cached_tokens=(usage.input_tokens_details.cached_tokens or 0) if usage.input_tokens_details else 0,
        reasoning_tokens=(usage.output_tokens_details.reasoning_tokens or 0) if usage.output_tokens_details else 0,
    )


def response_completion(body: Any, latency_ms: int = 0) -> Completion:
    """The Completion of a response that ended (a batch line's body, a background response polled to its end)."""
    read = read_response(body, latency_ms)
    if isinstance(read, Queued):
        raise NotACompletion(f"the judge's response {read.id} is still {read.status}")
    return read
