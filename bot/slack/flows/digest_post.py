"""Posting a channel's digest with its trend chart: the weekly one once per channel and ISO week, on schedule or from
the terminal."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.digest import Digest, DigestScheduler, Period, build_digest, next_posting, trend_png
from bot.errors import SetupError
from bot.judge.lifetime import JudgeWatch
from bot.rubric import RubricSet
from bot.runs.shutdown_reads import remembered_shutdowns
from bot.slack.context import Context
from bot.slack.files import upload
from bot.slack.flows.earlier_posts import earlier_post
from bot.slack.messenger import (
    once_client,
    post_problem,
    refused,
    slack_error,
)
from bot.slack.terminal_workspace import workspace_of
from bot.slack.views.digest import digest_message
from bot.store import (
    DigestSubscription,
    Store,
    claim_week,
    judge_of_channel,
    mark_posted,
    release_week,
    unanswered_week,
    week_taken,
)
from bot.trust.report import TrustBar

log = logging.getLogger(__name__)

DIGEST_EVENT = "judgebot_digest"  # message metadata that marks a posted digest
RETRY_SECONDS = (60, 300, 900, 1800)  # waits between tries of a scheduled digest Slack refused; then every 30 min
# Refusals that waiting does not cure: the digest is not tried again before its next week.
FOR_GOOD = {"channel_not_found", "not_in_channel", "is_archived", "restricted_action", "invalid_blocks",
            "msg_too_long", "invalid_auth", "account_inactive", "token_revoked", "missing_scope"}


@dataclass(frozen=True)
class DigestSettings:
    """The digest's settings: the default timezone, the extra admins, how late a missed digest is still posted, and
    when agreement with people's labels earns a warning."""

    timezone: str = "UTC"
    admins: frozenset[str] = frozenset()
    grace: timedelta = timedelta(hours=12)
    trust: TrustBar = TrustBar()

    @classmethod
    def from_settings(cls, settings: Settings) -> DigestSettings:
        return cls(settings.digest_timezone, settings.admin_ids, timedelta(hours=settings.digest_grace_hours),
                   TrustBar.from_settings(settings))


def chart_label(week: Period) -> str:
    """An x-axis label: the ISO week for a Monday-to-Sunday period, else the last day."""
    if week.start.weekday() == 0 and week.start.time() == datetime.min.time():
        return week.week.split("-")[1]
    return f"{week.last_day.day} {week.last_day:%b}"


@dataclass
class DigestPoster:
    """Posts a channel's digest with its trend chart; a weekly one once per channel and ISO week.

    It calls the Web API itself rather than through the messenger: a refusal must reach `post_weekly`, which
    decides whether to try again, and the caller of a post from the terminal, who is told why.
    """

    store: Store
    rubrics: RubricSet
    client: AsyncWebClient
    team_url: str | None = None
    team_id: str | None = None  # the workspace whose labels the digest counts (None: any)
    trust: TrustBar = TrustBar()
    watch: JudgeWatch = field(default_factory=JudgeWatch)  # the judges whose coming shutdown the digest names
    view_url: str | None = None  # VIEW_URL: the digest links to the channel's trend in the web view

    async def post_weekly(self, team_id: str | None, channel_id: str, period: Period, *,
                          until: datetime | None = None) -> str | None:
        """Post the channel's digest of `period` unless it was posted already (then None); return the message's ts.

        A failed post gives the claim up, so the digest can be posted later; it is tried again until `until`,
        after which the last error is raised.
        """
        attempt = 0
        while True:
            claim = await asyncio.to_thread(claim_week, self.store, team_id=team_id, channel_id=channel_id,
                                            week=period.posting_week)
            if claim is None:
                log.info("the digest of %s for %s is posted already (or being posted)", channel_id,
                         period.posting_week)
                return None
            # Only an earlier try that may have posted (no answer came, or its process died) is looked for
            if claim.earlier is not None and (found := await earlier_post(
                    self.client, channel_id, claim.earlier, DIGEST_EVENT,
                    lambda payload: bool(payload.get("weekly")) and payload.get("posted_in") == period.posting_week)):
                log.info("the digest of %s for %s is in the channel already: an earlier post whose answer was lost",
                         channel_id, period.posting_week)
                await asyncio.to_thread(mark_posted, self.store, claim_id=claim.id, message_ts=found)
                return None
            try:
                ts = await self.post(channel_id, period, weekly=True)
            except Exception as err:
                # Refused: nothing was posted, the claim is given up; no answer: it may be there, the next try looks
                settle = release_week if refused(err) else unanswered_week
                await asyncio.to_thread(settle, self.store, claim_id=claim.id)
                wait = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                if until is None or slack_error(err) in FOR_GOOD or datetime.now(UTC) + timedelta(seconds=wait) > until:
                    raise
                log.warning("the digest of %s for %s failed (%s); trying again in %s s", channel_id, period.week,
                            slack_error(err), wait)
                attempt += 1
                await asyncio.sleep(wait)
                continue
            await asyncio.to_thread(mark_posted, self.store, claim_id=claim.id, message_ts=ts)
            return ts

    async def post(self, channel_id: str, period: Period, *, weekly: bool) -> str:
        """Post the channel's digest of `period` and its trend chart (in the digest's thread); return its ts."""
        digest: Digest = await asyncio.to_thread(build_digest, self.store, channel_id=channel_id, period=period,
                                                 team_id=self.team_id, bar=self.trust)
        own = await asyncio.to_thread(judge_of_channel, self.store, team_id=self.team_id, channel_id=channel_id)
        digest.warnings = self.watch.warnings(own, slack=True)
        message = digest_message(digest, self.rubrics, self.team_url, weekly=weekly, view_url=self.view_url)
        posted = await once_client(self.client).chat_postMessage(  # a dropped call is not sent again blindly
            channel=channel_id, unfurl_links=False, unfurl_media=False, **message,
            metadata={"event_type": DIGEST_EVENT, "event_payload": {"week": period.week, "weekly": weekly,
                                                                     "posted_in": period.posting_week}})
        ts = str(posted["ts"])
        if digest.lines:  # a week of pairwise runs only has no trend of scores to chart
            await self._post_chart(digest, channel_id, ts, weekly=weekly)
        return ts

    async def _post_chart(self, digest: Digest, channel_id: str, ts: str, *, weekly: bool) -> None:
        title = f"Mean headline per model, the 8 weeks to {digest.period.last_day.day} {digest.period.last_day:%b %Y}"
        try:
            png = await asyncio.to_thread(trend_png, title, [chart_label(w) for w in digest.weeks], digest.series(),
                                          digest.judge_marks)
            name = f"judgebot-trend-{digest.period.week if weekly else digest.period.last_day.isoformat()}.png"
            await upload(self.client, channel=channel_id, thread_ts=ts, comment="Trend of the last 8 weeks",
                         files=[(name, title, png)])
        except Exception as err:  # the digest itself is posted: that is what counts
            log.warning("the trend chart of %s could not be posted: %s", channel_id, slack_error(err))


