"""The history tables: runs, judgments with their samples and hourly tallies, what the judges were billed and people's
votes (what chat keeps: bot.store.tables.chat; the review queue, its nudges, channels' own judges and revisions of
rubrics: bot.store.tables.trust)."""

from __future__ import annotations

from typing import Any, cast

from pydantic import NaiveDatetime
from sqlalchemy import JSON, BigInteger, Column, Index, Table, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from bot.records import RowState, RunState
from bot.store.clock import utcnow


def table_of(model: type[SQLModel]) -> Table:
    """The Core table a table model is mapped to."""
    return cast(Table, model.__table__)  # type: ignore[attr-defined]  # SQLModel sets __table__ at class creation


class RunTable(SQLModel, table=True):
    """One batch of judgments: a CSV file, or a single triple from a command (the table model; a run read from the
    history is a bot.store.tables.as_read.Run)."""

    __tablename__ = "run"

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    started_at: NaiveDatetime | None = None
    finished_at: NaiveDatetime | None = None
    heartbeat_at: NaiveDatetime | None = None
    owner: str | None = Field(default=None, max_length=128, description="host:pid of the process judging it")
    status: str = Field(default=RunState.PENDING, max_length=16, description="loading, pending, running, paused, done, "
                        "cancelled or failed")
    stop_reason: str | None = Field(default=None, sa_column=Column(Text))
    rubric_name: str = Field(max_length=64)
    rubric_version: str = Field(max_length=32)
    rubric_hash: str = Field(max_length=32)
    judge_model: str = Field(max_length=128)
    source: str = Field(default="cli", max_length=16)
    source_name: str | None = Field(default=None, max_length=512)
    columns: list[str] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    column_roles: dict[str, str] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)),
                                                description="the column of each role: {role: header}")
    model_name: str | None = Field(default=None, sa_column=Column(Text))
    fresh: bool = False
    total_rows: int = 0
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str | None = Field(default=None, max_length=32, index=True)
    thread_ts: str | None = Field(default=None, max_length=32)
    user_id: str | None = Field(default=None, max_length=32)
    results_path: str | None = Field(default=None, sa_column=Column(Text),
                                     description="where the terminal writes its results CSV (absolute)")
    results_written_at: NaiveDatetime | None = Field(default=None, description="when its results file was last "
                                                     "written whole: a run killed while writing it is unfinished")
    samples: int = Field(default=1, sa_column_kwargs={"server_default": text("1")},
                         description="how many times each judge judges each row")
    judges: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)),
                                                description="the jury: [{model, base_url, key_env}], or None for "
                                                "the configured judge")
    temperature: float | None = Field(default=None, description="the judges' sampling temperature, when sampled")
    estimate: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)),
                                            description="the cost estimated before it started (bot.estimate.Estimate)")
    cancel_requested_by: str | None = Field(default=None, max_length=32, description="who asked another process to "
                                            "cancel it: the one holding it stops")


