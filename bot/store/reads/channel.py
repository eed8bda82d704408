"""Reading the history back: latest judgments and per-model figures, always scoped to one channel or one person."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import col, select

from bot.records import JUDGED, RowState, checks_of
from bot.store.clock import utcnow
from bot.store.counts.billing import billed
from bot.store.counts.counting import standing
from bot.store.counts.tallies import channel_key, counted
from bot.store.tables.history import BilledTally, Feedback, Judgment, JudgmentTally, table_of

if TYPE_CHECKING:
    from bot.store.database import Store


def _in_channel(channel_id: str | None) -> Any:
    """Rows of one Slack channel; with None, rows judged outside Slack (in a terminal)."""
    return col(Judgment.channel_id).is_(None) if channel_id is None else col(Judgment.channel_id) == channel_id


def recent_in_channel(store: Store, *, channel_id: str | None, limit: int = 10) -> list[Judgment]:
    """The newest judgments made in one channel (None: in a terminal), newest first: each case once, its latest
    verdict (bot.store.counts.counting)."""
    with store.session() as session:
        statement = (
            select(Judgment)
            .where(_in_channel(channel_id), col(Judgment.status).in_(JUDGED), standing(col(Judgment.replaced_at), None))
            .order_by(col(Judgment.id).desc())
            .limit(limit)
        )
        return list(session.exec(statement))


def recent_by_user(store: Store, *, team_id: str, user_id: str, limit: int = 10) -> list[Judgment]:
    """The newest judgments one person asked for, in any channel of their workspace, newest first: each case once,
    while its latest verdict is theirs."""
    with store.session() as session:
        statement = (
            select(Judgment)
            .where(Judgment.team_id == team_id, Judgment.user_id == user_id, col(Judgment.status).in_(JUDGED),
                   standing(col(Judgment.replaced_at), None))
            .order_by(col(Judgment.id).desc())
            .limit(limit)
        )
        return list(session.exec(statement))


def newest_judge(store: Store, *, rubric_name: str, channel_id: str | None, team_id: str | None,
                 until: datetime | None = None) -> tuple[str, str, str] | None:
    """(judge model, rubric hash, rubric version) of the rubric's newest scored judgment in the channel (None: the
    terminal's), of the workspace when given, before `until`; None when it has none."""
    where = [col(Judgment.status) == RowState.SCORED, col(Judgment.rubric_name) == rubric_name, _in_channel(channel_id)]
    if team_id is not None:
        where.append(col(Judgment.team_id) == team_id)
    if until is not None:
        where.append(col(Judgment.judged_at) < until)
    statement = (sa.select(col(Judgment.judge_model), col(Judgment.rubric_hash), col(Judgment.rubric_version))
                 .where(*where).order_by(col(Judgment.judged_at).desc(), col(Judgment.id).desc()).limit(1))
    with store.session() as session:
        found = session.execute(statement).first()
    return None if found is None else (found[0], found[1], found[2])


def in_channel(channel_id: str | None, since: datetime | None = None, until: datetime | None = None) -> list[Any]:
    """Conditions for the judged rows of one channel (None: the terminal's), judged in [since, until)."""
    scope = [_in_channel(channel_id), col(Judgment.status).in_(JUDGED)]
    if since is not None:
        scope.append(col(Judgment.judged_at) >= since)
    if until is not None:
        scope.append(col(Judgment.judged_at) < until)
    return scope


def counted_in_channel(channel_id: str | None, since: datetime | None = None, until: datetime | None = None,
                       cuts: tuple[datetime, ...] = ()) -> Any:
    """The judged rows of one channel in [since, until), as tally counts exact on either side of `cuts`."""
    return counted(table_of(Judgment), table_of(JudgmentTally), table_of(Feedback), channel_id, since, until, cuts)


@dataclass(frozen=True)
class Spend:
    """What one channel's judges were billed over a time, per rubric and judge: USD at the prices recorded with each
    judgment, and the judgments of a judge whose price is unknown. A row judged again counts every time it was."""

    by_judge: list[tuple[str, str, float, int]]  # (rubric, judge model, USD, judgments of unknown price), dearest first

    @property
    def usd(self) -> float:
        """USD over every rubric and judge."""
        return sum(usd for _, _, usd, _ in self.by_judge)

    @property
    def unpriced(self) -> int:
        """Judgments whose judge's price is unknown."""
        return sum(judgments for _, _, _, judgments in self.by_judge)


