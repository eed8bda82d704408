"""Runs, judgments, their samples, batch parts and endpoint pauses as the records read from their Core tables
(bot.store.tables.core): plain dataclasses with the table models' fields and defaults, what every face is handed.

Written from the table models by `python -m tests.support.core_twins`; do not edit by hand: a test fails when it is
stale. The schema itself is the models' and the migrations'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.records import RowState, RunState
from bot.store.clock import utcnow


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

    @classmethod
    def of(cls, values: Sequence[Any]) -> Run:
        """The record of every column of RUN, in order (part of a wider row)."""
        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))


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

    @classmethod
    def of(cls, values: Sequence[Any]) -> Judgment:
        """The record of every column of JUDGMENT, in order (part of a wider row)."""
        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))


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

    @classmethod
    def of(cls, values: Sequence[Any]) -> JudgmentSample:
        """The record of every column of JUDGMENT_SAMPLE, in order (part of a wider row)."""
        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))


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

    @classmethod
    def of(cls, values: Sequence[Any]) -> RunBatch:
        """The record of every column of RUN_BATCH, in order (part of a wider row)."""
        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))


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

    @classmethod
    def of(cls, values: Sequence[Any]) -> EndpointPause:
        """The record of every column of ENDPOINT_PAUSE, in order (part of a wider row)."""
        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))