class JudgmentTable(SQLModel, table=True):
    """One row of a run: the triple, and once judged, the verdict with everything needed to reproduce it (the table
    model; a judgment read from the history is a bot.store.tables.as_read.Judgment)."""

    __tablename__ = "judgment"

    __table_args__ = (
        Index("ix_judgment_run_status", "run_id", "status", "id"),
        Index("ix_judgment_cache", "cache_key", "status"),
        Index("ix_judgment_channel_judged", "channel_id", "judged_at", "status", "question_key", "headline", "replaced_at"),
        Index("ix_judgment_case", "case_hash", "judged_at"),
        Index("ix_judgment_channel_replaced", "channel_id", "replaced_at"),
        Index("ix_judgment_team_user_created", "team_id", "user_id", "created_at"),
        Index("ix_judgment_channel_message", "channel_id", "message_ts"),
        Index("ix_judgment_run_browse", "run_id", "model_name", "status", "passed", "tag", "headline"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    run_id: int = Field(foreign_key="run.id")
    row_number: int | None = None
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    judged_at: NaiveDatetime | None = None
    status: str = Field(default=RowState.PENDING, max_length=16, description="pending, scored, invalid, error or malformed")
    team_id: str | None = Field(default=None, max_length=32)
    channel_id: str | None = Field(default=None, max_length=32)
    thread_ts: str | None = Field(default=None, max_length=32)
    user_id: str | None = Field(default=None, max_length=32)
    message_ts: str | None = Field(default=None, max_length=32)
    model_name: str | None = Field(default=None, sa_column=Column(Text, index=True))
    rubric_name: str = Field(max_length=64)
    rubric_version: str = Field(max_length=32)
    rubric_hash: str = Field(max_length=32)
    judge_model: str = Field(max_length=128)
    prompt_hash: str | None = Field(default=None, max_length=32)
    cache_key: str | None = Field(default=None, max_length=64)
    cached_from: int | None = None
    question: str = Field(sa_column=Column(Text, nullable=False))
    question_key: int | None = Field(default=None, sa_column=Column(BigInteger),
                                     description="question_key(model_name, rubric_name, question)")
    reference: str = Field(sa_column=Column(Text, nullable=False))
    answer: str = Field(sa_column=Column(Text, nullable=False))
    cells: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)),
                                         description="the row's input cells by header; its context cell kept as the "
                                         "way to write it back from `context` (bot.csvfiles.passages.input_cells)")
    output: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    derived: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    headline: float | None = None
    passed: bool | None = None
    label: str | None = Field(default=None, sa_column=Column(Text))
    tag: str | None = Field(default=None, sa_column=Column(Text))
    flags: list[str] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    raw_reply: str | None = Field(default=None, sa_column=Column(Text))
    error: str | None = Field(default=None, sa_column=Column(Text))
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    attempts: int = 0
    samples: int | None = Field(default=None, description="samples behind the verdict, when more than one judgment")
    agreement: float | None = Field(default=None, description="share of scored samples agreeing with the verdict")
    spread: float | None = Field(default=None, description="highest less lowest headline of the scored samples")
    unsure: bool | None = Field(default=None, description="samples split on pass/fail or tag, or spread too wide")
    tokens_cached: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                               description="input tokens the provider served from its prompt cache")
    cost_usd: float | None = Field(default=None, description="what its tokens cost at the prices then in force; None "
                                   "when the judge's price is unknown")
    answer_b: str | None = Field(default=None, sa_column=Column(Text),
                                 description="a pair's second answer (`answer` is its first), for a pairwise judge")
    model_b: str | None = Field(default=None, sa_column=Column(Text), description="the model of a pair's answer_b")
    swapped: bool | None = Field(default=None, description="a pair shown to the judge in the order B, A")
    claimed_by: str | None = Field(default=None, max_length=128, description="the process judging the pending row")
    claimed_at: NaiveDatetime | None = Field(default=None, description="when that process last showed life")
    case_hash: str | None = Field(default=None, max_length=64, description="the case it is counted under "
                                  "(bot.store.counts.counting.counted_case)")
    replaced_at: NaiveDatetime | None = Field(default=None, description="when a later judgment of its case took its "
                                              "place in the figures (bot.store.counts.counting); None while it stands")
    context: str | None = Field(default=None, sa_column=Column(Text),
                                description="the passages retrieved for the case, as a JSON list of strings "
                                "(bot.records.context_text); None for a case without context")
    tokens_reasoning: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                                  description="output tokens the judge spent reasoning (part of tokens_out)")
    reasoning_effort: str | None = Field(default=None, max_length=16, description="the reasoning effort its judge was "
                                         "asked for (or the model's own when none was sent); None when not known")


class JudgmentSampleTable(SQLModel, table=True):
    """One judge's judgment of one row, one of several (samples of one judge, or a jury's members)."""

    __tablename__ = "judgment_sample"
    __table_args__ = (
        UniqueConstraint("judgment_id", "judge_model", "sample", name="uq_judgment_sample_slot"),
        Index("ix_judgment_sample_cache", "cache_key", "status"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    judgment_id: int = Field(foreign_key="judgment.id")
    run_id: int = Field(foreign_key="run.id", index=True)
    judge_model: str = Field(max_length=128)
    sample: int = Field(description="1 for a judge's first sample, 2 for its second...")
    judged_at: NaiveDatetime = Field(default_factory=utcnow)
    status: str = Field(max_length=16, description="scored, invalid or error")
    prompt_hash: str | None = Field(default=None, max_length=32)
    cache_key: str | None = Field(default=None, max_length=64)
    cached_from: int | None = Field(default=None, description="the sample this one's verdict was reused from")
    output: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    derived: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON(none_as_null=True)))
    headline: float | None = None
    passed: bool | None = None
    label: str | None = Field(default=None, sa_column=Column(Text))
    tag: str | None = Field(default=None, sa_column=Column(Text))
    raw_reply: str | None = Field(default=None, sa_column=Column(Text))
    error: str | None = Field(default=None, sa_column=Column(Text))
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    attempts: int = 0
    tokens_cached: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    cost_usd: float | None = None
    tokens_reasoning: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    reasoning_effort: str | None = Field(default=None, max_length=16)


