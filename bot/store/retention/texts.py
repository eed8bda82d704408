"""Removing what people wrote once it is old, every figure kept, and removing all of one workspace's data on request."""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.records import RowState, RunState, ShareState
from bot.store.counts.case_keys import REMOVED, case_key, removed_question, texts_removed
from bot.store.counts.tallies import tally_upsert
from bot.store.retention.revisions import Pruned, prune_revisions
from bot.store.tables.chat import SharedFile
from bot.store.tables.core import JUDGMENT, JUDGMENT_SAMPLE, RUN
from bot.store.tables.history import BilledTally, Feedback, JudgmentTally, table_of
from bot.store.tables.trust import Label

if TYPE_CHECKING:
    from bot.rubric import FieldSpec, Rubric
    from bot.store.database import Store

BATCH = 500  # rows changed in one transaction: a million old rows never hold the write lock for long
FIGURE_KINDS = ("integer", "number", "boolean", "enum")  # output fields whose values are figures, kept
SETTLED_RUNS = (RunState.DONE, RunState.CANCELLED, RunState.FAILED)  # their rows never judged are closed
SETTLED_SHARES = (ShareState.DONE, ShareState.FAILED, ShareState.REFUSED, ShareState.SKIPPED)
JUDGMENT_TEXTS = ("id", "team_id", "channel_id", "rubric_name", "status", "question", "reference", "answer",
                  "answer_b", "output", "label", "cells", "raw_reply", "error", "context")
SAMPLE_TEXTS = ("id", "judgment_id", "output", "label", "raw_reply", "error")
REMOVED_PASSAGES = json.dumps([REMOVED])  # what a removed context reads as: one passage, the marker


@dataclass(frozen=True)
class Shapes:
    """What of a judge's output is a figure, by rubric name: the value of an integer, number, boolean or enum field is
    kept, any other text goes (every text of a rubric no longer loaded); a rubric's label is kept when its template
    names such values only."""

    outputs: Mapping[str, Mapping[str, FieldSpec]] = field(default_factory=dict)
    labels: frozenset[str] = frozenset()

    @classmethod
    def of(cls, rubrics: Iterable[Rubric]) -> Shapes:
        """The shapes of these rubrics."""
        chosen = list(rubrics)
        return cls({rubric.name: rubric.output for rubric in chosen},
                   frozenset(rubric.name for rubric in chosen if _label_of_figures(rubric)))

    def output(self, rubric_name: str, value: Any) -> Any:
        """A judge's output (or a sample's) with its texts that are no figures removed."""
        fields = self.outputs.get(rubric_name, {})
        if isinstance(value, dict):
            return {key: _scrub(item, fields.get(key)) for key, item in value.items()}
        return _scrub(value, None)

    def label(self, rubric_name: str, label: str | None) -> str | None:
        """A verdict's one-glance label, kept when its rubric makes it of figures only."""
        return label if label is None or rubric_name in self.labels else REMOVED


def _label_of_figures(rubric: Rubric) -> bool:
    from bot.rubric import leaves  # a rubric comes with its package loaded

    figures = {path for path, spec in leaves(rubric.output) if spec.type in FIGURE_KINDS} | set(rubric.derived)
    named = [name for _, name, _, _ in string.Formatter().parse(rubric.headline.label) if name is not None]
    return all(name.replace("]", "").replace("[", ".") in figures for name in named)


