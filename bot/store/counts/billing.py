"""What the judges were billed: every judgment whose requests used tokens, counted per channel, minute, run, rubric
and judge as it is saved, and never counted out; a run's cost, a month's spend and a budget read it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, TableClause, and_, case, func, select
from sqlalchemy.engine import Connection

from bot.store.connections import conflict_insert

BILLED_KEY = ("channel_key", "minute", "run_id", "rubric_name", "judge_model")
BILLED_COUNTS_13 = ("judgments", "tokens_in", "tokens_out", "tokens_cached", "cost", "unpriced")  # as of schema 13
BILLED_COUNTS = (*BILLED_COUNTS_13, "tokens_reasoning")


def minute_of(moment: datetime) -> datetime:
    """The start of the minute `moment` is in."""
    return moment.replace(second=0, microsecond=0)


def _minute_sql(column: Any, dialect: str) -> Any:
    if dialect == "postgresql":
        return func.date_trunc("minute", column, type_=DateTime)
    # SQLite keeps datetimes as text in SQLAlchemy's format, which must be matched to compare equal.
    return func.strftime("%Y-%m-%d %H:%M:00.000000", column, type_=DateTime)


def _counts(billed: TableClause, counts: tuple[str, ...]) -> list[Any]:
    """The `counts` of a group of judgments (rows, or samples) that used tokens."""
    c = billed.c
    every = {"judgments": func.count(), "tokens_in": func.sum(c.tokens_in), "tokens_out": func.sum(c.tokens_out),
             "tokens_cached": func.sum(c.tokens_cached), "cost": func.coalesce(func.sum(c.cost_usd), 0.0),
             "unpriced": func.sum(case((c.cost_usd.is_(None), 1), else_=0))}
    if "tokens_reasoning" in counts:
        every["tokens_reasoning"] = func.sum(c.tokens_reasoning)
    return [every[name].label(name) for name in counts]


def _upsert(dialect: str, tally: TableClause, rows: Any, counts: tuple[str, ...]) -> Any:
    statement = conflict_insert(dialect)(tally).from_select([*BILLED_KEY, *counts], rows)
    return statement.on_conflict_do_update(
        index_elements=[tally.c[name] for name in BILLED_KEY],
        set_={name: tally.c[name] + statement.excluded[name] for name in counts},
    )


def bill_judgments(dialect: str, judgment: TableClause, tally: TableClause, where: Any,
                   counts: tuple[str, ...] = BILLED_COUNTS) -> Any:
    """The statement that counts into `tally` what the saved verdicts of the rows matching `where` were billed: rows
    judged by one judge asked once (a jury's or samples' row is billed through its samples, as each arrives)."""
    c = judgment.c
    keys = [func.coalesce(c.channel_id, "").label("channel_key"), _minute_sql(c.judged_at, dialect).label("minute"),
            c.run_id, c.rubric_name, c.judge_model]
    rows = (select(*keys, *_counts(judgment, counts))
            .where(where, c.samples.is_(None), c.judged_at.is_not(None), (c.tokens_in + c.tokens_out) > 0)
            .group_by(*keys))
    return _upsert(dialect, tally, rows, counts)


def bill_samples(dialect: str, sample: TableClause, judgment: TableClause, tally: TableClause, where: Any,
                 counts: tuple[str, ...] = BILLED_COUNTS) -> Any:
    """The statement that counts into `tally` what the saved samples matching `where` were billed (`counts`: those
    of the schema it is run on)."""
    s, j = sample.c, judgment.c
    keys = [func.coalesce(j.channel_id, "").label("channel_key"), _minute_sql(s.judged_at, dialect).label("minute"),
            j.run_id, j.rubric_name, s.judge_model]
    rows = (select(*keys, *_counts(sample, counts)).select_from(sample.join(judgment, and_(j.id == s.judgment_id)))
            .where(where, (s.tokens_in + s.tokens_out) > 0).group_by(*keys))
    return _upsert(dialect, tally, rows, counts)


def billed(conn: Connection, tally: TableClause, *where: Any) -> Any:
    """The counts of the tally's rows matching `where`, summed (None where there are none)."""
    return conn.execute(select(*[func.sum(tally.c[name]).label(name) for name in BILLED_COUNTS]).where(*where)).one()