class BilledTally(SQLModel, table=True):
    """What the judges were asked for, counted as each reply that cost something is saved: per channel, minute, run,
    rubric and judge. Never counted out: a row judged again adds its new requests to its old ones, so a run's cost,
    a month's spend and a budget count every billed request."""

    __tablename__ = "billed_tally"
    __table_args__ = (
        UniqueConstraint("channel_key", "minute", "run_id", "rubric_name", "judge_model", name="uq_billed_tally_key"),
        Index("ix_billed_tally_channel_minute", "channel_key", "minute"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    channel_key: str = Field(max_length=32, description='the channel, or "" for judgments made in a terminal')
    minute: NaiveDatetime = Field(description="the minute (UTC) the replies were saved in")
    run_id: int = Field(index=True)
    rubric_name: str = Field(max_length=64)
    judge_model: str = Field(max_length=128, description="the judge asked (one member of a jury, not the jury)")
    judgments: int = Field(default=0, description="judgments that used tokens: a row's, or one sample of it")
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost: float = Field(default=0.0, description="USD of the judgments whose judge's price is known")
    unpriced: int = Field(default=0, description="judgments that used tokens of a judge whose price is unknown")
    tokens_reasoning: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                                  description="of tokens_out, those the judges spent reasoning")


class RunBatchTable(SQLModel, table=True):
    """One part of a run sent through the Batch API: saved before its file is uploaded, then its file and batch ids
    as soon as they exist, so a stop never loses a batch nor sends its rows twice."""

    __tablename__ = "run_batch"

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    run_id: int = Field(foreign_key="run.id", index=True)
    state: str = Field(max_length=16, description="uploading (saved, maybe not sent), sent, or ended")
    slots: list[list[int]] = Field(sa_column=Column(JSON, nullable=False),
                                   description="what it asks for: [row id, judge index, sample number] each")
    input_file_id: str | None = Field(default=None, max_length=128)
    batch_id: str | None = Field(default=None, max_length=128)
    status: str | None = Field(default=None, max_length=32, description="the provider's: in_progress, completed...")
    done: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                      description="requests the provider answered (from its request counts)")
    failed: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    error: str | None = Field(default=None, sa_column=Column(Text), description="why rows of it were not judged")
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    ended_at: NaiveDatetime | None = None


class JudgmentTally(SQLModel, table=True):
    """How many rows of one channel were judged in one hour, with one model, rubric version, judge, status and tag,
    and replaced by a later judgment of their cases in one hour (or not yet).

    Kept in the transaction that saves a verdict (counted out when rows are judged again or replaced, and changed
    when a person votes on one), so figures over weeks add up a few of these instead of reading every judgment.
    """

    __tablename__ = "judgment_tally"
    __table_args__ = (
        UniqueConstraint("channel_key", "hour", "model_key", "rubric_name", "rubric_version", "rubric_hash",
                         "judge_model", "status", "tag_key", "replaced_hour", name="uq_judgment_tally_key"),
    )

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    channel_key: str = Field(max_length=32, description='the channel, or "" for judgments made in a terminal')
    hour: NaiveDatetime = Field(description="the hour (UTC) the rows were judged in")
    model_key: str = Field(sa_column=Column(Text, nullable=False), description='the model under test, or ""')
    rubric_name: str = Field(max_length=64)
    rubric_version: str = Field(max_length=32)
    rubric_hash: str = Field(max_length=32)
    judge_model: str = Field(max_length=128)
    status: str = Field(max_length=16, description="scored, invalid or error")
    tag_key: str = Field(sa_column=Column(Text, nullable=False), description='the tag, or ""')
    replaced_hour: NaiveDatetime = Field(description="the hour (UTC) a later judgment of their cases replaced the rows "
                                         "in, or bot.store.counts.tallies.STANDS while they stand")
    rows: int = 0
    headlines: int = Field(default=0, description="rows with a headline score")
    headline_total: float = 0.0
    passed: int = 0
    reused: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                        description="rows whose verdict was reused from an earlier identical judgment (not billed)")
    unsure: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                        description="rows whose samples split on pass/fail or tag, or spread too wide")
    cost: float = Field(default=0.0, sa_column_kwargs={"server_default": text("0")},
                        description="USD the rows cost, over those whose judge's price is known")
    unpriced: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                          description="rows that used tokens of a judge whose price is unknown")
    votes: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                       description="people's votes on the rows (one per person and row; a row judged again keeps them)")
    agreeing: int = Field(default=0, sa_column_kwargs={"server_default": text("0")},
                          description="the votes that agree with the judge")


class Feedback(SQLModel, table=True):
    """A person's vote on a judgment; voting again replaces the vote."""

    __table_args__ = (UniqueConstraint("judgment_id", "user_id", name="uq_feedback_judgment_user"),
                      Index("ix_feedback_case_user", "case_key", "user_id"))

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    judgment_id: int = Field(foreign_key="judgment.id")
    user_id: str = Field(max_length=32)
    agree: bool
    case_key: str | None = Field(default=None, max_length=64, description="the judgment's case (bot.store.counts.case_keys)")
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)
