"""The schema versions of the trust loop: labels keyed by case (15), the review queue (16), channels' own judges (17)
and channels' revisions of rubrics (18). Each describes the schema as it was at its version."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.store.counts.case_keys import case_key

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations


def _v15_labels_by_case(op: Operations) -> None:
    for name in ("label", "feedback"):
        op.add_column(name, sa.Column("case_key", sa.String(64)))
        op.create_index(f"ix_{name}_case_user", name, ["case_key", "user_id"])
    op.add_column("label", sa.Column("pass_from", sa.String(16)))
    bind = op.get_bind()
    judgment = sa.table("judgment", *[sa.column(name) for name in (
        "id", "team_id", "channel_id", "rubric_name", "question", "reference", "answer")], sa.column("cells", sa.JSON))
    label = sa.table("label", *[sa.column(name) for name in (
        "id", "judgment_id", "user_id", "source", "case_key", "pass_from", "passed")], sa.column("values", sa.JSON),
        sa.column("updated_at", sa.DateTime))
    feedback = sa.table("feedback", sa.column("id"), sa.column("judgment_id"), sa.column("case_key"))
    _fill_case_keys(bind, feedback, judgment)
    kept: dict[tuple[str, str], int] = {}  # a person's latest label of each case
    for row in bind.execute(sa.select(label.c.id, label.c.user_id, label.c.case_key, label.c.source, label.c.passed,
                                      label.c["values"], judgment.c.cells, *_case_columns(judgment))
                            .join(judgment, judgment.c.id == label.c.judgment_id)
                            .order_by(label.c.updated_at, label.c.id)).all():
        key = case_key(*row[-6:])
        if (earlier := kept.get((key, row.user_id))) is not None:
            bind.execute(label.delete().where(label.c.id == earlier))
        kept[key, row.user_id] = row.id
        bind.execute(label.update().where(label.c.id == row.id).values(case_key=key, **_pass_from(row)))


def _case_columns(judgment: sa.TableClause) -> tuple[sa.ColumnClause[Any], ...]:
    return (judgment.c.team_id, judgment.c.channel_id, judgment.c.rubric_name, judgment.c.question,
            judgment.c.reference, judgment.c.answer)


def _fill_case_keys(bind: Connection, feedback: sa.TableClause, judgment: sa.TableClause) -> None:
    """Give every vote the case of its judgment."""
    rows = bind.execute(sa.select(feedback.c.id, *_case_columns(judgment))
                        .join(judgment, judgment.c.id == feedback.c.judgment_id)).all()
    fill = feedback.update().where(feedback.c.id == sa.bindparam("row_id")).values(case_key=sa.bindparam("key"))
    if rows:
        bind.execute(fill, [{"row_id": row[0], "key": case_key(*row[1:])} for row in rows])


def _pass_from(row: Any) -> dict[str, Any]:
    """Where an earlier label's pass/fail came from. A correction's form holds every value the pass rule reads; a
    file's row gave it in a human_pass cell, or it was made whole from the judge's reply and is no label's at all."""
    if row.passed is None:
        return {"pass_from": None}
    if row.source != "file":
        return {"pass_from": "rule"}
    spelled = {re.sub(r"[\s_-]+", "_", str(header).strip().lower()): cell for header, cell in (row.cells or {}).items()}
    if str(spelled.get("human_pass") or "").strip():
        return {"pass_from": "given"}
    return {"pass_from": None, "passed": None}


def _v16_review_queue(op: Operations) -> None:
    op.create_table(
        "review_case",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32)),
        sa.Column("case_key", sa.String(64), nullable=False),
        sa.Column("judgment_id", sa.Integer, sa.ForeignKey("judgment.id"), nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("run.id"), nullable=False),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("random", sa.Boolean, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("offered_to", sa.String(32)),
        sa.Column("offered_at", sa.DateTime),
        sa.Column("skipped_by", sa.String(32)),
        sa.Column("skipped_at", sa.DateTime),
        sa.Column("labeled_by", sa.String(32)),
        sa.Column("labeled_at", sa.DateTime),
        sa.UniqueConstraint("case_key", name="uq_review_case_case"),
    )
    op.create_index("ix_review_case_channel_state", "review_case", ["channel_id", "state", "created_at"])
    op.create_table(
        "review_nudge",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32)),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("user_id", sa.String(32), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(128)),
        sa.Column("claimed_at", sa.DateTime, nullable=False),
        sa.Column("posted_at", sa.DateTime),
        sa.Column("message_ts", sa.String(32)),
        sa.UniqueConstraint("channel_id", "user_id", "day", name="uq_review_nudge_channel_user_day"),
    )
    for column in (sa.Column("reviewers", sa.JSON),
                   sa.Column("review_blind", sa.Boolean, nullable=False, server_default=sa.false()),
                   sa.Column("nudge_hour", sa.Integer), sa.Column("nudge_minute", sa.Integer),
                   sa.Column("nudge_timezone", sa.String(64)), sa.Column("nudge_set_at", sa.DateTime)):
        op.add_column("channel_setting", column)


def _v17_channel_judges(op: Operations) -> None:
    op.create_table(
        "channel_judge",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("judge_model", sa.String(128)),
        sa.Column("previous", sa.String(128)),
        sa.Column("set_by", sa.String(32), nullable=False),
        sa.Column("set_at", sa.DateTime, nullable=False),
        sa.Column("note", sa.Text),
    )
    op.create_index("ix_channel_judge_channel_set", "channel_judge", ["team_id", "channel_id", "set_at"])


def _v18_rubric_revisions(op: Operations) -> None:
    op.create_table(
        "rubric_revision",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("channel_id", sa.String(32), nullable=False),
        sa.Column("rubric_name", sa.String(64), nullable=False),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("content_hash", sa.String(32), nullable=False),
        sa.Column("based_on", sa.String(32), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("figures", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("proposed_by", sa.String(32), nullable=False),
        sa.Column("proposed_at", sa.DateTime, nullable=False),
        sa.Column("decided_by", sa.String(32)),
        sa.Column("decided_at", sa.DateTime),
        sa.Column("message_ts", sa.String(32)),
    )
    op.create_index("ix_rubric_revision_channel", "rubric_revision", ["team_id", "channel_id", "rubric_name", "state"])
    op.create_index("ix_rubric_revision_hash", "rubric_revision", ["content_hash"])
