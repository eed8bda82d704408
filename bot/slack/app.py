"""Wiring: the Web API client with its retry handlers, and the bolt app with every listener registered."""

from __future__ import annotations

import logging
import re

from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.cards import AGREE, DETAILS, DISAGREE, REJUDGE, RETRY
from bot.slack.digests import Digests
from bot.slack.file_listeners import FileListeners
from bot.slack.file_runs import FileRuns
from bot.slack.judging import Judgebot
from bot.slack.listeners import Listeners
from bot.slack.run_cards import CANCEL_RUN, PICK_RUBRIC, RESUME_RUN, RUN_AGAIN, SKIP_AGAIN
from bot.slack.views import FORM

COMMAND = "/judge"
HOME_OPENED = "app_home_opened"
# Every event the app subscribes to, as manifest.yml declares them: messages of public and private channels
# (files arrive as messages with the subtype file_share), and file_shared, which Slack sends alongside.
EVENTS = (HOME_OPENED, "message.channels", "message.groups", "file_shared")


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


def build_app(bot: Judgebot, files: FileRuns, digests: Digests, client: AsyncWebClient, *,
              signing_secret: str | None) -> AsyncApp:
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
    listeners = Listeners(bot, digests)
    app.command(COMMAND)(listeners.on_command)
    app.view(FORM)(listeners.on_form)
    app.action(AGREE)(listeners.on_vote)
    app.action(DISAGREE)(listeners.on_vote)
    app.action(REJUDGE)(listeners.on_rejudge)
    app.action(RETRY)(listeners.on_retry)
    app.action(DETAILS)(listeners.on_details)
    app.event(HOME_OPENED)(listeners.on_home_opened)
    on_files = FileListeners(bot, files)
    app.event({"type": "message", "subtype": "file_share"})(on_files.on_file_share)
    app.event("message")(on_files.ignore)  # every other message: answered, or bolt says 404 and Slack retries
    app.event("file_shared")(on_files.ignore)  # the file_share message carries everything needed
    app.action(re.compile(f"^{PICK_RUBRIC}"))(on_files.on_pick_rubric)
    app.action(RUN_AGAIN)(on_files.on_again)
    app.action(SKIP_AGAIN)(on_files.on_skip)
    app.action(CANCEL_RUN)(on_files.on_cancel)
    app.action(RESUME_RUN)(on_files.on_resume)
    app.error(listeners.on_error)
    return app
