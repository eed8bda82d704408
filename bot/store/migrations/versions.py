"""Versioned schema: an ordered list of migrations, each applied once and recorded in `schema_version`.

Each migration writes its DDL with Alembic's operations, which speak SQLite and PostgreSQL alike.
A migration never imports the current models: it describes the schema as it was at its version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.store.counts.tallies import FIRST_KEY, add_judgments, question_key
from bot.store.migrations.background import _v34_background_responses
from bot.store.migrations.browsing import _v35_run_rows_index
from bot.store.migrations.cases import _v28_cases_counted_once
from bot.store.migrations.claims import _v22_row_claims, _v23_endpoint_pauses, _v25_cancel_requests
from bot.store.migrations.contexts import _v30_retrieved_context, _v36_passages_kept_once
from bot.store.migrations.costs import (
    _v10_costs_estimates_and_budgets,
    _v11_batches,
    _v12_votes_in_tallies,
    _v13_billed_tally,
    _v14_results_written,
)
from bot.store.migrations.efforts import _v33_reasoning_effort
from bot.store.migrations.listed_shutdowns import _v32_listed_shutdowns
from bot.store.migrations.oauth import _v24_slack_installations, _v26_workspace_orgs
from bot.store.migrations.pairs import _v19_pairs
from bot.store.migrations.reasoning import _v31_reasoning_tokens
from bot.store.migrations.replicas import _v21_deliveries, _v27_workflow_steps, _v29_rejudges
from bot.store.migrations.streams import _v20_progress_streams
from bot.store.migrations.trust import (
    _v15_labels_by_case,
    _v16_review_queue,
    _v17_channel_judges,
    _v18_rubric_revisions,
)

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v1_runs_and_judgments(op: Operations) -> None:
    op.create_table(
        "run",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("heartbeat_at", sa.DateTime),
        sa.Column("owner", sa.String(128)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("stop_reason", sa.Text),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("rubric_version", sa.String(32), nullable=False),
        sa.Column("rubric_hash", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("source_name", sa.String(512)),
        sa.Column("columns", sa.JSON),
        sa.Column("model_name", sa.Text),
        sa.Column("fresh", sa.Boolean, nullable=False),
        sa.Column("total_rows", sa.Integer, nullable=False),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32)),
        sa.Column("thread_ts", sa.String(32)),
        sa.Column("user_id", sa.String(32)),
    )
    op.create_index("ix_run_channel_id", "run", ["channel_id"])
    op.create_table(
        "judgment",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id"), nullable=False),
        sa.Column("row_number", sa.Integer),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("judged_at", sa.DateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32)),
        sa.Column("thread_ts", sa.String(32)),
        sa.Column("user_id", sa.String(32)),
        sa.Column("message_ts", sa.String(32)),
        sa.Column("model_name", sa.Text),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("rubric_version", sa.String(32), nullable=False),
        sa.Column("rubric_hash", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("prompt_hash", sa.String(32)),
        sa.Column("cache_key", sa.String(64)),
        sa.Column("cached_from", sa.Integer),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("reference", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("cells", sa.JSON),
        sa.Column("output", sa.JSON),
        sa.Column("derived", sa.JSON),
        sa.Column("headline", sa.Float),
        sa.Column("passed", sa.Boolean),
        sa.Column("label", sa.Text),
        sa.Column("tag", sa.Text),
        sa.Column("raw_reply", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        sa.Column("latency_ms", sa.Integer, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
    )
    op.create_index("ix_judgment_run_status", "judgment", ["run_id", "status", "id"])
    op.create_index("ix_judgment_cache", "judgment", ["cache_key", "status"])
    op.create_index("ix_judgment_channel_created", "judgment", ["channel_id", "created_at"])
    op.create_index("ix_judgment_model_name", "judgment", ["model_name"])


def _v2_feedback_and_flags(op: Operations) -> None:
    op.add_column("judgment", sa.Column("flags", sa.JSON))
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), nullable=False),
        sa.Column("user_id", sa.String(32), nullable=False),
        sa.Column("agree", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("judgment_id", "user_id", name="uq_feedback_judgment_user"),
    )


def _v3_user_settings_and_history_indexes(op: Operations) -> None:
    op.create_table(
        "user_setting",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("user_id", sa.String(32), nullable=False),
        sa.Column("model_name", sa.Text),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("team_id", "user_id", name="uq_user_setting_team_user"),
    )
    op.create_index("ix_judgment_team_user_created", "judgment", ["team_id", "user_id", "created_at"])


def _v4_channel_settings_and_shared_files(op: Operations) -> None:
    op.create_table(
        "channel_setting",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("default_rubric", sa.String(64)),
        sa.Column("updated_by", sa.String(32)),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("team_id", "channel_id", name="uq_channel_setting_team_channel"),
    )
    op.create_table(
        "shared_file",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("thread_ts", sa.String(32), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=False),
        sa.Column("file_id", sa.String(32), nullable=False),
        sa.Column("event_id", sa.String(64)),
        sa.Column("user_id", sa.String(32)),
        sa.Column("file_name", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64)),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(128)),
        sa.Column("note", sa.Text),
        sa.Column("rubric_name", sa.String(64)),
        sa.Column("model_name", sa.Text),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id")),
        sa.Column("question_ts", sa.String(32)),
        sa.Column("progress_ts", sa.String(32)),
        sa.Column("summary_ts", sa.String(32)),
        sa.Column("results_posted", sa.Boolean, nullable=False),
        sa.UniqueConstraint("team_id", "channel_id", "message_ts", "file_id", name="uq_shared_file_message_file"),
    )
    op.create_index("ix_shared_file_thread", "shared_file", ["channel_id", "thread_ts"])
    op.create_index("ix_shared_file_state", "shared_file", ["state"])
    op.create_index("ix_judgment_channel_message", "judgment", ["channel_id", "message_ts"])


def _v5_digests(op: Operations) -> None:
    op.create_table(
        "digest_subscription",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("weekday", sa.Integer, nullable=False),
        sa.Column("hour", sa.Integer, nullable=False),
        sa.Column("minute", sa.Integer, nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("updated_by", sa.String(32)),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("team_id", "channel_id", name="uq_digest_subscription_team_channel"),
    )
    op.create_table(
        "digest_post",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("week", sa.String(10), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(128)),
        sa.Column("claimed_at", sa.DateTime, nullable=False),
        sa.Column("posted_at", sa.DateTime),
        sa.Column("message_ts", sa.String(32)),
        sa.UniqueConstraint("channel_id", "week", name="uq_digest_post_channel_week"),
    )


def _v6_judgment_tallies(op: Operations) -> None:
    tally = op.create_table(
        "judgment_tally",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_key", sa.String(32), nullable=False),
        sa.Column("hour", sa.DateTime, nullable=False),
        sa.Column("model_key", sa.Text, nullable=False),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("rubric_version", sa.String(32), nullable=False),
        sa.Column("rubric_hash", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("tag_key", sa.Text, nullable=False),
        sa.Column("rows", sa.Integer, nullable=False),
        sa.Column("headlines", sa.Integer, nullable=False),
        sa.Column("headline_total", sa.Float, nullable=False),
        sa.Column("passed", sa.Integer, nullable=False),
        sa.UniqueConstraint("channel_key", "hour", "model_key", "rubric_name", "rubric_version", "rubric_hash",
                            "judge_model", "status", "tag_key", name="uq_judgment_tally_key"),
    )
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "channel_id", "model_name", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status", "tag",
        "headline", "passed")], sa.column("judged_at", sa.DateTime))
    add_judgments(op.get_bind(), judgment, tally, sa.true())
    op.add_column("judgment", sa.Column("question_key", sa.BigInteger))
    _fill_question_keys(op.get_bind())
    op.drop_index("ix_judgment_channel_created", "judgment")
    op.create_index("ix_judgment_channel_judged", "judgment",
                    ["channel_id", "judged_at", "status", "question_key", "headline"])


def _fill_question_keys(conn: Connection, batch: int = 10_000) -> None:
    """Give every existing judgment its question key, a batch at a time."""
    judgment = sa.table("judgment", sa.column("id"), sa.column("model_name"), sa.column("rubric_name"),
                        sa.column("question"), sa.column("question_key"))
    fill = judgment.update().where(judgment.c.id == sa.bindparam("row_id")).values(question_key=sa.bindparam("key"))
    after = 0
    while True:
        rows = conn.execute(sa.select(judgment.c.id, judgment.c.model_name, judgment.c.rubric_name, judgment.c.question)
                            .where(judgment.c.id > after).order_by(judgment.c.id).limit(batch)).all()
        if not rows:
            return
        conn.execute(fill, [{"row_id": row.id, "key": question_key(row.model_name, row.rubric_name, row.question)}
                            for row in rows])
        after = rows[-1].id


def _v7_results_path_and_reuses(op: Operations) -> None:
    op.add_column("run", sa.Column("results_path", sa.Text))
    op.add_column("judgment_tally", sa.Column("reused", sa.Integer, nullable=False, server_default=sa.text("0")))
    # Count again from the judgments, now telling a verdict reused from the cache from a new one.
    counts = ("rows", "headlines", "headline_total", "passed", "reused")  # the tally's counts at this version
    tally = sa.table("judgment_tally", *[sa.column(name) for name in (*FIRST_KEY, *counts)])
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "channel_id", "model_name", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status", "tag",
        "headline", "passed", "cached_from")], sa.column("judged_at", sa.DateTime))
    op.execute(tally.delete())
    add_judgments(op.get_bind(), judgment, tally, sa.true())


def _v8_run_column_roles(op: Operations) -> None:
    op.add_column("run", sa.Column("column_roles", sa.JSON))


def _v9_samples_juries_and_labels(op: Operations) -> None:
    op.add_column("run", sa.Column("samples", sa.Integer, nullable=False, server_default=sa.text("1")))
    op.add_column("run", sa.Column("judges", sa.JSON))
    op.add_column("run", sa.Column("temperature", sa.Float))
    for name, kind in (("samples", sa.Integer), ("agreement", sa.Float), ("spread", sa.Float), ("unsure", sa.Boolean)):
        op.add_column("judgment", sa.Column(name, kind))
    op.add_column("judgment_tally", sa.Column("unsure", sa.Integer, nullable=False, server_default=sa.text("0")))
    op.add_column("channel_setting", sa.Column("default_samples", sa.Integer))
    op.create_table(
        "judgment_sample",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id"), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("sample", sa.Integer, nullable=False),
        sa.Column("judged_at", sa.DateTime, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("prompt_hash", sa.String(32)),
        sa.Column("cache_key", sa.String(64)),
        sa.Column("cached_from", sa.Integer),
        sa.Column("output", sa.JSON),
        sa.Column("derived", sa.JSON),
        sa.Column("headline", sa.Float),
        sa.Column("passed", sa.Boolean),
        sa.Column("label", sa.Text),
        sa.Column("tag", sa.Text),
        sa.Column("raw_reply", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        sa.Column("latency_ms", sa.Integer, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.UniqueConstraint("judgment_id", "judge_model", "sample", name="uq_judgment_sample_slot"),
    )
    op.create_index("ix_judgment_sample_run_id", "judgment_sample", ["run_id"])
    op.create_index("ix_judgment_sample_cache", "judgment_sample", ["cache_key", "status"])
    op.create_table(
        "label",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), nullable=False),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32)),
        sa.Column("user_id", sa.String(32), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("rubric_hash", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("values", sa.JSON, nullable=False),
        sa.Column("passed", sa.Boolean),
        sa.Column("tag", sa.Text),
        sa.Column("headline", sa.Float),
        sa.Column("note", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("judgment_id", "user_id", name="uq_label_judgment_user"),
    )
    op.create_index("ix_label_rubric_judge", "label", ["rubric_name", "judge_model"])
    op.create_index("ix_label_channel", "label", ["channel_id", "rubric_name"])


MIGRATIONS: list[Callable[[Operations], None]] = [
    _v1_runs_and_judgments, _v2_feedback_and_flags, _v3_user_settings_and_history_indexes,
    _v4_channel_settings_and_shared_files, _v5_digests, _v6_judgment_tallies, _v7_results_path_and_reuses,
    _v8_run_column_roles, _v9_samples_juries_and_labels, _v10_costs_estimates_and_budgets,
    _v11_batches, _v12_votes_in_tallies, _v13_billed_tally,
    _v14_results_written, _v15_labels_by_case, _v16_review_queue, _v17_channel_judges, _v18_rubric_revisions,
    _v19_pairs, _v20_progress_streams, _v21_deliveries, _v22_row_claims,
    _v23_endpoint_pauses, _v24_slack_installations, _v25_cancel_requests,
    _v26_workspace_orgs, _v27_workflow_steps, _v28_cases_counted_once, _v29_rejudges, _v30_retrieved_context,
    _v31_reasoning_tokens, _v32_listed_shutdowns, _v33_reasoning_effort, _v34_background_responses,
    _v35_run_rows_index, _v36_passages_kept_once,
]
