"""The queries of a channel's week: its lowest scores, the questions whose scores dropped against the week before,
what judged in each hour (to see the judge change), and each week's mean headline from the hourly tallies."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, literal, select, union_all
from sqlalchemy.engine import Row

from bot.records import RowState
from bot.store.counts.counting import standing
from bot.store.counts.tallies import HOUR, hour_of
from bot.store.reads.channel import counted_in_channel, in_channel
from bot.store.reads.stats import model_of
from bot.store.tables.core import JUDGMENT

if TYPE_CHECKING:
    from bot.store.database import Store

# What a digest shows of a judgment worth a look, and what it needs to link to it.
EXAMPLE_COLUMNS = (JUDGMENT.c.id, JUDGMENT.c.model_name, JUDGMENT.c.rubric_name, JUDGMENT.c.headline,
                   JUDGMENT.c.question, JUDGMENT.c.channel_id, JUDGMENT.c.message_ts, JUDGMENT.c.thread_ts,
                   JUDGMENT.c.row_number)


def lowest_scored(store: Store, *, channel_id: str | None, since: datetime, until: datetime,
                  limit: int) -> list[Row[Any]]:
    """The `limit` cases of the channel evaluated in [since, until) whose latest scored verdict there has the lowest
    headline (EXAMPLE_COLUMNS), each case once."""
    order = (JUDGMENT.c.headline, JUDGMENT.c.id.desc())
    # The lowest found in the index of the channel's judgments first: only they are read whole.
    lowest = (select(JUDGMENT.c.id).where(*in_channel(channel_id, since, until), JUDGMENT.c.status == RowState.SCORED,
                                             standing(JUDGMENT.c.replaced_at, until))
              .order_by(*order).limit(limit))
    with store.session() as session:
        return list(session.execute(select(*EXAMPLE_COLUMNS).where(JUDGMENT.c.id.in_(lowest)).order_by(*order)))


def score_drops(store: Store, *, channel_id: str | None, since: datetime, cut: datetime, until: datetime,
                points: float, limit: int) -> list[tuple[Row[Any], float, float]]:
    """Questions whose mean headline in [cut, until) is `points` or more below their mean in [since, cut), biggest
    drop first: each as (its lowest judgment from `cut` on, in EXAMPLE_COLUMNS, the mean before, the mean after).
    Each side counts each case (an answer to the question) once, with its latest scored verdict on that side."""
    replaced = JUDGMENT.c.replaced_at
    earlier = (JUDGMENT.c.judged_at < cut) & standing(replaced, cut)
    later = (JUDGMENT.c.judged_at >= cut) & standing(replaced, until)
    # The means are named in a subquery: repeated in HAVING and ORDER BY, each with its own parameters, SQLite would
    # not know them for the same aggregates and would work each out again.
    means = (select(JUDGMENT.c.question_key.label("key"), func.avg(case((earlier, JUDGMENT.c.headline))).label("before"),
                    func.avg(case((later, JUDGMENT.c.headline))).label("now"))
             .where(*in_channel(channel_id, since, until),
                    JUDGMENT.c.status == RowState.SCORED, JUDGMENT.c.question_key.is_not(None))
             .group_by(JUDGMENT.c.question_key).subquery("means"))
    drop = means.c.before - means.c.now
    with store.session() as session:
        drops = session.execute(select(means.c.key, means.c.before, means.c.now).where(drop >= points)
                                .order_by(drop.desc(), means.c.key).limit(limit)).all()
        examples = session.execute(  # each question's lowest standing judgment from the cut on, to link to
            select(*EXAMPLE_COLUMNS, JUDGMENT.c.question_key)
            .where(*in_channel(channel_id, cut, until), JUDGMENT.c.status == RowState.SCORED,
                   standing(replaced, until), JUDGMENT.c.question_key.in_([key for key, _, _ in drops]))
            .order_by(JUDGMENT.c.headline.desc(), JUDGMENT.c.id)).all()
    lowest = {row.question_key: row for row in examples}
    return [(lowest[key], float(before), float(now)) for key, before, now in drops]


def rubric_texts_used(store: Store, *, channel_id: str | None, since: datetime, until: datetime,
                      cut: datetime) -> list[tuple[datetime, str, str, str]]:
    """(hour, rubric, version, hash) of every rubric text the channel's judgments in [since, until) used, by the hour
    of the tallies (the hour that holds `cut` split at it)."""
    rows = counted_in_channel(channel_id, since, until, cuts=(cut,))
    with store.session() as session:
        return [(at, rubric, version, digest) for at, rubric, version, digest in session.execute(
            select(rows.c.at, rows.c.rubric_name, rows.c.rubric_version, rows.c.rubric_hash).distinct())]


def judges_used(store: Store, *, channel_id: str | None, since: datetime, until: datetime,
                cut: datetime) -> list[tuple[datetime, str]]:
    """(hour, judge model) of every judge of the channel's judgments in [since, until), as `rubric_texts_used`."""
    rows = counted_in_channel(channel_id, since, until, cuts=(cut,))
    with store.session() as session:
        return [(at, judge) for at, judge in session.execute(select(rows.c.at, rows.c.judge_model).distinct())]


def first_judged(store: Store, *, channel_id: str | None, hour: datetime, rubric_name: str | None = None,
                 rubric_version: str | None = None, rubric_hash: str | None = None,
                 judge_model: str | None = None) -> datetime:
    """When the first judgment of the channel matching what is given was judged within the hour the tallies place it
    in (the hour itself when none is found)."""
    matching = [column == value for column, value in ((JUDGMENT.c.rubric_name, rubric_name),
                                                      (JUDGMENT.c.rubric_version, rubric_version),
                                                      (JUDGMENT.c.rubric_hash, rubric_hash),
                                                      (JUDGMENT.c.judge_model, judge_model)) if value is not None]
    with store.session() as session:
        first = session.execute(select(func.min(JUDGMENT.c.judged_at))
                                .where(*in_channel(channel_id, hour, hour_of(hour) + HOUR), *matching)).scalar()
    return first or hour


def weekly_means(store: Store, *, channel_id: str | None,
                 weeks: Sequence[tuple[datetime, datetime]]) -> dict[tuple[str | None, str], list[float | None]]:
    """Mean headline per model under test and rubric in each of `weeks` ([start, end) each, in order), over the cases
    evaluated in the week, each with its latest verdict there, added up from the hourly tallies: a week a query, in
    one statement (each reads its week's tallies by their index and keeps those still standing at its end)."""
    parts = []
    for index, (start, end) in enumerate(weeks):
        rows = counted_in_channel(channel_id, start, end)
        parts.append(select(literal(index).label("week"), rows.c.model_key, rows.c.rubric_name,
                            func.sum(rows.c.headline_total).label("total"), func.sum(rows.c.headlines).label("headlines"))
                     .where(rows.c.status == RowState.SCORED, rows.c.replaced >= end)
                     .group_by(rows.c.model_key, rows.c.rubric_name))
    trend: dict[tuple[str | None, str], list[float | None]] = {}
    with store.session() as session:
        for index, key, rubric, total, headlines in session.execute(union_all(*parts)):
            mean = float(total) / int(headlines) if headlines else None
            trend.setdefault((model_of(key), rubric), [None] * len(weeks))[index] = mean
    return trend