def _scrub(value: Any, spec: FieldSpec | None) -> Any:
    """`value` with every string that is not one of its enum field's values replaced by REMOVED."""
    if isinstance(value, dict):
        fields = (spec.fields or {}) if spec is not None and spec.type == "object" else {}
        return {key: _scrub(item, fields.get(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, spec.items if spec is not None and spec.type == "list" else None) for item in value]
    if isinstance(value, str):
        return value if spec is not None and spec.type == "enum" and value in (spec.values or ()) else REMOVED
    return value  # a number, a boolean, None


def _gone(text: str | None) -> str | None:
    return None if text is None else REMOVED


@dataclass
class Removed:
    """What one pass of `remove_old_texts` removed."""

    judgments: int = 0  # judgments whose texts were removed
    closed: int = 0  # of them, rows of finished runs never judged, closed as malformed (they cannot be judged now)
    samples: int = 0  # samples of those judgments whose texts were removed
    notes: int = 0  # people's notes with their labels
    messages: int = 0  # the messages files were shared with
    revisions: Pruned = field(default_factory=Pruned)  # the examples and notes alignment copied into revisions

    @property
    def total(self) -> int:
        """Rows changed."""
        return self.judgments + self.samples + self.notes + self.messages + self.revisions.revisions


def remove_old_texts(store: Store, *, before: datetime, shapes: Shapes, batch: int = BATCH) -> Removed:
    """Remove the texts of the judgments judged (or, never judged, made) before `before`, and of their samples, the
    notes of labels last changed before then, the messages of files shared before then, and what revisions of rubrics
    copied from them (bot.store.retention.revisions); `batch` rows a transaction. Whatever weeks and calibration
    count is kept: statuses, scores, pass/fail, tags, rubric, models, judge, dates, tokens, costs, the output's
    figures, question keys and case keys.

    Each removed text reads REMOVED, but a question reads `removed_question(its case)`, so that labels, votes and
    pairs given later still find their case. The cache key goes: an identical triple judged later is judged afresh,
    not given a verdict whose reasoning is gone. A row of a run still to be resumed keeps its texts until it is
    judged; one of a finished run is closed as malformed. Running it again changes nothing; processes running it at
    once on PostgreSQL skip each other's rows.
    """
    removed, last = Removed(), 0
    j = JUDGMENT
    while True:
        chosen = (sa.select(*(j.c[name] for name in JUDGMENT_TEXTS))
                  .where(j.c.id > last, _past(j, before), ~texts_removed(j.c.question, j.c.reference))
                  .order_by(j.c.id).limit(batch).with_for_update(skip_locked=True, of=j))
        with store.engine.begin() as conn:
            rows = conn.execute(chosen).all()
            if not rows:
                break
            last = rows[-1].id
            conn.execute(j.update().where(j.c.id == sa.bindparam("row_id")), [_judgment_removed(row, shapes) for row in rows])
            removed.samples += _remove_samples(conn, {row.id: row.rubric_name for row in rows}, shapes)
        removed.judgments += len(rows)
        removed.closed += sum(row.status == RowState.PENDING for row in rows)
    label, share = table_of(Label), table_of(SharedFile)
    removed.notes = _set_in_batches(store, label, label.c.note, batch, label.c.updated_at < before)
    removed.messages = _set_in_batches(store, share, share.c.text, batch, share.c.updated_at < before,
                                       share.c.state.in_(SETTLED_SHARES), share.c.text != "")
    removed.revisions = prune_revisions(store, before=before,
                                        kept=~texts_removed(j.c.question, j.c.reference) & ~_past(j, before))
    return removed


def _past(j: sa.Table, before: datetime) -> Any:
    """SQL: a judgment whose texts go at `before`: judged before it (or, never judged, made before it), unless it is a
    row of a run still to be resumed."""
    settled = sa.select(RUN.c.id).where(RUN.c.status.in_(SETTLED_RUNS))
    return sa.and_(sa.func.coalesce(j.c.judged_at, j.c.created_at) < before,
                   sa.or_(j.c.status != RowState.PENDING, j.c.run_id.in_(settled)))


def _judgment_removed(row: Any, shapes: Shapes) -> dict[str, Any]:
    case = case_key(row.team_id, row.channel_id, row.rubric_name, row.question, row.reference, row.answer,
                    row.answer_b, row.context)
    closed = row.status == RowState.PENDING
    return {"row_id": row.id, "question": removed_question(case), "reference": REMOVED, "answer": REMOVED,
            "answer_b": _gone(row.answer_b), "context": None if row.context is None else REMOVED_PASSAGES,
            "output": shapes.output(row.rubric_name, row.output),
            "label": shapes.label(row.rubric_name, row.label),
            "cells": None if row.cells is None else dict.fromkeys(row.cells, REMOVED),
            "raw_reply": _gone(row.raw_reply), "error": REMOVED if closed else _gone(row.error), "cache_key": None,
            "status": RowState.MALFORMED if closed else row.status}


def _remove_samples(conn: Connection, rubrics: dict[int, str], shapes: Shapes) -> int:
    s = JUDGMENT_SAMPLE
    rows = conn.execute(sa.select(*(s.c[name] for name in SAMPLE_TEXTS)).where(s.c.judgment_id.in_(rubrics))).all()
    if rows:
        conn.execute(s.update().where(s.c.id == sa.bindparam("row_id")), [
            {"row_id": row.id, "output": shapes.output(rubrics[row.judgment_id], row.output),
             "label": shapes.label(rubrics[row.judgment_id], row.label), "raw_reply": _gone(row.raw_reply),
             "error": _gone(row.error), "cache_key": None} for row in rows])
    return len(rows)


def _set_in_batches(store: Store, table: sa.Table, column: sa.Column[Any], batch: int, *where: Any) -> int:
    """Set `column` to REMOVED where it holds another text and `where` holds, `batch` rows a transaction."""
    done, last = 0, 0
    while True:
        with store.engine.begin() as conn:
            ids = conn.execute(sa.select(table.c.id).where(table.c.id > last, column.is_not(None), column != REMOVED,
                                                           *where)
                               .order_by(table.c.id).limit(batch).with_for_update(skip_locked=True)).scalars().all()
            if not ids:
                return done
            conn.execute(table.update().where(table.c.id.in_(ids)).values({column.name: REMOVED}))
        done, last = done + len(ids), ids[-1]


# -- one workspace, all of it -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Schema:
    """The database's tables as found in it (those other parts of judgebot add included): their columns, the ones
    with a team_id column, and the (table, column) pairs that refer to a judgment or a run."""

    tables: dict[str, sa.TableClause]
    teams: list[str]
    children: dict[str, list[tuple[str, str]]]

    @classmethod
    def read(cls, conn: Connection) -> _Schema:
        inspector = sa.inspect(conn)
        names = sorted(inspector.get_table_names())
        tables = {name: sa.table(name, *(sa.column(c["name"]) for c in inspector.get_columns(name))) for name in names}
        teams = [name for name in names if "team_id" in tables[name].c]
        children: dict[str, list[tuple[str, str]]] = {"judgment": [], "run": []}
        for name in names:
            for key in inspector.get_foreign_keys(name):
                if key["referred_table"] in children and name not in children and len(key["constrained_columns"]) == 1:
                    children[key["referred_table"]].append((name, key["constrained_columns"][0]))
        return cls(tables, teams, children)


def _team_runs(team_id: str) -> Any:
    return sa.select(RUN.c.id).where(RUN.c.team_id == team_id)


def _team_judgments(team_id: str) -> Any:
    j = JUDGMENT
    return sa.select(j.c.id).where(sa.or_(j.c.team_id == team_id, j.c.run_id.in_(_team_runs(team_id))))


def _conditions(schema: _Schema, team_id: str) -> dict[str, list[Any]]:
    """Every table holding some of the workspace's rows, with the conditions (any of them) on those rows."""
    found: dict[str, list[Any]] = {}
    for parent, ids in (("judgment", _team_judgments(team_id)), ("run", _team_runs(team_id))):
        for name, column in schema.children[parent]:
            found.setdefault(name, []).append(schema.tables[name].c[column].in_(ids))
    for name in ("billed_tally", "judgment"):  # what was billed (no foreign key), and judgments in the team's runs
        found.setdefault(name, []).append(schema.tables[name].c.run_id.in_(_team_runs(team_id)))
    for name in schema.teams:
        found.setdefault(name, []).append(schema.tables[name].c.team_id == team_id)
    return found


def team_rows(store: Store, team_id: str) -> dict[str, int]:
    """How many rows of each table `forget_team` would delete (tables with none left out)."""
    with store.engine.connect() as conn:
        schema = _Schema.read(conn)
        counts = {name: conn.execute(sa.select(sa.func.count()).select_from(schema.tables[name])
                                     .where(sa.or_(*where))).scalar_one()
                  for name, where in sorted(_conditions(schema, team_id).items())}
    return {name: count for name, count in counts.items() if count}


def forget_team(store: Store, team_id: str, *, batch: int = BATCH) -> dict[str, int]:
    """Delete every row of the workspace `team_id`: its runs and judgments with everything that refers to them
    (samples, votes, labels, review cases, batches, shared files, what was billed), and every row of any table with a
    team_id column (settings, digests, the review queue, channels' judges and rubrics...); its judgments are counted
    out of the hourly tallies, which other workspaces' channels share. `batch` judgments or runs a transaction, so it
    can be run again after an interruption. Rows deleted, by table (with judgment_tally: tally rows left empty)."""
    with store.engine.connect() as conn:
        schema = _Schema.read(conn)
    j, r = JUDGMENT, RUN
    deleted: Counter[str] = Counter()
    for parent, chosen in ((j, _team_judgments(team_id)), (r, _team_runs(team_id))):
        while True:
            with store.engine.begin() as conn:
                ids = conn.execute(chosen.order_by(parent.c.id).limit(batch)).scalars().all()
                if not ids:
                    break
                if parent is j:  # out of the hourly tallies while their votes are still there to count out
                    tally = table_of(JudgmentTally)
                    conn.execute(tally_upsert(conn.dialect.name, j, tally, j.c.id.in_(ids), sign=-1,
                                              feedback=table_of(Feedback)))
                    deleted["judgment_tally"] += conn.execute(tally.delete().where(tally.c.rows <= 0)).rowcount
                else:
                    billed = table_of(BilledTally)
                    deleted["billed_tally"] += conn.execute(billed.delete().where(billed.c.run_id.in_(ids))).rowcount
                for name, column in schema.children[parent.name]:
                    child = schema.tables[name]
                    deleted[name] += conn.execute(child.delete().where(child.c[column].in_(ids))).rowcount
                deleted[parent.name] += conn.execute(parent.delete().where(parent.c.id.in_(ids))).rowcount
    with store.engine.begin() as conn:
        for name in schema.teams:
            if name not in ("judgment", "run"):
                rows = schema.tables[name]
                deleted[name] += conn.execute(rows.delete().where(rows.c.team_id == team_id)).rowcount
    return {name: count for name, count in sorted(deleted.items()) if count}
