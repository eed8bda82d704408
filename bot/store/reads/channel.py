"""Reading the history back: latest judgments and per-model figures, always scoped to one channel or one person."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import func

from bot.records import JUDGED, RowState, checks_of
from bot.store.clock import utcnow
from bot.store.counts.billing import billed
from bot.store.counts.counting import standing
from bot.store.counts.tallies import channel_key, counted
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import BILLED_TALLY, FEEDBACK, JUDGMENT, JUDGMENT_TALLY

if TYPE_CHECKING:
    from bot.store.database import Store


def _in_channel(judgment: sa.Table, channel_id: str | None) -> sa.ColumnElement[bool]:
    """Rows of one Slack channel; with None, rows judged outside Slack (in a terminal)."""
    return judgment.c.channel_id.is_(None) if channel_id is None else judgment.c.channel_id == channel_id


def recent_in_channel(store: Store, *, channel_id: str | None, limit: int = 10) -> list[Judgment]:
    """The newest judgments made in one channel (None: in a terminal), newest first: each case once, its latest
    verdict (bot.store.counts.counting)."""
    j = JUDGMENT.c
    return _judgments(store, sa.select(JUDGMENT).where(_in_channel(JUDGMENT, channel_id), j.status.in_(JUDGED),
                                                       standing(j.replaced_at, None)).order_by(j.id.desc()).limit(limit))


def recent_by_user(store: Store, *, team_id: str, user_id: str, limit: int = 10) -> list[Judgment]:
    """The newest judgments one person asked for, in any channel of their workspace, newest first: each case once,
    while its latest verdict is theirs."""
    j = JUDGMENT.c
    return _judgments(store, sa.select(JUDGMENT).where(j.team_id == team_id, j.user_id == user_id, j.status.in_(JUDGED),
                                                       standing(j.replaced_at, None)).order_by(j.id.desc()).limit(limit))


def _judgments(store: Store, statement: sa.Select[Any]) -> list[Judgment]:
    with store.engine.connect() as conn:
        return [Judgment.read(row) for row in conn.execute(statement)]


def newest_judge(store: Store, *, rubric_name: str, channel_id: str | None, team_id: str | None,
                 until: datetime | None = None) -> tuple[str, str, str] | None:
    """(judge model, rubric hash, rubric version) of the rubric's newest scored judgment in the channel (None: the
    terminal's), of the workspace when given, before `until`; None when it has none."""
    j = JUDGMENT.c
    where = [j.status == RowState.SCORED, j.rubric_name == rubric_name, _in_channel(JUDGMENT, channel_id)]
    if team_id is not None:
        where.append(j.team_id == team_id)
    if until is not None:
        where.append(j.judged_at < until)
    statement = (sa.select(j.judge_model, j.rubric_hash, j.rubric_version)
                 .where(*where).order_by(j.judged_at.desc(), j.id.desc()).limit(1))
    with store.engine.connect() as conn:
        found = conn.execute(statement).first()
    return None if found is None else (found[0], found[1], found[2])


def in_channel(channel_id: str | None, since: datetime | None = None, until: datetime | None = None) -> list[Any]:
    """Conditions for the judged rows of one channel (None: the terminal's), judged in [since, until), over the
    judgments' Core table (queries over the table model's own table would list `judgment` twice in their FROM)."""
    judgment = JUDGMENT
    scope = [_in_channel(judgment, channel_id), judgment.c.status.in_(JUDGED)]
    if since is not None:
        scope.append(judgment.c.judged_at >= since)
    if until is not None:
        scope.append(judgment.c.judged_at < until)
    return scope


def counted_in_channel(channel_id: str | None, since: datetime | None = None, until: datetime | None = None,
                       cuts: tuple[datetime, ...] = ()) -> Any:
    """The judged rows of one channel in [since, until), as tally counts exact on either side of `cuts`."""
    return counted(JUDGMENT, JUDGMENT_TALLY, FEEDBACK, channel_id, since, until, cuts)


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
    t = BILLED_TALLY.c
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
        found = billed(conn, BILLED_TALLY, BILLED_TALLY.c.run_id == run_id)
    return Billed(*(value or 0 for value in found))


def identical_rows(store: Store, run_id: int) -> tuple[int, int]:
    """The rows of run `run_id` that reused the verdict of an identical row of the same run (texts sent once), and
    how many verdicts they reused: the rest of its reused rows came from earlier runs."""
    rows, source = JUDGMENT, JUDGMENT.alias("source")
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
    j = JUDGMENT.c
    per_judgment = (j.tokens_out - j.tokens_reasoning) / func.coalesce(j.samples, 1)
    newest = (sa.select(per_judgment.label("tokens"))
              .where(j.rubric_name == rubric_name, j.status == RowState.SCORED, j.cached_from.is_(None),
                     j.tokens_out > 0)
              .order_by(j.id.desc()).limit(limit).subquery())
    return _mean_of(store, newest)


def recent_reasoning_tokens(store: Store, rubric_name: str, judge_model: str, limit: int) -> tuple[float, int] | None:
    """(mean reasoning tokens of one judgment, how many) over the `limit` newest replies judge `judge_model` gave
    under the rubric alone (not in a jury, not sampled); None when the history holds none."""
    j = JUDGMENT.c
    newest = (sa.select(j.tokens_reasoning.label("tokens"))
              .where(j.rubric_name == rubric_name, j.judge_model == judge_model, j.status == RowState.SCORED,
                     j.cached_from.is_(None), j.samples.is_(None), j.tokens_out > 0)
              .order_by(j.id.desc()).limit(limit).subquery())
    return _mean_of(store, newest)


def _mean_of(store: Store, newest: sa.Subquery) -> tuple[float, int] | None:
    """(mean of the `tokens` of these rows, how many), or None when there are none."""
    with store.engine.connect() as conn:
        mean, count = conn.execute(sa.select(func.avg(newest.c.tokens), func.count()).select_from(newest)).one()
    return (float(mean), int(count)) if count else None
