"""Wiring: the bolt app, with every listener registered against the events, commands and buttons it answers."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings

from bot.slack.context import Context
from bot.slack.deliveries import Deliveries
from bot.slack.flows.digest_post import DigestSettings, WeeklyDigests
from bot.slack.flows.file_intake import FileIntake
from bot.slack.flows.file_run import FileRuns
from bot.slack.flows.review_nudge import ReviewNudges
from bot.slack.listeners.align import AlignCommands
from bot.slack.listeners.budget import BudgetCommands
from bot.slack.listeners.card import CardListener
from bot.slack.listeners.command import CommandListener
from bot.slack.listeners.compare import CompareCommands
from bot.slack.listeners.digest import DigestCommands
from bot.slack.listeners.file import FileListener
from bot.slack.listeners.home import HomeListener
from bot.slack.listeners.judges_compare import JudgesCompare
from bot.slack.listeners.judging_settings import JudgeCommands
from bot.slack.listeners.messages_tab import MessagesTab
from bot.slack.listeners.review import ReviewCommands
from bot.slack.listeners.workflow import GRADE_STEP, WorkflowStep
from bot.slack.messenger import failure_text
from bot.slack.oauth import workspace_middleware
from bot.slack.views.align import ALIGN_DISCARD, ALIGN_DOWNLOAD, ALIGN_USE
from bot.slack.views.card import AGREE, CORRECT, DETAILS, DISAGREE, FEEDBACK, REJUDGE, RETRY
from bot.slack.views.commands import FORM, FormSeal
from bot.slack.views.correction import CORRECTION
from bot.slack.views.file_run import (
    BACKGROUND_RUN,
    BATCH_RUN,
    CANCEL_RUN,
    PICK_RUBRIC,
    RESUME_RUN,
    RUN_AGAIN,
    SKIP_AGAIN,
)
from bot.slack.views.judges_compare import JUDGE_KEEP, JUDGE_USE
from bot.slack.views.review import REVIEW_AGREE, REVIEW_FORM, REVIEW_LABEL, REVIEW_PICK, REVIEW_SKIP, REVIEW_START

COMMAND = "/judge"
HOME_OPENED = "app_home_opened"
# Every event the app subscribes to, as manifest.yml declares them: messages of public and private channels
# (files arrive as messages with the subtype file_share), and file_shared, which Slack sends alongside; the Messages
# tab's threads (started, the channel looked at changed) and the direct messages written there; and a workflow
# reaching the app's step (function_executed, which Slack sends to an app whose manifest declares the step); and a
# workspace uninstalling the app or revoking its tokens (with the OAuth install, its tokens are deleted).
REVOKED = ("app_uninstalled", "tokens_revoked")
EVENTS = (HOME_OPENED, "message.channels", "message.groups", "file_shared", "message.im", "assistant_thread_started",
          "assistant_thread_context_changed", "function_executed", *REVOKED)

log = logging.getLogger(__name__)


class _NoTokenNotice(logging.Filter):
    """Drop bolt's notice that SLACK_BOT_TOKEN in the environment is unused: our client carries that very token."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


@dataclass
class Parts:
    """What the app is made of besides the context: the file runs, the weekly digests, the reviewers' nudges and the
    record of Slack's deliveries (started by the server)."""

    intake: FileIntake
    files: FileRuns
    digests: WeeklyDigests
    nudges: ReviewNudges
    deliveries: Deliveries


async def ignore() -> None:
    """Events the app receives but does not act on: answered, so Slack does not send them again."""


