"""The review queue: cases a channel's reviewers are asked to label, each offered to one reviewer at a time and
closed by the first label given after it was queued."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.records import ANY_TEAM as ANY_TEAM  # the door names these here
from bot.records import DISAGREE as DISAGREE
from bot.records import LABELED as LABELED
from bot.records import OPEN as OPEN
from bot.records import RowState
from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.counts.case_keys import case_key
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import FEEDBACK, JUDGMENT, LABEL, REVIEW_CASE

if TYPE_CHECKING:
    from bot.store.database import Store
    from bot.store.tables.trust import ReviewCase

OFFER_FOR = timedelta(days=1)  # a case offered and not answered returns to the queue after this
CANDIDATES = 25  # open cases looked at per offer; two reviewers at once each win a different one


@dataclass(frozen=True)
class QueuedRow:
    """A scored row of a run, as the queue chooses from: its verdict and what people said of its case."""

    judgment_id: int
    case_key: str
    unsure: bool
    jury: bool
    passed: bool | None
    label_passes: tuple[bool, ...]  # pass/fail of people's labels of the case that give one
    labeled: bool  # any label or vote on the case
    judged_before: bool = False  # an earlier run scored the case: it had its one chance at the random share there


def queued_rows(store: Store, run_id: int) -> list[QueuedRow]:
    """Every scored row of a run with what people said of its case and whether a run before it scored the case, in
    row order."""
    j = JUDGMENT.c
    columns = [j[name] for name in ("id", "team_id", "channel_id", "rubric_name", "question", "reference", "answer",
                                    "unsure", "judge_model", "passed", "case_hash", "context")]
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(*columns).where(j.run_id == run_id, j.status == RowState.SCORED)
                            .order_by(j.row_number, j.id)).all()
        keys = {row.id: case_key(row.team_id, row.channel_id, row.rubric_name, row.question, row.reference,
                                 row.answer, context=row.context) for row in rows}
        passes, labeled = _said_of(conn, sorted(set(keys.values())))
        before = _judged_before(conn, run_id, rows)
    return [QueuedRow(row.id, keys[row.id], bool(row.unsure), "+" in row.judge_model, row.passed,
                      tuple(passes.get(keys[row.id], ())), keys[row.id] in labeled, keys[row.id] in before)
            for row in rows]


def _said_of(conn: Connection, wanted: Sequence[str]) -> tuple[dict[str, list[bool]], set[str]]:
    """Of the cases `wanted`: the pass/fail of people's labels of each that give one, and those labeled or voted on."""
    passes: dict[str, list[bool]] = {}
    labeled: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        for key, passed in conn.execute(sa.select(LABEL.c.case_key, LABEL.c.passed).where(LABEL.c.case_key.in_(chunk))):
            labeled.add(key)
            if passed is not None:
                passes.setdefault(key, []).append(passed)
        labeled.update(key for (key,) in conn.execute(sa.select(FEEDBACK.c.case_key)
                                                      .where(FEEDBACK.c.case_key.in_(chunk))) if key)
    return passes, labeled


def _judged_before(conn: Connection, run_id: int, rows: Sequence[Any]) -> set[str]:
    """The cases among a run's `rows` that a run started before it scored: for each row, the first earlier scored
    judgment of the case it is counted under (bot.store.counts.counting), found in that index (so a judgment whose texts
    were removed still counts)."""
    row, earlier = JUDGMENT, JUDGMENT.alias("earlier")
    before = sa.exists().where(earlier.c.case_hash == row.c.case_hash, earlier.c.run_id < run_id,
                               earlier.c.status == RowState.SCORED)
    found = set(conn.execute(sa.select(row.c.case_hash).where(row.c.run_id == run_id, row.c.status == RowState.SCORED,
                                                              before)).scalars())
    return {case_key(item.team_id, item.channel_id, item.rubric_name, item.question, item.reference, item.answer,
                     context=item.context) for item in rows if item.case_hash in found}


