"""What a judge endpoint answered, read: the completion in a 200 (through a model of the few fields judgebot uses),
and the provider's own sentence in a refusal (its billing words, the schema keyword it names)."""

from __future__ import annotations

import http
import json
import re
from dataclasses import dataclass
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, ValidationError

from bot.errors import JudgeCallError
from bot.llm.endpoints import RANGE_KEYWORDS

RESUME = "resume the run"  # what every RunStopped that a resume cures advises (a single judgment rewrites it)
BILLING_CODES = frozenset({"insufficient_quota", "insufficient_credits", "billing_hard_limit_reached",
                           "billing_not_active"})
BILLING_WORDS = ("credit balance is too low", "insufficient credits", "insufficient balance", "more credits")
HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Completion:
    """The text of one judge reply and what it cost."""

    text: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    latency_ms: int = 0
    refusal: str | None = None
    cached_tokens: int = 0  # of tokens_in, those the provider read from its prompt cache
    reasoning_tokens: int = 0  # of tokens_out, those the model spent reasoning (billed as output)


class NotACompletion(Exception):
    """A 200 whose body is not a chat completion (an HTML page, plain text, an error object); retried like a 5xx.

    `outage` marks a provider's error object: the endpoint is failing, as with a 503; `detail` is its message.
    """

    def __init__(self, message: str, *, outage: bool = False, detail: str = "") -> None:
        super().__init__(message)
        self.outage = outage
        self.detail = detail


def rejects_format(err: openai.APIStatusError) -> bool:
    text = f"{message_of(err)} {getattr(err, 'param', '') or ''}".lower()
    return any(word in text for word in ("response_format", "text.format", "json_schema", "json_object", "structured",
                                               "schema"))


def names_range_keyword(err: openai.APIStatusError) -> bool:
    """Whether a refused schema was refused for a keyword the portable schema leaves out ("'minimum' is not
    permitted")."""
    text = raw_message(err)
    return any(f"{quote}{keyword}{quote}" in text for keyword in RANGE_KEYWORDS for quote in ("'", '"', "`"))


def billing_refusal(err: openai.APIStatusError) -> str | None:
    """The stop reason when the account has no credit or quota left (OpenAI's insufficient_quota 429, OpenRouter's 402,
    Anthropic's "credit balance is too low" 400), else None."""
    # The SDK lifts `code` and `type` out of the error body; OpenAI sets both to insufficient_quota.
    codes = {str(getattr(err, "code", None)), str(getattr(err, "type", None))}
    text = raw_message(err).lower()
    if err.status_code >= 500 or (err.status_code != 402 and not codes & BILLING_CODES
                                  and not any(words in text for words in BILLING_WORDS)):
        return None
    what = "quota" if "insufficient_quota" in codes else "credit"
    label = "insufficient_quota" if what == "quota" else str(err.status_code)
    return (f"the judge account has no {what} left ({label}): {message_of(err)}; add credit or raise the "
            f"limit, then {RESUME}")


def raw_message(err: openai.APIStatusError) -> str:
    """The provider's own message as it came (for matching; `_message` is the one to show); of an HTML page (a
    proxy's 503), its title."""
    if isinstance(err.body, str) and err.body.strip():
        title = HTML_TITLE.search(err.body)
        return title.group(1) if title else err.body
    body = err.body if isinstance(err.body, dict) else {}
    inner = body.get("error", body)
    message = inner.get("message") if isinstance(inner, dict) else None
    return str(message or err.message)


def message_of(err: openai.APIStatusError) -> str:
    """The provider's own message, as one printable line of at most 300 characters (it is shown and saved), without
    the period that closes it: judgebot's sentences put their own after it ("... see https://x.example/docs" and
    then ". 5 rows are still pending"), never a second one."""
    return one_line(raw_message(err), 300).rstrip(". ")


def status_text(status: int) -> str:
    """An HTTP status with its phrase: "503 Service Unavailable", "529 Overloaded"."""
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Overloaded" if status == 529 else str(status)


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace runs as single spaces and no control characters (NULs included), cut to `limit`."""
    line = "".join(char for char in " ".join(text[: limit * 4].split()) if char.isprintable())
    return line[:limit] + ("…" if len(line) > limit else "")


def gist(body: Any, limit: int = 120) -> str:
    """A body as one short printable line, quoted: enough to recognise it in a message, never a page of it."""
    return repr(one_line(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str), limit))


class _Details(BaseModel):
    cached_tokens: int | None = None


class _OutDetails(BaseModel):
    reasoning_tokens: int | None = None


class _Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _Details | None = None
    completion_tokens_details: _OutDetails | None = None


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="allow")  # an `error` here: the provider behind a router failed mid-reply

    message: _Message | None = None
    finish_reason: str | None = None


class _Reply(BaseModel):
    """The fields of a chat completion judgebot reads; anything else a provider adds is kept aside, not checked."""

    model_config = ConfigDict(extra="allow")

    choices: list[_Choice] | None = None
    usage: _Usage | None = None


def completion_from(body: Any) -> Completion:
    """The Completion in a chat completion body that came another way (a line of a batch's output file)."""
    return completion(body, 0)


def completion(response: Any, latency_ms: int) -> Completion:
    """The Completion in a 200 body parsed from JSON; NotACompletion when it holds something else."""
    not_one = "the judge endpoint answered 200 with a body that is not a chat completion: {}"
    if not isinstance(response, dict):  # the SDK hands back a body that is not JSON as the text it came as
        raise NotACompletion(not_one.format(gist(response)))
    if (error := response.get("error")) is not None:
        raise error_object(error)
    try:
        reply = _Reply.model_validate(response)
    except ValidationError as err:  # the field that broke, as it came
        field = str(err.errors()[0]["loc"][0])
        raise NotACompletion(not_one.format(gist(f"{field}: {response.get(field)!r}"))) from None
    if reply.choices == []:
        raise JudgeCallError("the judge endpoint returned no choices")
    choice = reply.choices[0] if reply.choices else None
    if (error := (getattr(choice, "model_extra", None) or {}).get("error")) is not None:
        raise error_object(error)  # OpenRouter: the provider behind it failed after the 200 began
    if choice is None or choice.message is None:
        raise NotACompletion(not_one.format(gist(f"choices: {response.get('choices')!r}")))
    usage = reply.usage or _Usage()
    return Completion(
        text=choice.message.content or "",
        finish_reason=choice.finish_reason,
        tokens_in=usage.prompt_tokens or 0,
        tokens_out=usage.completion_tokens or 0,
        latency_ms=latency_ms,
        refusal=choice.message.refusal,
        cached_tokens=(usage.prompt_tokens_details.cached_tokens or 0) if usage.prompt_tokens_details else 0,
        reasoning_tokens=((usage.completion_tokens_details.reasoning_tokens or 0)
                          if usage.completion_tokens_details else 0),
    )


def error_object(error: Any) -> NotACompletion:
    """A 200 that carries a provider's error object: its message kept, retried and counted like a 503."""
    message = error.get("message") if isinstance(error, dict) else None
    quoted = gist(message or error, 300)
    return NotACompletion(f"the judge endpoint answered 200 with an error: {quoted}", outage=True, detail=quoted)