def on_error(ctx: Context) -> Any:
    """The app's error listener: a failed listener is logged with where and for whom, and the person told."""

    async def failed(error: Exception, body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        where = body.get("channel_id") or (body.get("channel") or {}).get("id") or event.get("channel")
        user = body.get("user_id") or (body.get("user") or {}).get("id") or event.get("user")
        kind = body.get("command") or body.get("type") or event.get("type")
        log.error("%s failed for user %s in %s", kind, user, where, exc_info=error)
        await ctx.say.tell(body.get("response_url"), failure_text(error))

    return failed


def build_app(ctx: Context, parts: Parts, *, signing_secret: str | None, digest_settings: DigestSettings,
              form_secret: str, oauth: AsyncOAuthSettings | None = None) -> AsyncApp:
    """The bolt app; with a signing secret every HTTP request is verified, without one it serves Socket Mode only.

    `form_secret` (the signing secret, or in Socket Mode the app token) signs where each form was opened. With `oauth`
    (many workspaces) bolt serves the install pages and authorizes each request from the installation store.
    """
    logger = logging.getLogger("judgebot.bolt")
    if not any(isinstance(f, _NoTokenNotice) for f in logger.filters):
        logger.addFilter(_NoTokenNotice())
    # named here: without a name bolt reads the caller's file name off the whole call stack, sources and all
    app = AsyncApp(name="judgebot", client=ctx.client, signing_secret=signing_secret or "",
                   request_verification_enabled=bool(signing_secret), logger=logger, oauth_settings=oauth)
    app.middleware(parts.deliveries)  # the first of ours: a delivery taken already reaches none of our listeners
    if oauth is not None:
        app.middleware(workspace_middleware(ctx))  # each request answered with its own workspace's token
        app.enable_token_revocation_listeners()  # app_uninstalled, tokens_revoked: the workspace's tokens deleted
    else:
        for revoked in REVOKED:  # one SLACK_BOT_TOKEN: nothing stored to delete
            app.event(revoked)(ignore)
    digest_commands = DigestCommands(ctx, parts.digests, digest_settings)
    seal = FormSeal(form_secret)
    budget_commands = BudgetCommands(ctx, digest_settings.admins, parts.files.limits.confirm_above)
    review = ReviewCommands(ctx, seal, digest_settings.admins, digest_settings.timezone)
    judge_commands = JudgeCommands(ctx, digest_settings.admins)
    align = AlignCommands(ctx, digest_settings.admins, parts.files.limits.concurrency)
    compare = CompareCommands(ctx)
    judges_compare = JudgesCompare(ctx, digest_settings.admins, judge_commands, parts.files.limits.concurrency)
    app.command(COMMAND)(CommandListener(ctx, seal, digest_commands.handlers(), budget_commands.handlers(),
                                         review.handlers(), judge_commands.handlers(), align.handlers(), compare.handlers(),
                                         judges_compare.handlers(),
                                         trust=digest_settings.trust).on_command)
    app.action(REVIEW_AGREE)(review.on_agree)
    app.action(REVIEW_LABEL)(review.on_label)
    app.action(REVIEW_SKIP)(review.on_skip)
    app.action(re.compile(f"^{REVIEW_PICK}(A|B|tie)$"))(review.on_pick)
    app.action(REVIEW_START)(review.on_start)
    app.view(REVIEW_FORM)(review.on_form)
    app.action(ALIGN_USE)(align.on_use)
    app.action(ALIGN_DISCARD)(align.on_discard)
    app.action(ALIGN_DOWNLOAD)(align.on_download)
    app.action(JUDGE_USE)(judges_compare.on_use)
    app.action(JUDGE_KEEP)(judges_compare.on_keep)
    cards = CardListener(ctx, seal)
    app.view(FORM)(cards.on_form)
    app.action(FEEDBACK)(cards.on_vote)
    app.action(AGREE)(cards.on_vote)  # the buttons of cards posted before the feedback buttons
    app.action(DISAGREE)(cards.on_vote)
    app.action(REJUDGE)(cards.on_rejudge)
    app.action(RETRY)(cards.on_retry)
    app.action(DETAILS)(cards.on_details)
    app.action(CORRECT)(cards.on_correct)
    app.view(CORRECTION)(cards.on_correction)
    app.event(HOME_OPENED)(HomeListener(ctx).on_home_opened)
    files = FileListener(ctx, parts.intake, parts.files)
    messages_tab = MessagesTab(ctx, files)
    app.assistant(messages_tab.assistant())  # the Messages tab's threads, and what a person writes in them
    app.event("message", matchers=[messages_tab.top_level])(messages_tab.on_message)  # written outside a thread
    app.event({"type": "message", "subtype": "file_share"})(files.on_file_share)
    app.event("message")(ignore)  # every other message: answered, or bolt says 404 and Slack retries
    app.event("file_shared")(ignore)  # the file_share message carries everything needed
    app.action(re.compile(f"^{PICK_RUBRIC}"))(files.on_pick_rubric)
    app.action(RUN_AGAIN)(files.on_again)
    app.action(SKIP_AGAIN)(files.on_skip)
    app.action(CANCEL_RUN)(files.on_cancel)
    app.action(RESUME_RUN)(files.on_resume)
    app.action(BATCH_RUN)(files.on_batch)
    app.action(re.compile(f"^{BACKGROUND_RUN}(2h|8h)$"))(files.on_background)
    app.function(GRADE_STEP)(WorkflowStep(ctx).on_step)  # Workflow Builder's "Grade an answer" step
    app.error(on_error(ctx))
    return app
