"""The Web API client, and every message the bot sends with it: posted, edited, or said to one person.

A refusal by Slack never escapes as an exception from here: it becomes one log line saying what was being sent
where, and the caller gets a `Sent` that says so (with Slack's error code, to tell the person what to do).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.errors import JudgebotError, SetupError
from bot.slack.text import escape
from bot.slack.views.blocks import notice

log = logging.getLogger(__name__)

POST_PROBLEMS = {
    "not_in_channel": "I am not a member of <#{channel}>. Invite me with `/invite @judgebot`, then try again.",
    "channel_not_found": ("I cannot see this conversation (a private channel or a direct message I am not part of). "
                          "Invite me with `/invite @judgebot`, or use a channel I am in."),
    "is_archived": "<#{channel}> is archived, so I cannot post there.",
    "restricted_action": "This workspace does not let me post in <#{channel}>; ask an admin.",
}
OUR_FAULT = ("Something went wrong on my side and it did not work. Please try again; if it keeps happening, tell "
             "the bot's admin.")


def failure_text(err: BaseException) -> str:
    """What a person is told when their request failed: what to do for an error they can fix, else our apology."""
    if isinstance(err, JudgebotError):
        return f":warning: {escape(str(err))}"
    return f":warning: {OUR_FAULT}"


def make_web_client(token: str | None, api_url: str) -> AsyncWebClient:
    """A Web API client that waits out rate limits (Retry-After) and retries server errors and dropped connections."""
    return AsyncWebClient(
        token=token, base_url=api_url, timeout=30,
        retry_handlers=[AsyncConnectionErrorRetryHandler(max_retry_count=2),
                        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
                        AsyncServerErrorRetryHandler(max_retry_count=2)],
    )


def once_client(client: AsyncWebClient) -> AsyncWebClient:
    """`client`'s token and address, sending each call once (a 429, which says nothing was done, is waited out): for a
    post that must not be made twice, whose caller decides what an unanswered or failed call means."""
    return AsyncWebClient(token=client.token, base_url=client.base_url, timeout=client.timeout,
                          retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)])


def slack_error(err: Exception) -> str:
    """The error code Slack gave, or the kind of failure."""
    if isinstance(err, SlackApiError) and err.response is not None:
        return str(err.response.get("error", "unknown_error"))
    return type(err).__name__


SERVER_SIDE = frozenset({"internal_error", "fatal_error", "request_timeout", "service_unavailable"})


def refused(err: Exception) -> bool:
    """Whether Slack answered a call with a refusal, so that what it was asked was not done; a call that got no answer
    (a timeout, a lost connection) or a server error may have been done."""
    return (isinstance(err, SlackApiError) and err.response is not None and err.response.status_code < 500
            and str(err.response.get("error", "")) not in SERVER_SIDE)


def post_problem(code: str, channel: str) -> str:
    """What to tell a person when Slack refused a message of ours with `code`, and what they can do about it."""
    known = POST_PROBLEMS.get(code)
    return known.format(channel=channel) if known else f"Slack refused my message (`{code}`). Please try again."


@dataclass(frozen=True)
class Sent:
    """What became of a message: its ts, or Slack's reason for refusing it."""

    ts: str | None = None
    refusal: str | None = None

    @property
    def ok(self) -> bool:
        """Slack took the message."""
        return self.ts is not None


class Messenger:
    """Posts, edits and replies through one Web API client."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def post(self, channel: str, message: dict[str, Any], *, what: str, thread_ts: str | None = None,
                   **extra: Any) -> Sent:
        """Post `message` (in a thread when `thread_ts` is given); `what` names it in the log if Slack refuses."""
        try:
            sent = await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, **message, **extra)
        except Exception as err:
            log.warning("could not post %s in %s: %s", what, channel, slack_error(err))
            return Sent(refusal=slack_error(err))
        return Sent(ts=str(sent["ts"]))

    async def edit(self, channel: str, ts: str, message: dict[str, Any], *, what: str) -> Sent:
        """Put `message` in the place of message `ts`; `what` names it in the log if Slack refuses."""
        try:
            await self.client.chat_update(channel=channel, ts=ts, **message)
        except Exception as err:
            log.warning("could not update %s (%s) in %s: %s", what, ts, channel, slack_error(err))
            return Sent(refusal=slack_error(err))
        return Sent(ts=ts)

    async def reply(self, response_url: str | None, message: dict[str, Any]) -> None:
        """Send `message` to one person only, through the response_url Slack gave; failures are logged."""
        if not response_url:
            # its length, not its text: a reply may quote what people wrote, and logs are beyond RETENTION_DAYS
            log.warning("no response_url to send a reply to: a reply of %d characters not sent",
                        len(str(message.get("text") or "")))
            return
        webhook = AsyncWebhookClient(response_url, timeout=10, retry_handlers=self.client.retry_handlers)
        try:
            sent = await webhook.send_dict({"response_type": "ephemeral", "replace_original": False, **message})
        except Exception as err:
            log.warning("could not reply to a person: %s", slack_error(err))
            return
        if sent.status_code != 200:
            log.warning("Slack refused a reply to a person: %s %s", sent.status_code, sent.body)

    async def tell(self, response_url: str | None, text: str) -> None:
        """Say one paragraph (already escaped) to one person only."""
        await self.reply(response_url, notice(text))

    async def replace_or_tell(self, channel: str, ts: str, text: str, response_url: str | None) -> None:
        """Replace message `ts` by `text`; if Slack refuses, tell the person instead."""
        if not (await self.edit(channel, ts, notice(text), what="a message")).ok:
            await self.tell(response_url, text)


TOKEN_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                "not_allowed_token_type"}

BAD_BOT_TOKEN = (
    "Slack does not accept SLACK_BOT_TOKEN ({error}). Copy the Bot User OAuth Token (xoxb-...) again from the "
    "app's OAuth & Permissions page; reinstall the app to the workspace if it was revoked."
)

async def slack_call(call: Callable[[], Awaitable[AsyncSlackResponse]], template: str, api_url: str) -> dict[str, Any]:
    """What a start-up call to Slack answers; SetupError in a sentence when Slack refuses the token (`template` says
    which one) or cannot be reached at all."""
    try:
        answer = (await call()).data
        return answer if isinstance(answer, dict) else {}
    except SlackApiError as err:
        code = err.response.get("error", "unknown error")
        if code in TOKEN_ERRORS:
            raise SetupError(template.format(error=code)) from None
        raise SetupError(f"Slack answered `{code}` at {api_url}; check SLACK_API_URL and try again.") from None
    except (aiohttp.ClientError, OSError, TimeoutError) as err:
        raise SetupError(f"Cannot reach Slack at {api_url} ({type(err).__name__}: {err}). Check the network, "
                         "or SLACK_API_URL if you changed it.") from None
