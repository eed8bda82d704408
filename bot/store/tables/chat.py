"""The tables of what the history keeps for chat: per-person and per-channel settings, files shared in Slack, weekly
digest subscriptions and the digests posted, and Slack's deliveries."""

from __future__ import annotations

from pydantic import NaiveDatetime
from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint, false
from sqlmodel import Field, SQLModel

import bot.store.tables.history  # noqa: F401  (the run and judgment tables its foreign keys name, for a row to be saved)
from bot.records import PostState, ShareState
from bot.store.clock import utcnow


class UserSetting(SQLModel, table=True):
    """What the bot remembers for one person in one workspace, such as the model under test they last named."""

    __tablename__ = "user_setting"
    __table_args__ = (UniqueConstraint("team_id", "user_id", name="uq_user_setting_team_user"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str = Field(max_length=32)
    user_id: str = Field(max_length=32)
    model_name: str | None = Field(default=None, sa_column=Column(Text))
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class ChannelSetting(SQLModel, table=True):
    """What the bot remembers for one channel, such as the rubric a CSV shared there is judged with by default."""

    __tablename__ = "channel_setting"
    __table_args__ = (UniqueConstraint("team_id", "channel_id", name="uq_channel_setting_team_channel"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    default_rubric: str | None = Field(default=None, max_length=64)
    default_samples: int | None = Field(default=None, description="samples per row for files judged here")
    monthly_budget: float | None = Field(default=None, description="USD the channel's runs may spend a calendar month")
    confirm_above: float | None = Field(default=None, description="USD above which a file's estimate asks before "
                                        "it is judged (None: CONFIRM_ABOVE_USD)")
    reviewers: list[str] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)),
                                        description="who the review queue asks: user ids, and user groups as S ids")
    review_blind: bool = Field(default=False, sa_column_kwargs={"server_default": false()},
                               description="reviewers see the judge's verdict only after saving their own label")
    nudge_hour: int | None = None
    nudge_minute: int | None = None
    nudge_timezone: str | None = Field(default=None, max_length=64, description="the reviewers' nudge on weekdays at "
                                       "this local time; None: no nudge")
    nudge_set_at: NaiveDatetime | None = None
    updated_by: str | None = Field(default=None, max_length=32)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class SharedFile(SQLModel, table=True):
    """A file shared in Slack, claimed once however often Slack delivers it, and the run it became."""

    __tablename__ = "shared_file"
    __table_args__ = (
        UniqueConstraint("team_id", "channel_id", "message_ts", "file_id", name="uq_shared_file_message_file"),
        Index("ix_shared_file_thread", "channel_id", "thread_ts"),
        Index("ix_shared_file_state", "state"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    thread_ts: str = Field(max_length=32, description="the thread the run talks in: the share's thread or itself")
    message_ts: str = Field(max_length=32, description="the message that shared the file")
    file_id: str = Field(max_length=32)
    event_id: str | None = Field(default=None, max_length=64)
    user_id: str | None = Field(default=None, max_length=32)
    file_name: str = Field(default="", sa_column=Column(Text, nullable=False))
    text: str = Field(default="", sa_column=Column(Text, nullable=False))
    sha256: str | None = Field(default=None, max_length=64)
    state: str = Field(default=ShareState.RECEIVED, max_length=16, description="received, asking, confirm, loading, "
                       "running, paused, finishing, done, failed, refused or skipped")
    owner: str | None = Field(default=None, max_length=128, description="host:pid:incarnation handling it")
    note: str | None = Field(default=None, sa_column=Column(Text))
    rubric_name: str | None = Field(default=None, max_length=64)
    model_name: str | None = Field(default=None, sa_column=Column(Text))
    run_id: int | None = Field(default=None, foreign_key="run.id")
    question_ts: str | None = Field(default=None, max_length=32, description="the bot's question (rubric, run again)")
    progress_ts: str | None = Field(default=None, max_length=32)
    summary_ts: str | None = Field(default=None, max_length=32)
    results_posted: bool = False
    stream_ts: str | None = Field(default=None, max_length=32, description="the stream showing its run's progress")


class DigestSubscription(SQLModel, table=True):
    """A channel's weekly digest: the local day and time it is posted at."""

    __tablename__ = "digest_subscription"
    __table_args__ = (UniqueConstraint("team_id", "channel_id", name="uq_digest_subscription_team_channel"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    weekday: int = Field(description="0 for Monday to 6 for Sunday")
    hour: int
    minute: int
    timezone: str = Field(max_length=64, description="an IANA name such as Europe/Berlin")
    updated_by: str | None = Field(default=None, max_length=32)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class DigestPost(SQLModel, table=True):
    """A claim on one channel's digest of one ISO week: whoever inserts it first posts, once."""

    __tablename__ = "digest_post"
    __table_args__ = (UniqueConstraint("channel_id", "week", name="uq_digest_post_channel_week"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str = Field(max_length=32)
    week: str = Field(max_length=10, description="ISO week such as 2026-W47")
    state: str = Field(default=PostState.POSTING, max_length=16, description="posting or posted")
    owner: str | None = Field(default=None, max_length=128)
    claimed_at: NaiveDatetime = Field(default_factory=utcnow)
    posted_at: NaiveDatetime | None = None
    message_ts: str | None = Field(default=None, max_length=32)


class SlackDelivery(SQLModel, table=True):
    """A request or event Slack delivered, recorded before it is processed: whichever process records it first
    processes it; a retry or a replay reaching any process finds it and is dropped."""

    __tablename__ = "slack_delivery"

    key: str = Field(primary_key=True, max_length=80, description="event:<event_id>, or request:<sha256 hex>")
    kind: str = Field(max_length=32, description="the payload's type (event_callback, block_actions...) or command")
    owner: str = Field(max_length=128, description="host:pid:incarnation of the process that took it")
    received_at: NaiveDatetime = Field(default_factory=utcnow, index=True)
