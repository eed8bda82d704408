"""The schema version that counts each case once (28): every judgment given the case it is counted under and the
time a later judgment of that case replaced it, and the hourly tally counted again, keyed by that time too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.records import JUDGED, RowState
from bot.store.counts.case_keys import case_key
from bot.store.counts.counting import Link, counted_case, replacements
from bot.store.counts.tallies import add_judgments

if TYPE_CHECKING:  # Alembic is imported only when a migration runs (see bot.store.migrations.upgrade.migrate)
    from alembic.operations import Operations

BATCH = 10_000
CASE_TEXTS = ("id", "team_id", "channel_id", "rubric_name", "question", "reference", "answer", "answer_b",
              "model_name", "model_b", "swapped")
TALLY_COUNTS = ("reused", "unsure", "cost", "unpriced", "votes", "agreeing")  # the counts with a server default


def _v28_cases_counted_once(op: Operations) -> None:
    conn = op.get_bind()
    op.add_column("judgment", sa.Column("case_hash", sa.String(64)))
    op.add_column("judgment", sa.Column("replaced_at", sa.DateTime))
    judgment = sa.table("judgment", *[sa.column(name) for name in (*CASE_TEXTS, "status", "case_hash")],
                        sa.column("judged_at", sa.DateTime), sa.column("replaced_at", sa.DateTime))
    _fill_cases(conn, judgment)
    op.create_index("ix_judgment_case", "judgment", ["case_hash", "judged_at"])
    fill_replacements(conn, judgment)
    op.drop_index("ix_judgment_channel_judged", "judgment")
    op.create_index("ix_judgment_channel_judged", "judgment",
                    ["channel_id", "judged_at", "status", "question_key", "headline", "replaced_at"])
    op.create_index("ix_judgment_channel_replaced", "judgment", ["channel_id", "replaced_at"])
    # The tally's key gains a column: made anew and counted again from the judgments.
    op.drop_table("judgment_tally")
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
        sa.Column("replaced_hour", sa.DateTime, nullable=False),
        sa.Column("rows", sa.Integer, nullable=False),
        sa.Column("headlines", sa.Integer, nullable=False),
        sa.Column("headline_total", sa.Float, nullable=False),
        sa.Column("passed", sa.Integer, nullable=False),
        *[sa.Column(name, sa.Float if name == "cost" else sa.Integer, nullable=False, server_default=sa.text("0"))
          for name in TALLY_COUNTS],
        sa.UniqueConstraint("channel_key", "hour", "model_key", "rubric_name", "rubric_version", "rubric_hash",
                            "judge_model", "status", "tag_key", "replaced_hour", name="uq_judgment_tally_key"),
    )
    counted = sa.table("judgment", *[sa.column(name) for name in (
        "id", "channel_id", "model_name", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status", "tag",
        "headline", "passed", "cached_from", "unsure", "tokens_in", "tokens_out", "cost_usd")],
        sa.column("judged_at", sa.DateTime), sa.column("replaced_at", sa.DateTime))
    feedback = sa.table("feedback", sa.column("judgment_id"), sa.column("agree"))
    add_judgments(conn, counted, tally, sa.true(), feedback=feedback)


def _fill_cases(conn: Connection, judgment: Any) -> None:
    """Give every judgment the case it is counted under, a batch at a time (a judgment whose texts were removed keeps
    its case in its question: case_key reads it there)."""
    c = judgment.c
    fill = judgment.update().where(c.id == sa.bindparam("row_id")).values(case_hash=sa.bindparam("case"))
    after = 0
    while True:
        rows = conn.execute(sa.select(*(c[name] for name in CASE_TEXTS)).where(c.id > after).order_by(c.id)
                            .limit(BATCH)).all()
        if not rows:
            return
        conn.execute(fill, [{"row_id": row.id, "case": counted_case(
            case_key(row.team_id, row.channel_id, row.rubric_name, row.question, row.reference, row.answer,
                     row.answer_b), row.model_name, row.model_b, row.swapped)} for row in rows])
        after = rows[-1].id


def fill_replacements(conn: Connection, judgment: Any) -> None:
    """Chain the judged rows of every case, reading them in case order a batch at a time (a case cut by a batch's
    end is finished with the next); rows written straight into the table (an upgrade, a benchmark) are chained so."""
    c = judgment.c
    fill = judgment.update().where(c.id == sa.bindparam("row_id")).values(replaced_at=sa.bindparam("at"))
    judged = (c.status.in_(JUDGED), c.judged_at.is_not(None))
    order = (c.case_hash, c.judged_at, c.id)
    last: tuple[Any, ...] | None = None
    waiting: list[Link] = []
    waiting_case: str | None = None
    while True:
        after = [] if last is None else [sa.tuple_(*order) > sa.tuple_(*(sa.literal(value) for value in last))]
        rows = conn.execute(sa.select(c.id, c.case_hash, c.judged_at, c.status).where(*judged, *after)
                            .order_by(*order).limit(BATCH)).all()
        found: list[dict[str, Any]] = []
        for row in rows:
            if row.case_hash != waiting_case:
                found += _replaced(waiting)
                waiting, waiting_case = [], row.case_hash
            waiting.append(Link(row.id, row.judged_at, row.status == RowState.SCORED))
        if not rows:
            found += _replaced(waiting)
        if found:
            conn.execute(fill, found)
        if not rows:
            return
        last = (rows[-1].case_hash, rows[-1].judged_at, rows[-1].id)


def _replaced(links: list[Link]) -> list[dict[str, Any]]:
    """The updates that chain one case's judged rows: only those replaced."""
    return [{"row_id": id_, "at": at} for id_, at in replacements(links).items() if at is not None]
