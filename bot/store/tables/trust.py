"""The trust loop's tables: people's labels, the review queue and its nudges, channels' own judges and their revisions
of rubrics."""

from __future__ import annotations

from typing import Any

from pydantic import NaiveDatetime
from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

import bot.store.tables.history  # noqa: F401  (the run and judgment tables its foreign keys name, for a row to be saved)
from bot.records import PostState
from bot.store.clock import utcnow


class Label(SQLModel, table=True):
    """What a person says a judgment should have been (or a CSV's human_ columns said); one per person and judgment."""

    __table_args__ = (
        UniqueConstraint("judgment_id", "user_id", name="uq_label_judgment_user"),
        Index("ix_label_rubric_judge", "rubric_name", "judge_model"),
        Index("ix_label_channel", "channel_id", "rubric_name"),
        Index("ix_label_case_user", "case_key", "user_id"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    judgment_id: int = Field(foreign_key="judgment.id")
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str | None = Field(default=None, max_length=32)
    user_id: str = Field(max_length=32, description="who gave it: a Slack user, a CSV's labeled_by or uploader, or "
                         '"file" for a CSV judged in a terminal')
    source: str = Field(max_length=16, description="correction (the Correct it form) or file (human_ columns)")
    case_key: str | None = Field(default=None, max_length=64, description="the judgment's case (bot.store.counts.case_keys): "
                                 "a person's latest label of a case replaces their earlier ones")
    rubric_name: str = Field(max_length=64)
    rubric_hash: str = Field(max_length=32)
    judge_model: str = Field(max_length=128)
    values: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False),
                                   description="the person's value of each field they set, by dotted path")
    passed: bool | None = Field(default=None, description="pass/fail as the person gave it, or by the pass rule on "
                                "their own values; None when neither says")
    pass_from: str | None = Field(default=None, max_length=16, description="given (by the person) or rule (the pass "
                                  "rule on their own values); None when pass/fail is not given")
    tag: str | None = Field(default=None, sa_column=Column(Text))
    headline: float | None = None
    note: str | None = Field(default=None, sa_column=Column(Text))
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class ReviewCase(SQLModel, table=True):
    """A case waiting for (or given) a person's label in a channel's review queue: once per case, offered to one
    reviewer at a time."""

    __tablename__ = "review_case"
    __table_args__ = (
        UniqueConstraint("case_key", name="uq_review_case_case"),
        Index("ix_review_case_channel_state", "channel_id", "state", "created_at"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str | None = Field(default=None, max_length=32, description="None: the terminal's queue")
    case_key: str = Field(max_length=64, description="the case (bot.store.counts.case_keys), which names team and channel")
    judgment_id: int = Field(foreign_key="judgment.id", description="the verdict that sent it to review")
    run_id: int = Field(foreign_key="run.id")
    rubric_name: str = Field(max_length=64)
    reason: str = Field(max_length=16, description="unsure, split (a jury), disagree (with a label), random "
                        "or inconsistent (a pair)")
    random: bool = Field(default=False, description="picked at random from its run's scored rows")
    state: str = Field(default="open", max_length=16, description="open or labeled")
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    offered_to: str | None = Field(default=None, max_length=32)
    offered_at: NaiveDatetime | None = None
    skipped_by: str | None = Field(default=None, max_length=32)
    skipped_at: NaiveDatetime | None = None
    labeled_by: str | None = Field(default=None, max_length=32)
    labeled_at: NaiveDatetime | None = None


class ReviewNudge(SQLModel, table=True):
    """A claim on one reviewer's nudge of one channel and day: whoever inserts it first sends it, once."""

    __tablename__ = "review_nudge"
    __table_args__ = (UniqueConstraint("channel_id", "user_id", "day", name="uq_review_nudge_channel_user_day"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str = Field(max_length=32)
    user_id: str = Field(max_length=32)
    day: str = Field(max_length=10, description="the channel's local day, such as 2026-11-26")
    state: str = Field(default=PostState.POSTING, max_length=16, description="posting or posted")
    owner: str | None = Field(default=None, max_length=128)
    claimed_at: NaiveDatetime = Field(default_factory=utcnow)
    posted_at: NaiveDatetime | None = None
    message_ts: str | None = Field(default=None, max_length=32)


class RubricRevision(SQLModel, table=True):
    """A channel's revision of a rubric, proposed by `/judge align` and accepted (in force there) or discarded: its
    text, its figures, and who decided."""

    __tablename__ = "rubric_revision"
    __table_args__ = (Index("ix_rubric_revision_channel", "team_id", "channel_id", "rubric_name", "state"),
                      Index("ix_rubric_revision_hash", "content_hash"))

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    rubric_name: str = Field(max_length=64)
    version: str = Field(max_length=32)
    content_hash: str = Field(max_length=32)
    based_on: str = Field(max_length=32, description="the hash of the rubric it revises")
    content: str = Field(sa_column=Column(Text, nullable=False), description="the rubric file's text")
    figures: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: str = Field(default="proposed", max_length=16, description="proposed, accepted, discarded or replaced")
    proposed_by: str = Field(max_length=32)
    proposed_at: NaiveDatetime = Field(default_factory=utcnow)
    decided_by: str | None = Field(default=None, max_length=32)
    decided_at: NaiveDatetime | None = None
    message_ts: str | None = Field(default=None, max_length=32)


class ChannelJudge(SQLModel, table=True):
    """A channel's choice of its own judge model (None: back to the configured judge), kept like a revision: who
    chose it, when, what it replaced and why. The newest choice of a channel is in force."""

    __tablename__ = "channel_judge"
    __table_args__ = (Index("ix_channel_judge_channel_set", "team_id", "channel_id", "set_at"),)

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    judge_model: str | None = Field(default=None, max_length=128)
    reasoning_effort: str | None = Field(default=None, max_length=16, description="the effort it is asked at (None: "
                                         "JUDGE_REASONING_EFFORT, else the default for its model)")
    previous: str | None = Field(default=None, max_length=128, description="the channel's judge before (None: the "
                                 "configured judge)")
    set_by: str = Field(max_length=32)
    set_at: NaiveDatetime = Field(default_factory=utcnow)
    note: str | None = Field(default=None, sa_column=Column(Text), description="why: such as the comparison it "
                             "followed, with its figures")
