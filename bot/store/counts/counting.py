"""The one counting rule of the history: what a case is, and which of its judgments counts in a period.

A case is a rubric, a question, a reference, the retrieved passages (when there are any) and an answer (a pair: both
answers, in the order shown) of one model under test, in one channel of one workspace. Its judgments form a chain in
the order they were judged: each judgment records when a later one took its place (`replaced_at`, None while it is
the latest). A judgment counts in [since, until) when it was judged there and not replaced before `until`, so every
figure of a period holds each case evaluated in it once, with its latest verdict there; re-reading a verdict from
the cache, or judging the case again with the same judge, replaces it and never adds to it. A judge's failure (an
error, or a reply that broke the rubric's rules) replaces no score: once a case has a score, a later failure counts
nowhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.records import JUDGED, RowState
from bot.store.counts.tallies import add_judgments

CASE_LOCKS = 42_042  # PostgreSQL advisory locks (this class, a case's number) serialising the chains of one case
CHUNK = 500


def counted_case(label_case: str, model_name: str | None, model_b: str | None = None,
                 swapped: bool | None = None) -> str:
    """The case a judgment is counted under: its labeled case (bot.store.counts.case_keys: workspace, channel, rubric,
    texts and passages) and the model(s) under test; each order a pair is shown in is counted on its own."""
    order = "" if swapped is None else ("B first" if swapped else "A first")
    parts = (label_case, model_name or "", model_b or "", order)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def standing(replaced_at: Any, until: datetime | None) -> Any:
    """SQL: a judgment still stands at `until` (None: now): it was not replaced before then."""
    if until is None:
        return replaced_at.is_(None)
    return sa.or_(replaced_at.is_(None), replaced_at >= until)


@dataclass(frozen=True)
class Link:
    """One judgment of a case, as its chain reads it."""

    id: int
    judged_at: datetime
    scored: bool
    replaced_at: datetime | None = None


def replacements(links: Sequence[Link]) -> dict[int, datetime | None]:
    """When each judgment of one case was replaced (None: it stands): a score by the next score, a failure by the
    next judgment of any kind; a failure after a score at once (it counts nowhere)."""
    ordered = sorted(links, key=lambda link: (link.judged_at, link.id))
    found: dict[int, datetime | None] = {}
    next_any: datetime | None = None
    next_scored: datetime | None = None
    for link in reversed(ordered):
        found[link.id] = next_scored if link.scored else next_any
        next_any = link.judged_at
        if link.scored:
            next_scored = link.judged_at
    scored_before = False
    for link in ordered:
        if not link.scored and scored_before:
            found[link.id] = link.judged_at
        scored_before = scored_before or link.scored
    return found


def lock_cases(conn: Connection, cases: Iterable[str | None]) -> None:
    """On PostgreSQL, hold the chains of these cases until the transaction ends (in one order, so two writers never
    wait for each other); SQLite's write transaction holds everything already."""
    if conn.dialect.name != "postgresql":
        return
    numbers = sorted({int(case[:8], 16) - 2**31 for case in cases if case})
    if numbers:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:family, n) FROM unnest(CAST(:numbers AS integer[])) AS n"),
                     {"family": CASE_LOCKS, "numbers": numbers})


def restack(conn: Connection, judgment: Any, tally: Any, feedback: Any, cases: Iterable[str]) -> int:
    """Set `replaced_at` right on every judged row of these cases, each row that changes counted out of the hourly
    `tally` and back in under its new key (the tally keys rows by when they were replaced); how many changed."""
    wanted = sorted(set(cases))
    c = judgment.c
    changed: dict[int, datetime | None] = {}
    for start in range(0, len(wanted), CHUNK):
        rows = conn.execute(sa.select(c.id, c.case_hash, c.judged_at, c.status, c.replaced_at)
                            .where(c.case_hash.in_(wanted[start:start + CHUNK]), c.status.in_(JUDGED),
                                   c.judged_at.is_not(None))).all()
        chains: dict[str, list[Link]] = {}
        for row in rows:
            chains.setdefault(row.case_hash, []).append(
                Link(row.id, row.judged_at, row.status == RowState.SCORED, row.replaced_at))
        for links in chains.values():
            now = {link.id: link.replaced_at for link in links}
            changed.update({id_: at for id_, at in replacements(links).items() if now[id_] != at})
    ids = sorted(changed)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start:start + CHUNK]
        add_judgments(conn, judgment, tally, c.id.in_(chunk), sign=-1, feedback=feedback)
        conn.execute(judgment.update().where(c.id == sa.bindparam("row_id")).values(replaced_at=sa.bindparam("at")),
                     [{"row_id": id_, "at": changed[id_]} for id_ in chunk])
        add_judgments(conn, judgment, tally, c.id.in_(chunk), feedback=feedback)
    return len(changed)