def spend(store: Store, *, channel_id: str | None, since: datetime, until: datetime | None = None) -> Spend:
    """What the judges of one channel's judgments (None: the terminal's) were billed in [since, until), each member
    of a jury on its own, from the billed tally (minutes: any timezone's midnight is a bound)."""
    t = table_of(BilledTally).c
    where = [t.channel_key == channel_key(channel_id), t.minute >= since, *([t.minute < until] if until else [])]
    statement = (sa.select(t.rubric_name, t.judge_model, func.sum(t.cost), func.sum(t.unpriced)).where(*where)
                 .group_by(t.rubric_name, t.judge_model))
    with store.engine.connect() as conn:
        found = [(rubric, judge, float(usd or 0.0), int(unpriced or 0))
                 for rubric, judge, usd, unpriced in conn.execute(statement)]
    found = [entry for entry in found if entry[2] > 0 or entry[3] > 0]
    return Spend(sorted(found, key=lambda entry: (-entry[2], -entry[3], entry[0], entry[1])))


@dataclass(frozen=True)
class Billed:
    """What a run's judges were billed, every request counted, a row judged again included."""

    judgments: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost: float = 0.0  # USD of the judgments whose judge's price is known
    unpriced: int = 0  # judgments that used tokens of a judge whose price is unknown
    tokens_reasoning: int = 0  # of tokens_out, those the judges spent reasoning


def run_billed(store: Store, run_id: int) -> Billed:
    """What run `run_id`'s judges were billed."""
    with store.engine.connect() as conn:
        found = billed(conn, table_of(BilledTally), table_of(BilledTally).c.run_id == run_id)
    return Billed(*(value or 0 for value in found))


def identical_rows(store: Store, run_id: int) -> tuple[int, int]:
    """The rows of run `run_id` that reused the verdict of an identical row of the same run (texts sent once), and
    how many verdicts they reused: the rest of its reused rows came from earlier runs."""
    rows, source = table_of(Judgment), table_of(Judgment).alias("source")
    statement = (sa.select(func.count(), func.count(sa.distinct(rows.c.cached_from)))
                 .select_from(rows.join(source, sa.and_(source.c.id == rows.c.cached_from,
                                                        source.c.run_id == rows.c.run_id)))
                 .where(rows.c.run_id == run_id))
    with store.engine.connect() as conn:
        reused, judged = conn.execute(statement).one()
    return int(reused), int(judged)


def month_start(moment: datetime) -> datetime:
    """The first instant of the calendar month (UTC) `moment` is in: budgets count from there."""
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def month_spent(store: Store, channel_id: str | None) -> float:
    """USD a channel (None: the terminal) spent this month, as its monthly budget counts it: its runs, and the checks,
    alignments, comparisons and pairwise runs it asked for."""
    since = month_start(utcnow())
    return (spend(store, channel_id=channel_id, since=since).usd
            + spend(store, channel_id=checks_of(channel_id), since=since).usd)


def recent_reply_tokens(store: Store, rubric_name: str, limit: int) -> tuple[float, int] | None:
    """(mean tokens out of one judgment, its reasoning left out, how many) over the rubric's `limit` newest replies
    that were billed; None when the history holds none."""
    per_judgment = ((col(Judgment.tokens_out) - col(Judgment.tokens_reasoning))
                    / func.coalesce(col(Judgment.samples), 1))
    newest = (sa.select(per_judgment.label("tokens"))
              .where(col(Judgment.rubric_name) == rubric_name, col(Judgment.status) == RowState.SCORED,
                     col(Judgment.cached_from).is_(None), col(Judgment.tokens_out) > 0)
              .order_by(col(Judgment.id).desc()).limit(limit).subquery())
    with store.session() as session:
        mean, count = session.execute(sa.select(func.avg(newest.c.tokens), func.count())).one()
    return (float(mean), int(count)) if count else None


def recent_reasoning_tokens(store: Store, rubric_name: str, judge_model: str, limit: int) -> tuple[float, int] | None:
    """(mean reasoning tokens of one judgment, how many) over the `limit` newest replies judge `judge_model` gave
    under the rubric alone (not in a jury, not sampled); None when the history holds none."""
    newest = (sa.select(col(Judgment.tokens_reasoning).label("tokens"))
              .where(col(Judgment.rubric_name) == rubric_name, col(Judgment.judge_model) == judge_model,
                     col(Judgment.status) == RowState.SCORED, col(Judgment.cached_from).is_(None),
                     col(Judgment.samples).is_(None), col(Judgment.tokens_out) > 0)
              .order_by(col(Judgment.id).desc()).limit(limit).subquery())
    with store.session() as session:
        mean, count = session.execute(sa.select(func.avg(newest.c.tokens), func.count())).one()
    return (float(mean), int(count)) if count else None
