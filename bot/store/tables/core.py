"""The history's tables that the judging path and the reading commands use, as SQLAlchemy Core tables, and runs,
judgments, their samples and batch parts as the records read from them: no ORM class is loaded to write or read
them (the table models cost a command about a third of its start-up).

Written from the table models by `python -m tests.support.core_twins`; do not edit by hand: a test fails when it is
stale. The schema itself is the models' and the migrations'."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.records import RowState, RunState
from bot.store.clock import utcnow

CORE = sa.MetaData()


RUN = sa.Table(
    "run", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("started_at", sa.DateTime()),
    sa.Column("finished_at", sa.DateTime()),
    sa.Column("heartbeat_at", sa.DateTime()),
    sa.Column("owner", sa.String(128)),
    sa.Column("status", sa.String(16), nullable=False, default=RunState.PENDING),
    sa.Column("stop_reason", sa.Text()),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_version", sa.String(32), nullable=False),
    sa.Column("rubric_hash", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("source", sa.String(16), nullable=False, default="cli"),
    sa.Column("source_name", sa.String(512)),
    sa.Column("columns", sa.JSON(none_as_null=True)),
    sa.Column("column_roles", sa.JSON(none_as_null=True)),
    sa.Column("model_name", sa.Text()),
    sa.Column("fresh", sa.Boolean(), nullable=False, default=False),
    sa.Column("total_rows", sa.Integer(), nullable=False, default=0),
    sa.Column("team_id", sa.String(32)),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("thread_ts", sa.String(32)),
    sa.Column("user_id", sa.String(32)),
    sa.Column("results_path", sa.Text()),
    sa.Column("results_written_at", sa.DateTime()),
    sa.Column("samples", sa.Integer(), nullable=False, default=1, server_default=sa.text("1")),
    sa.Column("judges", sa.JSON(none_as_null=True)),
    sa.Column("temperature", sa.Float()),
    sa.Column("estimate", sa.JSON(none_as_null=True)),
    sa.Column("cancel_requested_by", sa.String(32)),
)


JUDGMENT = sa.Table(
    "judgment", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("row_number", sa.Integer()),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("judged_at", sa.DateTime()),
    sa.Column("status", sa.String(16), nullable=False, default=RowState.PENDING),
    sa.Column("team_id", sa.String(32)),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("thread_ts", sa.String(32)),
    sa.Column("user_id", sa.String(32)),
    sa.Column("message_ts", sa.String(32)),
    sa.Column("model_name", sa.Text()),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_version", sa.String(32), nullable=False),
    sa.Column("rubric_hash", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("prompt_hash", sa.String(32)),
    sa.Column("cache_key", sa.String(64)),
    sa.Column("cached_from", sa.Integer()),
    sa.Column("question", sa.Text(), nullable=False),
    sa.Column("question_key", sa.BigInteger()),
    sa.Column("reference", sa.Text(), nullable=False),
    sa.Column("answer", sa.Text(), nullable=False),
    sa.Column("cells", sa.JSON(none_as_null=True)),
    sa.Column("output", sa.JSON(none_as_null=True)),
    sa.Column("derived", sa.JSON(none_as_null=True)),
    sa.Column("headline", sa.Float()),
    sa.Column("passed", sa.Boolean()),
    sa.Column("label", sa.Text()),
    sa.Column("tag", sa.Text()),
    sa.Column("flags", sa.JSON(none_as_null=True)),
    sa.Column("raw_reply", sa.Text()),
    sa.Column("error", sa.Text()),
    sa.Column("tokens_in", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_out", sa.Integer(), nullable=False, default=0),
    sa.Column("latency_ms", sa.Integer(), nullable=False, default=0),
    sa.Column("attempts", sa.Integer(), nullable=False, default=0),
    sa.Column("samples", sa.Integer()),
    sa.Column("agreement", sa.Float()),
    sa.Column("spread", sa.Float()),
    sa.Column("unsure", sa.Boolean()),
    sa.Column("tokens_cached", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("cost_usd", sa.Float()),
    sa.Column("answer_b", sa.Text()),
    sa.Column("model_b", sa.Text()),
    sa.Column("swapped", sa.Boolean()),
    sa.Column("claimed_by", sa.String(128)),
    sa.Column("claimed_at", sa.DateTime()),
    sa.Column("case_hash", sa.String(64)),
    sa.Column("replaced_at", sa.DateTime()),
    sa.Column("context", sa.Text()),
    sa.Column("tokens_reasoning", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("reasoning_effort", sa.String(16)),
)


JUDGMENT_SAMPLE = sa.Table(
    "judgment_sample", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("judgment_id", sa.Integer(), nullable=False),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("sample", sa.Integer(), nullable=False),
    sa.Column("judged_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("prompt_hash", sa.String(32)),
    sa.Column("cache_key", sa.String(64)),
    sa.Column("cached_from", sa.Integer()),
    sa.Column("output", sa.JSON(none_as_null=True)),
    sa.Column("derived", sa.JSON(none_as_null=True)),
    sa.Column("headline", sa.Float()),
    sa.Column("passed", sa.Boolean()),
    sa.Column("label", sa.Text()),
    sa.Column("tag", sa.Text()),
    sa.Column("raw_reply", sa.Text()),
    sa.Column("error", sa.Text()),
    sa.Column("tokens_in", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_out", sa.Integer(), nullable=False, default=0),
    sa.Column("latency_ms", sa.Integer(), nullable=False, default=0),
    sa.Column("attempts", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_cached", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("cost_usd", sa.Float()),
    sa.Column("tokens_reasoning", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("reasoning_effort", sa.String(16)),
)


JUDGMENT_TALLY = sa.Table(
    "judgment_tally", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("channel_key", sa.String(32), nullable=False),
    sa.Column("hour", sa.DateTime(), nullable=False),
    sa.Column("model_key", sa.Text(), nullable=False),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_version", sa.String(32), nullable=False),
    sa.Column("rubric_hash", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("tag_key", sa.Text(), nullable=False),
    sa.Column("replaced_hour", sa.DateTime(), nullable=False),
    sa.Column("rows", sa.Integer(), nullable=False, default=0),
    sa.Column("headlines", sa.Integer(), nullable=False, default=0),
    sa.Column("headline_total", sa.Float(), nullable=False, default=0.0),
    sa.Column("passed", sa.Integer(), nullable=False, default=0),
    sa.Column("reused", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("unsure", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("cost", sa.Float(), nullable=False, default=0.0, server_default=sa.text("0")),
    sa.Column("unpriced", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("votes", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("agreeing", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
)


BILLED_TALLY = sa.Table(
    "billed_tally", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("channel_key", sa.String(32), nullable=False),
    sa.Column("minute", sa.DateTime(), nullable=False),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("judgments", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_in", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_out", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_cached", sa.Integer(), nullable=False, default=0),
    sa.Column("cost", sa.Float(), nullable=False, default=0.0),
    sa.Column("unpriced", sa.Integer(), nullable=False, default=0),
    sa.Column("tokens_reasoning", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
)


RUN_BATCH = sa.Table(
    "run_batch", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("slots", sa.JSON(), nullable=False),
    sa.Column("input_file_id", sa.String(128)),
    sa.Column("batch_id", sa.String(128)),
    sa.Column("status", sa.String(32)),
    sa.Column("done", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("failed", sa.Integer(), nullable=False, default=0, server_default=sa.text("0")),
    sa.Column("error", sa.Text()),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("ended_at", sa.DateTime()),
)


FEEDBACK = sa.Table(
    "feedback", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("judgment_id", sa.Integer(), nullable=False),
    sa.Column("user_id", sa.String(32), nullable=False),
    sa.Column("agree", sa.Boolean(), nullable=False),
    sa.Column("case_key", sa.String(64)),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("updated_at", sa.DateTime(), nullable=False, default=utcnow),
)


LABEL = sa.Table(
    "label", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("judgment_id", sa.Integer(), nullable=False),
    sa.Column("team_id", sa.String(32)),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("user_id", sa.String(32), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("case_key", sa.String(64)),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_hash", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("values", sa.JSON(), nullable=False),
    sa.Column("passed", sa.Boolean()),
    sa.Column("pass_from", sa.String(16)),
    sa.Column("tag", sa.Text()),
    sa.Column("headline", sa.Float()),
    sa.Column("note", sa.Text()),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("updated_at", sa.DateTime(), nullable=False, default=utcnow),
)


REVIEW_CASE = sa.Table(
    "review_case", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("team_id", sa.String(32)),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("case_key", sa.String(64), nullable=False),
    sa.Column("judgment_id", sa.Integer(), nullable=False),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("reason", sa.String(16), nullable=False),
    sa.Column("random", sa.Boolean(), nullable=False, default=False),
    sa.Column("state", sa.String(16), nullable=False, default="open"),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("offered_to", sa.String(32)),
    sa.Column("offered_at", sa.DateTime()),
    sa.Column("skipped_by", sa.String(32)),
    sa.Column("skipped_at", sa.DateTime()),
    sa.Column("labeled_by", sa.String(32)),
    sa.Column("labeled_at", sa.DateTime()),
)


ENDPOINT_PAUSE = sa.Table(
    "endpoint_pause", CORE,
    sa.Column("endpoint", sa.String(255), primary_key=True),
    sa.Column("model", sa.String(128), primary_key=True),
    sa.Column("until", sa.DateTime(), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("told_by", sa.String(128), nullable=False),
    sa.Column("updated_at", sa.DateTime(), nullable=False, default=utcnow),
)


MODEL_LIST_READ = sa.Table(
    "model_list_read", CORE,
    sa.Column("endpoint", sa.String(255), primary_key=True),
    sa.Column("read_at", sa.DateTime(), nullable=False),
)


LISTED_SHUTDOWN = sa.Table(
    "listed_shutdown", CORE,
    sa.Column("endpoint", sa.String(255), primary_key=True),
    sa.Column("model", sa.String(128), primary_key=True),
    sa.Column("shutdown_date", sa.Date(), nullable=False),
    sa.Column("read_at", sa.DateTime(), nullable=False),
)


RUN_BACKGROUND = sa.Table(
    "run_background", CORE,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("run_id", sa.Integer(), nullable=False),
    sa.Column("judgment_id", sa.Integer(), nullable=False),
    sa.Column("judge_index", sa.Integer(), nullable=False),
    sa.Column("sample", sa.Integer(), nullable=False),
    sa.Column("completion_window", sa.String(8), nullable=False),
    sa.Column("boundary", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("response_id", sa.String(128)),
    sa.Column("status", sa.String(32)),
    sa.Column("error", sa.Text()),
    sa.Column("created_at", sa.DateTime(), nullable=False, default=utcnow),
    sa.Column("ended_at", sa.DateTime()),
)


@dataclass(kw_only=True, slots=True)
class Run:
    """A row of RUN, read: the fields of the table model bot.store.tables.history.RunTable."""

    id: int = None  # type: ignore[assignment]  # None until inserted
    created_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    owner: str | None = None
    status: str = RunState.PENDING
    stop_reason: str | None = None
    rubric_name: str
    rubric_version: str
    rubric_hash: str
    judge_model: str
    source: str = "cli"
    source_name: str | None = None
    columns: list[str] | None = None
    column_roles: dict[str, str] | None = None
    model_name: str | None = None
    fresh: bool = False
    total_rows: int = 0
    team_id: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None
    user_id: str | None = None
    results_path: str | None = None
    results_written_at: datetime | None = None
    samples: int = 1
    judges: list[dict[str, Any]] | None = None
    temperature: float | None = None
    estimate: dict[str, Any] | None = None
    cancel_requested_by: str | None = None

    @classmethod
    def read(cls, row: sa.Row[Any]) -> Run:
        """The record of a row read from RUN (every column selected)."""
        return cls(**row._mapping)


@dataclass(kw_only=True, slots=True)
class Judgment:
    """A row of JUDGMENT, read: the fields of the table model bot.store.tables.history.JudgmentTable."""

    id: int = None  # type: ignore[assignment]  # None until inserted
    run_id: int
    row_number: int | None = None
    created_at: datetime = field(default_factory=utcnow)
    judged_at: datetime | None = None
    status: str = RowState.PENDING
    team_id: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None
    user_id: str | None = None
    message_ts: str | None = None
    model_name: str | None = None
    rubric_name: str
    rubric_version: str
    rubric_hash: str
    judge_model: str
    prompt_hash: str | None = None
    cache_key: str | None = None
    cached_from: int | None = None
    question: str
    question_key: int | None = None
    reference: str
    answer: str
    cells: dict[str, Any] | None = None
    output: dict[str, Any] | None = None
    derived: dict[str, Any] | None = None
    headline: float | None = None
    passed: bool | None = None
    label: str | None = None
    tag: str | None = None
    flags: list[str] | None = None
    raw_reply: str | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    attempts: int = 0
    samples: int | None = None
    agreement: float | None = None
    spread: float | None = None
    unsure: bool | None = None
    tokens_cached: int = 0
    cost_usd: float | None = None
    answer_b: str | None = None
    model_b: str | None = None
    swapped: bool | None = None
    claimed_by: str | None = None
    claimed_at: datetime | None = None
    case_hash: str | None = None
    replaced_at: datetime | None = None
    context: str | None = None
    tokens_reasoning: int = 0
    reasoning_effort: str | None = None

    @classmethod
    def read(cls, row: sa.Row[Any]) -> Judgment:
        """The record of a row read from JUDGMENT (every column selected)."""
        return cls(**row._mapping)


@dataclass(kw_only=True, slots=True)
class JudgmentSample:
    """A row of JUDGMENT_SAMPLE, read: the fields of the table model bot.store.tables.history.JudgmentSampleTable."""

    id: int = None  # type: ignore[assignment]  # None until inserted
    judgment_id: int
    run_id: int
    judge_model: str
    sample: int
    judged_at: datetime = field(default_factory=utcnow)
    status: str
    prompt_hash: str | None = None
    cache_key: str | None = None
    cached_from: int | None = None
    output: dict[str, Any] | None = None
    derived: dict[str, Any] | None = None
    headline: float | None = None
    passed: bool | None = None
    label: str | None = None
    tag: str | None = None
    raw_reply: str | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    attempts: int = 0
    tokens_cached: int = 0
    cost_usd: float | None = None
    tokens_reasoning: int = 0
    reasoning_effort: str | None = None

    @classmethod
    def read(cls, row: sa.Row[Any]) -> JudgmentSample:
        """The record of a row read from JUDGMENT_SAMPLE (every column selected)."""
        return cls(**row._mapping)


@dataclass(kw_only=True, slots=True)
class RunBatch:
    """A row of RUN_BATCH, read: the fields of the table model bot.store.tables.history.RunBatchTable."""

    id: int = None  # type: ignore[assignment]  # None until inserted
    run_id: int
    state: str
    slots: list[list[int]]
    input_file_id: str | None = None
    batch_id: str | None = None
    status: str | None = None
    done: int = 0
    failed: int = 0
    error: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    ended_at: datetime | None = None

    @classmethod
    def read(cls, row: sa.Row[Any]) -> RunBatch:
        """The record of a row read from RUN_BATCH (every column selected)."""
        return cls(**row._mapping)


@dataclass(kw_only=True, slots=True)
class EndpointPause:
    """A row of ENDPOINT_PAUSE, read: the fields of the table model bot.store.tables.processes.EndpointPauseTable."""

    endpoint: str
    model: str
    until: datetime
    kind: str
    told_by: str
    updated_at: datetime = field(default_factory=utcnow)

    @classmethod
    def read(cls, row: sa.Row[Any]) -> EndpointPause:
        """The record of a row read from ENDPOINT_PAUSE (every column selected)."""
        return cls(**row._mapping)