def add_cases(store: Store, cases: Iterable[dict[str, Any]]) -> set[str]:
    """Queue cases (each a ReviewCase's columns, all of one run), once each: a case queued already keeps its place
    (marked random if it is drawn at random now); one labeled already is opened again only for a second opinion
    (reason "disagree"). The keys of the given cases this run queued (now, or when it was summarised before): the
    cases it added to the queue."""
    unique = {case["case_key"]: case for case in reversed(list(cases))}  # rows of the same texts: the first one's
    rows = [{"state": OPEN, "created_at": utcnow(), **case} for case in reversed(list(unique.values()))]
    if not rows:
        return set()
    table = REVIEW_CASE
    insert = conflict_insert(store.engine.dialect.name)(table)
    new = insert.excluded
    reopen = sa.and_(table.c.state == LABELED, new.reason == DISAGREE)
    again = {name: sa.case((reopen, new[name]), else_=table.c[name])
             for name in ("judgment_id", "run_id", "reason", "created_at")}
    again |= {"state": sa.case((reopen, OPEN), else_=table.c.state),
              "random": sa.case((reopen, new.random), else_=sa.or_(table.c.random, new.random)),
              "offered_to": sa.case((reopen, None), else_=table.c.offered_to),
              "offered_at": sa.case((reopen, None), else_=table.c.offered_at)}
    keys = [row["case_key"] for row in rows]
    with store.engine.begin() as conn:
        conn.execute(insert.values(rows).on_conflict_do_update(index_elements=[table.c.case_key], set_=again))
        return set(conn.execute(sa.select(table.c.case_key).where(table.c.case_key.in_(keys),
                                                                  table.c.run_id == rows[0]["run_id"])).scalars())


def drawn_by(store: Store, run_id: int) -> set[str]:
    """The cases a run queued at random: once it has drawn, it draws no more (labels given since change no draw)."""
    table = REVIEW_CASE
    with store.engine.connect() as conn:
        return set(conn.execute(sa.select(table.c.case_key).where(table.c.run_id == run_id,
                                                                  table.c.random.is_(True))).scalars())


def close_reviewed(conn: Connection, *, case_key: str, user_id: str, now: datetime) -> None:
    """A person labeled (or voted on) a case for the first time: it leaves the queue, labeled by them. Called in the
    transaction that saves the label."""
    table = REVIEW_CASE
    conn.execute(table.update().where(table.c.case_key == case_key, table.c.state == OPEN)
                 .values(state=LABELED, labeled_by=user_id, labeled_at=now, offered_to=None, offered_at=None))


def _said_by(user_id: str) -> sa.ColumnElement[bool]:
    """Whether the person labeled or voted on the queued case."""
    labels, votes, table = LABEL, FEEDBACK, REVIEW_CASE
    return sa.or_(sa.exists().where(labels.c.case_key == table.c.case_key, labels.c.user_id == user_id),
                  sa.exists().where(votes.c.case_key == table.c.case_key, votes.c.user_id == user_id))


def _open_for(team_id: str | None, channel_id: str | None, user_id: str, now: datetime) -> list[sa.ColumnElement[bool]]:
    """The open cases of a channel (in whichever workspace, for ANY_TEAM) that may be offered to a person: not theirs
    already said, not held by another reviewer within the day, not skipped by them within the day."""
    table, cutoff = REVIEW_CASE, now - OFFER_FOR
    team = [] if team_id == ANY_TEAM else [table.c.team_id.is_not_distinct_from(team_id)]
    return [*team, table.c.channel_id.is_not_distinct_from(channel_id),
            table.c.state == OPEN, ~_said_by(user_id),
            sa.or_(table.c.offered_to.is_(None), table.c.offered_to == user_id, table.c.offered_at < cutoff),
            sa.or_(table.c.skipped_by.is_(None), table.c.skipped_by != user_id, table.c.skipped_at < cutoff)]


def offer_next(store: Store, *, team_id: str | None, channel_id: str | None, user_id: str,
               now: datetime | None = None) -> ReviewCase | None:
    """The next case of the channel's queue for a person, now offered to them (and to nobody else for a day): the one
    they hold already, else the oldest. None when there is none for them."""
    now = now or utcnow()
    table = REVIEW_CASE
    where = _open_for(team_id, channel_id, user_id, now)
    with store.engine.begin() as conn:
        ids = conn.execute(sa.select(table.c.id).where(*where)
                           .order_by(sa.case((table.c.offered_to == user_id, 0), else_=1), table.c.created_at, table.c.id)
                           .limit(CANDIDATES)).scalars().all()
        for case_id in ids:  # another reviewer may take one between the read and the update: the update says
            taken = conn.execute(table.update().where(table.c.id == case_id, *where)
                                 .values(offered_to=user_id, offered_at=now))
            if taken.rowcount == 1:
                break
        else:
            return None
    return review_case(store, case_id)