class WeeklyDigests:
    """The schedule that posts each subscribed channel's digest, through one poster."""

    def __init__(self, ctx: Context, settings: DigestSettings) -> None:
        self.ctx, self.settings = ctx, settings
        self.scheduler = DigestScheduler(ctx.store, self.on_due, grace=settings.grace)

    @property
    def poster(self) -> DigestPoster:
        """The poster of the workspace acted for now (the request's, or the one `acting_for` names)."""
        ctx = self.ctx
        return DigestPoster(ctx.store, ctx.rubrics, ctx.client, ctx.team_url, ctx.team_id, self.settings.trust,
                            ctx.watch, ctx.view_url)

    async def start(self) -> None:
        """Start the schedule of every subscribed channel."""
        await self.scheduler.start()

    def stop(self) -> None:
        """Stop the schedule; digests being posted finish while the bot drains."""
        self.scheduler.stop()

    async def on_due(self, sub: DigestSubscription, due: datetime) -> None:
        """A channel's digest is due (called by the schedule): post the 7 days before the day it is due."""
        self.ctx.tasks.spawn(self.post_weekly(sub, due), f"weekly digest of {sub.channel_id}")

    async def post_weekly(self, sub: DigestSubscription, due: datetime) -> str | None:
        """Post a channel's digest due at `due`, for the channel's workspace (see DigestPoster.post_weekly)."""
        async with self.ctx.acting_for(sub.team_id):
            return await self.poster.post_weekly(sub.team_id, sub.channel_id, Period.before_day_of(due),
                                                 until=due + self.settings.grace)

    async def next_digest(self, sub: DigestSubscription) -> datetime:
        """When the channel's next digest is posted (naive UTC): a week already posted in is skipped."""
        due = self.scheduler.next_run(sub.team_id, sub.channel_id) or next_posting(sub)
        if await self.ctx.db(week_taken, channel_id=sub.channel_id,
                             week=Period.before_day_of(due.astimezone(ZoneInfo(sub.timezone))).posting_week):
            due = next_posting(sub, due + timedelta(days=1))
        return due.astimezone(UTC).replace(tzinfo=None)


async def post_from_terminal(settings: Settings, store: Store, rubrics: RubricSet, channel_id: str, period: Period, *,
                             team_id: str | None) -> str:
    """`judgebot digest --post`: post a channel's weekly digest through the bot's token in its workspace, once per
    week."""
    found = await workspace_of(settings, store, channel_id, team_id=team_id)
    team = found.team_id
    watch = await asyncio.to_thread(remembered_shutdowns, JudgeWatch.from_settings(settings), store)
    poster = DigestPoster(store, rubrics, found.client, found.url, team, TrustBar.from_settings(settings), watch,
                          settings.view_url)
    try:
        ts = await poster.post_weekly(team, channel_id, period)
    except SlackApiError as err:
        raise SetupError(post_problem(slack_error(err), channel_id)) from None
    if ts is None:
        return (f"The digest of {channel_id} for {period.week} was not posted: a weekly digest was posted in "
                f"{period.posting_week} already, and a channel gets one a week.")
    return f"Posted the digest of {channel_id} for {period.week}."
