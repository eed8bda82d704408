"""Counting the history cheaply: judged rows (and people's votes on them) tallied per channel and hour as verdicts are
saved, and question keys."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Table, TableClause, case, func, literal, or_, select, union_all
from sqlalchemy.engine import Connection

from bot.records import JUDGED
from bot.store.connections import conflict_insert

HOUR = timedelta(hours=1)
KEY_LENGTH = 200  # a model or tag longer than this is counted under its first 200 characters
KEY = ("channel_key", "hour", "model_key", "rubric_name", "rubric_version", "rubric_hash", "judge_model", "status",
       "tag_key", "replaced_hour")
FIRST_KEY = KEY[:-1]  # the key before schema 28 kept when rows were replaced (the migrations before it use it)
STANDS = datetime(9999, 12, 31)  # the replaced_hour of rows not replaced (a key column cannot be NULL and match)
COUNTS = ("rows", "headlines", "headline_total", "passed", "reused", "unsure", "cost", "unpriced", "votes", "agreeing")


def question_key(model_name: str | None, rubric_name: str, question: str) -> int:
    """One number for a question asked of one model under one rubric, so weeks can be compared question by question."""
    digest = hashlib.blake2b(f"{model_name or ''}\x1f{rubric_name}\x1f{question}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def hour_of(moment: datetime) -> datetime:
    """The start of the hour `moment` is in."""
    return moment.replace(minute=0, second=0, microsecond=0)


def channel_key(channel_id: str | None) -> str:
    """How a channel is named in the tally: judgments made in a terminal have no channel, counted under ""."""
    return channel_id or ""


def key_of(column: Any) -> Any:
    """A nullable text column as the tally keys it: "" for none, cut to KEY_LENGTH characters."""
    return func.substr(func.coalesce(column, ""), 1, KEY_LENGTH)


def _hour_sql(column: Any, dialect: str) -> Any:
    if dialect == "postgresql":
        return func.date_trunc("hour", column, type_=DateTime)
    # SQLite keeps datetimes as text in SQLAlchemy's format, which must be matched to compare equal.
    return func.strftime("%Y-%m-%d %H:00:00.000000", column, type_=DateTime)


def _keys(judgment: TableClause, at: Any, replaced: Any | None) -> list[Any]:
    """A judgment row's tally key, as labelled SQL expressions, with `at` as its time and `replaced` as the time it
    was replaced at (bot.store.counts.counting; None for a tally of a schema from before it kept one)."""
    c = judgment.c
    keys = [func.coalesce(c.channel_id, "").label("channel_key"), at.label("hour"), key_of(c.model_name).label("model_key"),
            c.rubric_name, c.rubric_version, c.rubric_hash, c.judge_model, c.status, key_of(c.tag).label("tag_key")]
    return keys if replaced is None else [*keys, replaced.label("replaced_hour")]


def _replaced(c: Any, when: Any) -> Any:
    """`when` (an expression of c.replaced_at), or STANDS for a row not replaced."""
    return case((c.replaced_at.is_(None), literal(STANDS, DateTime)), else_=when)


def _hours(judgment: TableClause, tally: TableClause, dialect: str) -> tuple[Any, Any | None]:
    """The hour a judgment row was judged in, and the hour it was replaced in (STANDS while it stands) where the tally
    keys rows by it."""
    c = judgment.c
    replaced = _replaced(c, _hour_sql(c.replaced_at, dialect)) if "replaced_hour" in tally.c else None
    return _hour_sql(c.judged_at, dialect), replaced


def _counts(judgment: TableClause, sign: int, names: tuple[str, ...] = COUNTS,
            feedback: TableClause | None = None) -> list[Any]:
    """The counts of `names` over a group of judgment rows; a verdict reused from the cache is counted apart. Votes
    are counted from the `feedback` table, which must be given when `names` holds them."""
    c = judgment.c
    counts = {
        "rows": lambda: func.count(),
        "headlines": lambda: func.count(c.headline),
        "headline_total": lambda: func.coalesce(func.sum(c.headline), 0.0),
        "passed": lambda: func.sum(case((c.passed.is_(True), 1), else_=0)),
        "reused": lambda: func.count(c.cached_from),
        "unsure": lambda: func.sum(case((c.unsure.is_(True), 1), else_=0)),
        "cost": lambda: func.coalesce(func.sum(c.cost_usd), 0.0),
        "unpriced": lambda: func.sum(_unpriced(c)),
        "votes": lambda: func.coalesce(func.sum(_votes_on(c, _needed(feedback))), 0),
        "agreeing": lambda: func.coalesce(func.sum(_votes_on(c, _needed(feedback), agreeing=True)), 0),
    }
    return [(sign * counts[name]()).label(name) for name in names]


def _needed(feedback: TableClause | None) -> TableClause:
    if feedback is None:
        raise ValueError("the votes of a tally are counted from the feedback table: pass it")
    return feedback


def _votes_on(c: Any, feedback: TableClause, *, agreeing: bool = False) -> Any:
    """The votes on one judgment row (those agreeing with the judge only, when `agreeing`)."""
    which = [feedback.c.judgment_id == c.id, *([feedback.c.agree.is_(True)] if agreeing else [])]
    return select(func.count()).select_from(feedback).where(*which).scalar_subquery()


def _unpriced(c: Any) -> Any:
    """1 for a judgment that used tokens of a judge whose price is unknown, else 0."""
    return case((c.cost_usd.is_(None) & ((c.tokens_in + c.tokens_out) > 0), 1), else_=0)


def add_judgments(conn: Connection, judgment: TableClause, tally: TableClause, where: Any, *, sign: int = 1,
                  feedback: TableClause | None = None) -> None:
    """Count the judged rows of `judgment` matching `where` into `tally` (with sign -1: count them out), their votes
    from `feedback` (needed once the tally counts votes).

    One statement serves a saved verdict, rows made pending again, and filling the tally from an existing history
    (whose tally may predate some counts: only the counts it has are filled).
    """
    conn.execute(tally_upsert(conn.dialect.name, judgment, tally, where, sign=sign, feedback=feedback))
    if sign < 0:
        conn.execute(tally.delete().where(tally.c.rows <= 0))


def add_votes(conn: Connection, judgment: TableClause, tally: TableClause, judgment_id: int, *, votes: int,
              agreeing: int) -> None:
    """Add to the votes (and those agreeing) of the tally key a judged row is counted under; nothing for a row not
    judged (its votes are counted with it once it is)."""
    keys = _keys(judgment, *_hours(judgment, tally, conn.dialect.name))
    key = conn.execute(select(*keys).where(judgment.c.id == judgment_id, judgment.c.status.in_(JUDGED),
                                           judgment.c.judged_at.is_not(None))).first()
    if key is not None:  # found by the tally's unique key, one row
        conn.execute(tally.update().where(*[tally.c[item.name] == value for item, value in zip(keys, key)])
                     .values(votes=tally.c.votes + votes, agreeing=tally.c.agreeing + agreeing))


def tally_upsert(dialect: str, judgment: TableClause, tally: TableClause, where: Any, *, sign: int = 1,
                 feedback: TableClause | None = None) -> Any:
    """The statement that counts the judged rows of `judgment` matching `where` (and their votes in `feedback`) into
    `tally`; built once, with a bound parameter in `where`, it serves every saved verdict."""
    names = tuple(name for name in COUNTS if name in tally.c)
    keys = _keys(judgment, *_hours(judgment, tally, dialect))
    key_names = [key.name for key in keys]
    rows = (select(*keys, *_counts(judgment, sign, names, feedback))
            .where(where, judgment.c.status.in_(JUDGED), judgment.c.judged_at.is_not(None))
            .group_by(*keys))
    statement = conflict_insert(dialect)(tally).from_select([*key_names, *names], rows)
    return statement.on_conflict_do_update(
        index_elements=[tally.c[name] for name in key_names],
        set_={name: tally.c[name] + statement.excluded[name] for name in names},
    )


def counted(judgment: Table, tally: Table, feedback: Table, channel_id: str | None, since: datetime | None,
            until: datetime | None, cuts: tuple[datetime, ...] = ()) -> Any:
    """The judged rows of one channel in [since, until), as counts per tally key with their time `at` and the time
    they were replaced at, `replaced` (STANDS while they stand): a figure of a period ending at `end` counts those
    with `replaced >= end` (bot.store.counts.counting), each case once.

    Whole hours come from the tally. An hour that a bound or one of `cuts` falls inside of (midnight in a timezone
    half an hour off UTC) is read row by row, rows judged in it and rows replaced in it, so that counts split at
    those points are exact on either side.
    """
    ragged = sorted({hour_of(point) for point in (since, *cuts, until) if point is not None and hour_of(point) != point})
    t, c = tally.c, judgment.c
    whole = [t.channel_key == channel_key(channel_id)]
    whole += [] if since is None else [t.hour >= hour_of(since)]
    whole += [] if until is None else [t.hour < until]
    whole += [t.hour.not_in(ragged), t.replaced_hour.not_in(ragged)] if ragged else []
    named = [name for name in KEY if name not in ("hour", "replaced_hour")]
    parts = [select(*[t[name] for name in named], t.hour.label("at"), t.replaced_hour.label("replaced"),
                    *[t[name] for name in COUNTS]).where(*whole)]
    scope = [c.channel_id.is_(None) if channel_id is None else c.channel_id == channel_id, c.status.in_(JUDGED)]
    keys = [key for key in _keys(judgment, c.judged_at, None) if key.name != "hour"]
    row = [*keys, c.judged_at.label("at"), _replaced(c, c.replaced_at).label("replaced"), literal(1).label("rows"),
           case((c.headline.is_(None), 0), else_=1).label("headlines"),
           func.coalesce(c.headline, 0.0).label("headline_total"),
           case((c.passed.is_(True), 1), else_=0).label("passed"),
           case((c.cached_from.is_(None), 0), else_=1).label("reused"),
           case((c.unsure.is_(True), 1), else_=0).label("unsure"),
           func.coalesce(c.cost_usd, 0.0).label("cost"), _unpriced(c).label("unpriced"),
           _votes_on(c, feedback).label("votes"), _votes_on(c, feedback, agreeing=True).label("agreeing")]
    for hour in ragged:
        start, end = max(hour, since or hour), min(hour + HOUR, until or hour + HOUR)
        parts.append(select(*row).where(*scope, c.judged_at >= start, c.judged_at < end))
    if ragged:  # judged in whole hours of the period, replaced inside a ragged hour: where exactly matters
        period = [*([c.judged_at >= since] if since is not None else []), *([c.judged_at < until] if until else [])]
        judged_whole = [~((c.judged_at >= hour) & (c.judged_at < hour + HOUR)) for hour in ragged]
        replaced_ragged = or_(*[(c.replaced_at >= hour) & (c.replaced_at < hour + HOUR) for hour in ragged])
        parts.append(select(*row).where(*scope, *period, *judged_whole, replaced_ragged))
    return (parts[0] if len(parts) == 1 else union_all(*parts)).subquery("counted")