def review_case(store: Store, case_id: int) -> ReviewCase | None:
    """One queued case."""
    from bot.store.tables.trust import ReviewCase  # the model it returns: loaded by the review queue, not by a run

    with store.session() as session:
        return session.get(ReviewCase, case_id)


def skip_case(store: Store, *, case_id: int, user_id: str) -> None:
    """A reviewer passes on a case: it returns to the queue, and is not offered to them again for a day."""
    table = REVIEW_CASE
    with store.engine.begin() as conn:
        conn.execute(table.update().where(table.c.id == case_id, table.c.state == OPEN)
                     .values(skipped_by=user_id, skipped_at=utcnow(),
                             offered_to=sa.case((table.c.offered_to == user_id, None), else_=table.c.offered_to),
                             offered_at=sa.case((table.c.offered_to == user_id, None), else_=table.c.offered_at)))


def release_case(store: Store, *, case_id: int, user_id: str) -> None:
    """A reviewer stops before labeling the case offered to them: it returns to the queue at once, for them too."""
    table = REVIEW_CASE
    with store.engine.begin() as conn:
        conn.execute(table.update().where(table.c.id == case_id, table.c.state == OPEN, table.c.offered_to == user_id)
                     .values(offered_to=None, offered_at=None))


def waiting_for(store: Store, *, team_id: str | None, channel_id: str | None, user_id: str,
                now: datetime | None = None) -> int:
    """How many open cases of a channel a person could be offered now."""
    where = _open_for(team_id, channel_id, user_id, now or utcnow())
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(REVIEW_CASE).where(*where))
                   .scalar_one())


@dataclass(frozen=True)
class QueueState:
    """A channel's review queue: cases open, labeled since a time, and when the oldest open one was queued."""

    open: int
    labeled: int
    oldest: datetime | None


def queue_state(store: Store, *, team_id: str | None, channel_id: str | None, since: datetime,
                until: datetime | None = None) -> QueueState:
    """The channel's queue as it stands, with the cases labeled from `since` (to `until`)."""
    table = REVIEW_CASE
    team = () if team_id == ANY_TEAM else (table.c.team_id.is_not_distinct_from(team_id),)
    here = (*team, table.c.channel_id.is_not_distinct_from(channel_id))
    with store.engine.connect() as conn:
        open_count, oldest = conn.execute(sa.select(sa.func.count(), sa.func.min(table.c.created_at))
                                          .where(*here, table.c.state == OPEN)).one()
        labeled = conn.execute(sa.select(sa.func.count()).where(
            *here, table.c.state == LABELED, table.c.labeled_at >= since,
            *([table.c.labeled_at < until] if until is not None else []))).scalar_one()
    return QueueState(int(open_count), int(labeled), oldest)


def queued_of_run(store: Store, run_id: int) -> dict[str, int]:
    """How many of a run's cases are in review, by why they were queued (a case queued by an earlier run counts
    there)."""
    table = REVIEW_CASE
    with store.engine.connect() as conn:
        return {reason: int(count) for reason, count in conn.execute(
            sa.select(table.c.reason, sa.func.count()).where(table.c.run_id == run_id).group_by(table.c.reason))}


def open_cases(store: Store, *, team_id: str | None, channel_id: str | None,
               limit: int = 100) -> Sequence[tuple[ReviewCase, Judgment]]:
    """The channel's open cases, oldest first, with the verdicts that queued them."""
    from sqlmodel import col, select  # the case models it returns: loaded by the review queue, not by a run

    from bot.store.tables.trust import ReviewCase

    team = [] if team_id == ANY_TEAM else [col(ReviewCase.team_id).is_not_distinct_from(team_id)]
    with store.session() as session:
        rows = session.execute(select(ReviewCase, *JUDGMENT.c).join(JUDGMENT, JUDGMENT.c.id == ReviewCase.judgment_id)
                               .where(*team, col(ReviewCase.channel_id).is_not_distinct_from(channel_id),
                                      ReviewCase.state == OPEN)
                               .order_by(col(ReviewCase.created_at), col(ReviewCase.id)).limit(limit)).all()
    return [(row[0], Judgment.of(row[1:])) for row in rows]
