"""The history's tables that the judging path and the reading commands use, as SQLAlchemy Core tables: no ORM class
is loaded to write or read them (the table models cost a command about a third of its start-up; the records read
from them: bot.store.tables.as_read).

Written from the table models by `python -m tests.support.core_twins`; do not edit by hand: a test fails when it is
stale. The schema itself is the models' and the migrations'."""

from __future__ import annotations

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
