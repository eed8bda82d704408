"""Wiring: the Web API client with its retry handlers, and the bolt app with every listener registered."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
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
HOME_OPENED = "app_home_opened"
EVENTS = (HOME_OPENED,)  # every event the app subscribes to, as manifest.yml declares them


def make_web_client(token: str, api_url: str) -> AsyncWebClient:
    """A Web API client that waits out rate limits (Retry-After) and retries server errors and dropped connections."""
    return AsyncWebClient(
        token=token, base_url=api_url, timeout=30,
        retry_handlers=[AsyncConnectionErrorRetryHandler(max_retry_count=2),
                        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
                        AsyncServerErrorRetryHandler(max_retry_count=2)],
    )


class _NoTokenNotice(logging.Filter):
    """Drop bolt's notice that SLACK_BOT_TOKEN in the environment is unused: our client carries that very token."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def build_app(bot: Judgebot, client: AsyncWebClient, *, signing_secret: str | None) -> AsyncApp:
    """The bolt app; with a signing secret every HTTP request is verified, without one it serves Socket Mode only."""
    logger = logging.getLogger("judgebot.bolt")
    if not any(isinstance(f, _NoTokenNotice) for f in logger.filters):
        logger.addFilter(_NoTokenNotice())
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=bool(signing_secret),
        logger=logger,
    )
    listeners = Listeners(bot)
    app.command(COMMAND)(listeners.on_command)
    app.view(FORM)(listeners.on_form)
    app.action(AGREE)(listeners.on_vote)
    app.action(DISAGREE)(listeners.on_vote)
    app.action(REJUDGE)(listeners.on_rejudge)
    app.action(RETRY)(listeners.on_retry)
    app.action(DETAILS)(listeners.on_details)
    app.event(HOME_OPENED)(listeners.on_home_opened)
    app.error(listeners.on_error)
    return app
