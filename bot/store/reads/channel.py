"""Reading the history back: latest judgments and per-model figures, always scoped to one channel or one person."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import case, func
from sqlmodel import col, select

from bot.figures import ratio
from bot.records import JUDGED, RowState, checks_of
from bot.store.clock import utcnow
from bot.store.counts.billing import billed
from bot.store.counts.counting import standing
from bot.store.counts.tallies import KEY_LENGTH, STANDS, channel_key, counted
from bot.store.reads.label_counts import Said, said_by_model
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


@dataclass
class Figures:
    """How one model under test did on one rubric in one channel over a period, each case once (bot.store.counts.counting):
    every figure is over the cases evaluated in the period, with the latest verdict each got there."""

    model_name: str | None
    rubric_name: str
    cases: int = 0  # cases evaluated in the period
    scored: int = 0  # of them, cases whose verdict scored
    mean_headline: float | None = None
    passed: int = 0
    errors: int = 0  # cases whose only verdicts were a judge's failures (an error, or a reply that broke the rules)
    tags: dict[str, int] = field(default_factory=dict)
    votes: int = 0
    agreeing: int = 0
    rejudged: int = 0  # judgments of these cases a later one replaced in the period (re-reads, re-runs): not counted
    unsure: int = 0  # scored cases whose several judgments (samples, a jury) disagreed
    said: list[Said] = field(default_factory=list)  # every label and standing vote on its scored rows, per case
    judges: dict[str, int] = field(default_factory=dict)  # cases by the judge model of their verdict
    versions: dict[str, int] = field(default_factory=dict)  # cases by the rubric text of their verdict ("2 (3f2a1c9)")

    @property
    def pass_rate(self) -> float | None:
        """Share of scored cases that passed."""
        return ratio(self.passed, self.scored)

    @property
    def agreement(self) -> float | None:
        """Share of human votes that agreed with the judge (bot.trust.report.people_agreement counts every label)."""
        return ratio(self.agreeing, self.votes)

    @property
    def unsure_rate(self) -> float | None:
        """Share of scored cases left unsure; None when none was, as rows judged once never are."""
        return ratio(self.unsure, self.scored) if self.unsure else None

    @property
    def mixed(self) -> list[str]:
        """What the verdicts counted mix, as sentences: several judge models, or several texts of the rubric."""
        found = []
        if len(self.judges) > 1:
            found.append("judged by " + ", ".join(f"{judge} ({count} {'case' if count == 1 else 'cases'})"
                                                  for judge, count in _most_first(self.judges)))
        if len(self.versions) > 1:
            found.append(f"rubric {self.rubric_name} " + ", ".join(
                f"version {version} ({count} {'case' if count == 1 else 'cases'})"
                for version, count in _most_first(self.versions)))
        return found


def _most_first(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


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


def model_of(key: str) -> str | None:
    """The model under test of a tally key ("" when none was named)."""
    return key or None


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


def channel_stats(
    store: Store, *, channel_id: str | None, since: datetime | None = None, until: datetime | None = None,
    model: str | None = None, said: bool = True,
) -> list[Figures]:
    """Per model and rubric figures of one channel (None: the terminal's) over the cases evaluated in [since, until),
    each with its latest verdict there (bot.store.counts.counting), added up from the hourly tallies.

    The mean, pass rate and tags are over the scored cases; `rejudged` counts the judgments a later one of the same
    case replaced within the period. People's votes are those on its counted scored rows, and (unless `said` is
    False) `said` every label and standing vote on its rows.
    """
    rows = counted_in_channel(channel_id, since, until)
    chosen = [] if model is None else [func.lower(rows.c.model_key) == model.lower()[:KEY_LENGTH]]
    group = (rows.c.model_key, rows.c.rubric_name)
    stands = rows.c.replaced >= (until or STANDS)
    scored = rows.c.status == RowState.SCORED

    def counted_if(condition: Any, value: Any) -> Any:
        return func.sum(case((condition, value), else_=0))

    totals = (
        sa.select(*group, counted_if(stands, rows.c.rows), counted_if(stands & scored, rows.c.rows),
                  counted_if(stands, rows.c.headline_total), counted_if(stands, rows.c.headlines),
                  counted_if(stands, rows.c.passed), counted_if(stands & ~scored, rows.c.rows),
                  counted_if(~stands, rows.c.rows), counted_if(stands & scored, rows.c.unsure),
                  counted_if(stands & scored, rows.c.votes), counted_if(stands & scored, rows.c.agreeing))
        .where(*chosen).group_by(*group)
    )
    tags = (sa.select(*group, rows.c.tag_key, func.sum(rows.c.rows))
            .where(*chosen, stands, scored, rows.c.tag_key != "").group_by(*group, rows.c.tag_key))
    judges = (sa.select(*group, rows.c.judge_model, rows.c.rubric_version, rows.c.rubric_hash, func.sum(rows.c.rows))
              .where(*chosen, stands).group_by(*group, rows.c.judge_model, rows.c.rubric_version, rows.c.rubric_hash))
    figures: dict[tuple[str, str], Figures] = {}
    with store.session() as session:
        for (key, rubric, cases, n_scored, total, headlines, passed, errors, rejudged, unsure, votes,
             agreeing) in session.execute(totals):
            figures[(key, rubric)] = Figures(
                model_of(key), rubric, int(cases or 0), int(n_scored or 0),
                float(total) / int(headlines) if headlines else None, int(passed or 0), int(errors or 0),
                votes=int(votes or 0), agreeing=int(agreeing or 0), rejudged=int(rejudged or 0),
                unsure=int(unsure or 0))
        for key, rubric, tag, count in session.execute(tags):
            figures[(key, rubric)].tags[tag] = int(count)
        versions: dict[tuple[str, str], dict[str, set[str]]] = {}
        for key, rubric, judge, version, digest, count in session.execute(judges):
            found = figures[(key, rubric)]
            found.judges[judge] = found.judges.get(judge, 0) + int(count)
            found.versions[f"{version}:{digest}"] = found.versions.get(f"{version}:{digest}", 0) + int(count)
            versions.setdefault((key, rubric), {}).setdefault(version, set()).add(digest)
    for key, found in figures.items():  # "2", or "2 (3f2a1c9)" where one version was used with several texts
        texts = versions.get(key, {})
        found.versions = {(version if len(texts[version]) == 1 else f"{version} ({digest[:7]})"): count
                          for (version, digest), count in
                          ((text.rsplit(":", 1), count) for text, count in found.versions.items())}
    figures = {key: found for key, found in figures.items() if found.cases}  # a failure after an earlier score: none
    if said:
        for found_key, people in said_by_model(store, channel_id=channel_id, since=since, until=until,
                                               model=model).items():
            if found_key in figures:
                figures[found_key].said = people
    return sorted(figures.values(), key=lambda f: ((f.model_name or "").lower(), f.rubric_name))


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
