"""The schema versions of costs and billing: costs, estimates and budgets (10), batches (11), votes in the tallies (12),
the billed tally (13) and when a run's results were written (14). Each describes the schema as it was at its version."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.counts.billing import BILLED_COUNTS_13, BILLED_KEY, bill_judgments, bill_samples
from bot.store.counts.tallies import FIRST_KEY, add_judgments

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v10_costs_estimates_and_budgets(op: Operations) -> None:
    for table in ("judgment", "judgment_sample"):
        op.add_column(table, sa.Column("tokens_cached", sa.Integer, nullable=False, server_default=sa.text("0")))
        op.add_column(table, sa.Column("cost_usd", sa.Float))
    op.add_column("judgment_tally", sa.Column("cost", sa.Float, nullable=False, server_default=sa.text("0")))
    op.add_column("judgment_tally", sa.Column("unpriced", sa.Integer, nullable=False, server_default=sa.text("0")))
    op.add_column("run", sa.Column("estimate", sa.JSON))
    op.add_column("channel_setting", sa.Column("monthly_budget", sa.Float))
    op.add_column("channel_setting", sa.Column("confirm_above", sa.Float))
    # Judgments saved before have no recorded cost: counted again, those that used tokens are unpriced.
    counts = ("rows", "headlines", "headline_total", "passed", "reused", "unsure", "cost", "unpriced")
    tally = sa.table("judgment_tally", *[sa.column(name) for name in (*FIRST_KEY, *counts)])
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "channel_id", "model_name", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status", "tag",
        "headline", "passed", "cached_from", "unsure", "tokens_in", "tokens_out", "cost_usd")],
        sa.column("judged_at", sa.DateTime))
    op.execute(tally.delete())
    add_judgments(op.get_bind(), judgment, tally, sa.true())


def _v11_batches(op: Operations) -> None:
    op.create_table(
        "run_batch",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("slots", sa.JSON, nullable=False),
        sa.Column("input_file_id", sa.String(128)),
        sa.Column("batch_id", sa.String(128)),
        sa.Column("status", sa.String(32)),
        sa.Column("done", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("failed", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("error", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("ended_at", sa.DateTime),
    )
    op.create_index("ix_run_batch_run_id", "run_batch", ["run_id"])


def _v12_votes_in_tallies(op: Operations) -> None:
    for name in ("votes", "agreeing"):
        op.add_column("judgment_tally", sa.Column(name, sa.Integer, nullable=False, server_default=sa.text("0")))
    # Counted again from the judgments, now with the votes on them.
    counts = ("rows", "headlines", "headline_total", "passed", "reused", "unsure", "cost", "unpriced", "votes",
              "agreeing")
    tally = sa.table("judgment_tally", *[sa.column(name) for name in (*FIRST_KEY, *counts)])
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "id", "channel_id", "model_name", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status", "tag",
        "headline", "passed", "cached_from", "unsure", "tokens_in", "tokens_out", "cost_usd")],
        sa.column("judged_at", sa.DateTime))
    feedback = sa.table("feedback", sa.column("judgment_id"), sa.column("agree"))
    op.execute(tally.delete())
    add_judgments(op.get_bind(), judgment, tally, sa.true(), feedback=feedback)


def _v13_billed_tally(op: Operations) -> None:
    op.create_table(
        "billed_tally",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel_key", sa.String(32), nullable=False),
        sa.Column("minute", sa.DateTime, nullable=False),
        sa.Column("run_id", sa.Integer, nullable=False),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("judge_model", sa.String(128), nullable=False),
        sa.Column("judgments", sa.Integer, nullable=False),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        sa.Column("tokens_cached", sa.Integer, nullable=False),
        sa.Column("cost", sa.Float, nullable=False),
        sa.Column("unpriced", sa.Integer, nullable=False),
        sa.UniqueConstraint("channel_key", "minute", "run_id", "rubric_name", "judge_model", name="uq_billed_tally_key"),
    )
    op.create_index("ix_billed_tally_channel_minute", "billed_tally", ["channel_key", "minute"])
    op.create_index("ix_billed_tally_run_id", "billed_tally", ["run_id"])
    # What was billed before is what the saved judgments and samples hold (requests erased by a re-judging are gone).
    bind = op.get_bind()
    tally = sa.table("billed_tally", *[sa.column(name) for name in BILLED_KEY + BILLED_COUNTS_13])
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "id", "run_id", "channel_id", "rubric_name", "judge_model", "samples", "status", "tokens_in", "tokens_out",
        "tokens_cached", "cost_usd")], sa.column("judged_at", sa.DateTime))
    sample = sa.table("judgment_sample", *[sa.column(name) for name in (
        "id", "judgment_id", "judge_model", "tokens_in", "tokens_out", "tokens_cached", "cost_usd")],
        sa.column("judged_at", sa.DateTime))
    for statement in (bill_judgments(bind.dialect.name, judgment, tally, judgment.c.samples.is_(None),
                                     BILLED_COUNTS_13),
                      bill_samples(bind.dialect.name, sample, judgment, tally, sa.true(), BILLED_COUNTS_13)):
        bind.execute(statement)


def _v14_results_written(op: Operations) -> None:
    op.add_column("run", sa.Column("results_written_at", sa.DateTime))
    # Runs that ended before: their results file was written when they finished.
    run = sa.table("run", sa.column("status"), sa.column("results_path"), sa.column("finished_at", sa.DateTime),
                   sa.column("results_written_at", sa.DateTime))
    op.execute(run.update().where(run.c.status == "done", run.c.results_path.is_not(None))
               .values(results_written_at=run.c.finished_at))
