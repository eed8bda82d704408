"""Wiring: the Web API client with its retry handlers, and the bolt app with every listener registered."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.cards import AGREE, DETAILS, DISAGREE, REJUDGE, RETRY
from bot.slack.judging import Judgebot
from bot.slack.listeners import Listeners
from bot.slack.views import FORM

COMMAND = "/judge"


def make_web_client(token: str, api_url: str) -> AsyncWebClient:
    """A Web API client that waits out rate limits (Retry-After) and retries server errors and dropped connections."""
    return AsyncWebClient(
        token=token, base_url=api_url, timeout=30,
        retry_handlers=[AsyncConnectionErrorRetryHandler(max_retry_count=2),
                        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
                        AsyncServerErrorRetryHandler(max_retry_count=2)],
    )


def build_app(bot: Judgebot, client: AsyncWebClient, *, signing_secret: str | None) -> AsyncApp:
    """The bolt app; with a signing secret every HTTP request is verified, without one it serves Socket Mode only."""
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=bool(signing_secret),
        logger=logging.getLogger("judgebot.bolt"),
    )
    listeners = Listeners(bot)
    app.command(COMMAND)(listeners.on_command)
    app.view(FORM)(listeners.on_form)
    app.action(AGREE)(listeners.on_vote)
    app.action(DISAGREE)(listeners.on_vote)
    app.action(REJUDGE)(listeners.on_rejudge)
    app.action(RETRY)(listeners.on_retry)
    app.action(DETAILS)(listeners.on_details)
    app.event("app_home_opened")(listeners.on_home_opened)
    app.error(listeners.on_error)
    return app
