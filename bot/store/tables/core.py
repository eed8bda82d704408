"""The tables opening the history and the reading commands read (runs, judgments, their hourly tallies, votes, labels
and review cases) as SQLAlchemy Core tables, without the ORM's classes: the table models cost a reading command about
a third of its start-up."""

from __future__ import annotations

import sqlalchemy as sa

# Only the columns read through these tables, typed as the models in bot.store.tables.history declare them (a test
# holds each to its model's column); the schema itself is the models' and the migrations'.
CORE = sa.MetaData()

RUN = sa.Table(
    "run", CORE,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("finished_at", sa.DateTime),
    sa.Column("heartbeat_at", sa.DateTime),
    sa.Column("owner", sa.String(128)),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("stop_reason", sa.Text),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_version", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("source_name", sa.String(512)),
    sa.Column("model_name", sa.Text),
    sa.Column("total_rows", sa.Integer, nullable=False),
)

JUDGMENT = sa.Table(
    "judgment", CORE,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("run_id", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("judged_at", sa.DateTime),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("user_id", sa.String(32)),
    sa.Column("model_name", sa.Text),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("rubric_version", sa.String(32), nullable=False),
    sa.Column("judge_model", sa.String(128), nullable=False),
    sa.Column("rubric_hash", sa.String(32), nullable=False),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("cached_from", sa.Integer),
    sa.Column("unsure", sa.Boolean),
    sa.Column("cost_usd", sa.Float),
    sa.Column("tokens_in", sa.Integer, nullable=False),
    sa.Column("tokens_out", sa.Integer, nullable=False),
    sa.Column("headline", sa.Float),
    sa.Column("passed", sa.Boolean),
    sa.Column("label", sa.Text),
    sa.Column("tag", sa.Text),
    sa.Column("replaced_at", sa.DateTime),
)

REVIEW_CASE = sa.Table(
    "review_case", CORE,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("team_id", sa.String(32)),
    sa.Column("channel_id", sa.String(32)),
    sa.Column("judgment_id", sa.Integer, nullable=False),
    sa.Column("rubric_name", sa.String(64), nullable=False),
    sa.Column("reason", sa.String(16), nullable=False),
    sa.Column("random", sa.Boolean, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

JUDGMENT_TALLY = sa.Table(
    "judgment_tally", CORE,
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
    sa.Column("replaced_hour", sa.DateTime, nullable=False),
    *(sa.Column(name, sa.Integer, nullable=False) for name in ("rows", "headlines", "passed", "reused", "unsure")),
    sa.Column("headline_total", sa.Float, nullable=False),
    sa.Column("cost", sa.Float, nullable=False),
    *(sa.Column(name, sa.Integer, nullable=False) for name in ("unpriced", "votes", "agreeing")),
)

FEEDBACK = sa.Table(
    "feedback", CORE,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("judgment_id", sa.Integer, nullable=False),
    sa.Column("user_id", sa.String(32), nullable=False),
    sa.Column("agree", sa.Boolean, nullable=False),
    sa.Column("case_key", sa.String(64)),
    sa.Column("updated_at", sa.DateTime, nullable=False),
)

LABEL = sa.Table(
    "label", CORE,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("judgment_id", sa.Integer, nullable=False),
    sa.Column("user_id", sa.String(32), nullable=False),
    sa.Column("case_key", sa.String(64)),
    sa.Column("passed", sa.Boolean),
)
