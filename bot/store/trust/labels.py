"""People's labels of judgments: what a person says a verdict should have been, saved one per person and case,
and every label and vote read back with the judgment it is about (bot.trust reads them as pairs to compare)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlmodel import col, select

from bot.records import RowState
from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.counts.case_keys import judgment_case
from bot.store.counts.votes import vote_stands
from bot.store.tables.as_read import Judgment
from bot.store.tables.core import JUDGMENT
from bot.store.tables.history import Feedback, JudgmentTally, table_of
from bot.store.tables.trust import Label, ReviewCase
from bot.store.trust.review import close_reviewed

if TYPE_CHECKING:
    from bot.store.database import Store


def save_label(store: Store, *, judgment: Judgment, user_id: str, source: str, values: dict[str, Any],
               passed: bool | None, pass_from: str | None, tag: str | None, headline: float | None,
               note: str | None) -> bool:
    """Keep a person's label of a judgment, in one transaction with dropping their earlier labels of the same case (of
    this judgment, or of another of the same texts, whichever run or file it came with); whether there were any."""
    key, now, table = judgment_case(judgment), utcnow(), table_of(Label)
    given = {"team_id": judgment.team_id, "channel_id": judgment.channel_id, "source": source, "case_key": key,
             "rubric_name": judgment.rubric_name, "rubric_hash": judgment.rubric_hash,
             "judge_model": judgment.judge_model, "values": values, "passed": passed, "pass_from": pass_from, "tag": tag,
             "headline": headline, "note": note, "updated_at": now}
    with store.engine.begin() as conn:
        earlier = conn.execute(sa.select(sa.func.count()).select_from(table).where(
            table.c.user_id == user_id, sa.or_(table.c.case_key == key, table.c.judgment_id == judgment.id))).scalar_one()
        conn.execute(table.delete().where(table.c.case_key == key, table.c.user_id == user_id,
                                          table.c.judgment_id != judgment.id))
        if not earlier:  # a label given again (a file judged twice) leaves a case queued for a second opinion queued
            close_reviewed(conn, case_key=key, user_id=user_id, now=now)
        insert = conflict_insert(store.engine.dialect.name)(table).values(
            judgment_id=judgment.id, user_id=user_id, created_at=now, **given)
        conn.execute(insert.on_conflict_do_update(index_elements=[table.c.judgment_id, table.c.user_id], set_=given))
    return bool(earlier)


def labels_of(store: Store, judgment_id: int) -> list[Label]:
    """The labels of one judgment, the newest last."""
    with store.session() as session:
        return list(session.exec(select(Label).where(Label.judgment_id == judgment_id)
                                 .order_by(col(Label.updated_at), col(Label.id))))


@dataclass(frozen=True)
class Scope:
    """Which judgments count: scored, of the rubric (and judge), in the channel (None: the terminal's) unless
    everywhere, of the workspace when given."""

    rubric_name: str | None  # None: every rubric
    judge_model: str | None = None
    channel_id: str | None = None
    team_id: str | None = None
    everywhere: bool = False

    def holds(self, judgment: Any) -> bool:
        """Whether a judgment (an entity, or a row holding SCOPE_COLUMNS) counts."""
        return self.counts(judgment.status, judgment.rubric_name, judgment.judge_model, judgment.channel_id,
                           judgment.team_id)

    def counts(self, status: str, rubric_name: str, judge_model: str, channel_id: str | None,
               team_id: str | None) -> bool:
        """Whether a judgment of these SCOPE_COLUMNS counts."""
        return (status == RowState.SCORED and self.rubric_name in (None, rubric_name)
                and (self.judge_model is None or judge_model == self.judge_model)
                and (self.everywhere and self.channel_id is None or channel_id == self.channel_id)
                and (self.team_id is None or team_id == self.team_id))


VOTE_COLUMNS = (col(Feedback.judgment_id), col(Feedback.user_id), col(Feedback.agree), col(Feedback.updated_at),
                col(Feedback.case_key))
# What tells whether a judgment counts, in the order of `Scope.counts`.
SCOPE_COLUMNS = (JUDGMENT.c.status, JUDGMENT.c.rubric_name, JUDGMENT.c.judge_model, JUDGMENT.c.channel_id,
                 JUDGMENT.c.team_id)
# What a labeled rubric's names are read with besides SCOPE_COLUMNS.
VERDICT_COLUMNS = (JUDGMENT.c.id, JUDGMENT.c.passed, JUDGMENT.c.tag, JUDGMENT.c.rubric_hash)


def _given(column: Any, since: datetime | None, until: datetime | None = None) -> list[Any]:
    """Conditions for `column` in [since, until), either bound left out when None."""
    return [*([column >= since] if since else []), *([column < until] if until else [])]


def standing_vote() -> Any:
    """A vote that stands: its person gave no label of the same case (their label stands in for their votes) and no
    later vote on it (on another judgment of the same texts), so that a case counts once a person. Each EXISTS asks
    for a constant rather than every column, so that SQLite answers the first one from its index alone."""
    return vote_stands(table_of(Feedback), table_of(Label))


def _joined(store: Store, since: datetime | None, named: Sequence[Any]) -> tuple[Sequence[Any], Sequence[Any]]:
    """The labels given since `since`, as rows of (Label, *SCOPE_COLUMNS, *named), and the votes, as rows of
    (*VOTE_COLUMNS, *SCOPE_COLUMNS, *named), of people who gave no label of the same judgment: in the order given.

    Read from the labels and votes (people's clicks, few) joined to the judgments they name by id: a channel of a
    million judgments costs what its labels cost, and the database never starts from the channel's judgments.
    """
    with store.session() as session:
        labels = session.execute(  # a label is the ORM's entity; a vote's row, columns only, comes faster without it
            sa.select(Label, *SCOPE_COLUMNS, *named)
            .join(JUDGMENT, JUDGMENT.c.id == col(Label.judgment_id))
            .where(*_given(col(Label.updated_at), since)).order_by(col(Label.id))).all()
        votes = session.connection().execute(
            sa.select(*VOTE_COLUMNS, *SCOPE_COLUMNS, *named).join(JUDGMENT, JUDGMENT.c.id == col(Feedback.judgment_id))
            .where(*_given(col(Feedback.updated_at), since), standing_vote()).order_by(col(Feedback.id))).all()
    return labels, votes


def _judgment(row: Any) -> Judgment:
    """The judgment at the end of a row of `_joined` that named every column of JUDGMENT."""
    return Judgment.of(row[-len(JUDGMENT.c):])


SCOPED = slice(1, 1 + len(SCOPE_COLUMNS))  # where SCOPE_COLUMNS are in a label's row; a vote's follow VOTE_COLUMNS
VOTE_SCOPED = slice(len(VOTE_COLUMNS), len(VOTE_COLUMNS) + len(SCOPE_COLUMNS))


def labels_and_votes(store: Store, scope: Scope, since: datetime | None = None, *,
                     columns: Sequence[Any] | None = None) -> tuple[Sequence[tuple[Any, Any]], Sequence[tuple[Any, Any]]]:
    """The labels, and the votes of people who gave no label of the same judgment, given since `since` on the
    judgments in `scope`: each with its judgment (a row holding SCOPE_COLUMNS and `columns`, when given). A vote is a
    row of VOTE_COLUMNS (with `columns`, the same row holds the judgment's). Read as `_joined` reads them.
    """
    labels, votes = _joined(store, since, tuple(JUDGMENT.c) if columns is None else columns)
    labels = [row for row in labels if scope.counts(*row[SCOPED])]
    votes = [row for row in votes if scope.counts(*row[VOTE_SCOPED])]
    if columns is None:
        return [(row.Label, _judgment(row)) for row in labels], [(row, _judgment(row)) for row in votes]
    return [(row.Label, row) for row in labels], [(row, row) for row in votes]


def labeled_judgments(store: Store, *, rubric_name: str, channel_id: str | None = None, everywhere: bool = False
                      ) -> tuple[Sequence[tuple[Label, Judgment]], Sequence[tuple[Any, Judgment]]]:
    """The labels and votes (as `labels_and_votes`: a vote is a row of VOTE_COLUMNS) on scored judgments of a
    rubric: in one channel, the terminal's, or everywhere."""
    return labels_and_votes(store, Scope(rubric_name, channel_id=channel_id, everywhere=everywhere))


@dataclass(frozen=True)
class PassGroup:
    """`count` labels or votes on judgments of one rubric that are alike in all pass/fail agreement weighs: the
    judgment's judge and rubric text, the judge's pass/fail, what the person said (a label's pass/fail, or a vote's
    Agree), whether they were given from the cut on (`recent`), and the case (several people's labels of one case
    are resampled together)."""

    rubric_name: str
    judge_model: str
    rubric_hash: str
    judge_passed: bool | None
    said: bool | None  # a label's pass/fail, or a vote's Agree (True) or Disagree (False)
    vote: bool
    recent: bool
    count: int
    case_key: str | None = None


def counted_passes(store: Store, *, channel_id: str | None, team_id: str | None, since: datetime, until: datetime,
                   cut: datetime) -> list[PassGroup]:
    """The labels and votes given in [since, until) on scored judgments in the channel (None: the terminal's) of
    every rubric, as `label_and_vote_rows` reads them one by one, counted in the database instead, per case.

    The groups are read from the labels and votes joined to their judgments by id, as `_joined` reads them, and
    narrowed to the channel after: there are as many groups as labeled cases, whatever the number of votes on them.
    """
    scope = Scope(None, channel_id=channel_id, team_id=team_id)
    alike = (*SCOPE_COLUMNS, JUDGMENT.c.rubric_hash, JUDGMENT.c.passed)
    by_label = (col(Label.passed), col(Label.updated_at) >= cut, col(Label.case_key))
    by_vote = (col(Feedback.agree), col(Feedback.updated_at) >= cut, col(Feedback.case_key))
    labels = (sa.select(*alike, *by_label, sa.func.count()).select_from(Label)
              .join(JUDGMENT, JUDGMENT.c.id == col(Label.judgment_id))
              .where(*_given(col(Label.updated_at), since, until)).group_by(*alike, *by_label))
    votes = (sa.select(*alike, *by_vote, sa.func.count()).select_from(Feedback)
             .join(JUDGMENT, JUDGMENT.c.id == col(Feedback.judgment_id))
             .where(*_given(col(Feedback.updated_at), since, until), standing_vote()).group_by(*alike, *by_vote))
    with store.engine.connect() as conn:
        label_rows, vote_rows = conn.execute(labels).all(), conn.execute(votes).all()
    return [PassGroup(name, judge_model, rubric_hash, judge_passed, said, vote, bool(recent), count, case_key)
            for rows, vote in ((label_rows, False), (vote_rows, True))
            for status, name, judge_model, channel, team, rubric_hash, judge_passed, said, recent, case_key, count in rows
            if scope.counts(status, name, judge_model, channel, team)]


def labeled_rubric_names(store: Store, *, channel_id: str | None, team_id: str | None,
                         since: datetime | None = None) -> list[str]:
    """The rubrics whose scored judgments in the channel (None: the terminal's) have labels or votes, by name."""
    label_rows, vote_rows = labels_and_votes(store, Scope(None, channel_id=channel_id, team_id=team_id), since,
                                             columns=VERDICT_COLUMNS)
    return sorted({judgment.rubric_name for _, judgment in (*label_rows, *vote_rows)})


def trust_state(store: Store) -> tuple[Any, ...]:
    """What calibration's figures are read from, as a few values that change whenever they may: every label's and
    vote's id, judgment, time of change (and a vote's Agree) as one digest each, the count and highest id of the
    review cases (what marks one picked at random is set when it is made), the highest judgment id and the scored
    rows of the hourly tallies. Equal states read equal figures; a label, vote, review case or judgment given, changed
    or removed since makes another, and so does a judgment scored in place (a judge error judged again).

    A digest rather than the latest time of change: a transaction that took its moment before another's and commits
    after it stamps its row earlier than the latest one already there."""
    label, vote, case, judgment = table_of(Label), table_of(Feedback), table_of(ReviewCase), JUDGMENT
    tally = table_of(JudgmentTally)
    parts = [_digest(label, label.c.id, label.c.judgment_id, label.c.updated_at),
             _digest(vote, vote.c.id, vote.c.judgment_id, vote.c.updated_at, vote.c.agree),
             *(sa.select(figure).select_from(case).scalar_subquery()
               for figure in (sa.func.count(), sa.func.max(case.c.id))),
             sa.select(sa.func.max(judgment.c.id)).scalar_subquery(),  # from the top of its index
             sa.select(sa.func.sum(tally.c.rows)).where(tally.c.status == RowState.SCORED).scalar_subquery()]
    with store.engine.connect() as conn:
        found = conn.execute(sa.select(*parts)).one()
    return (*(hashlib.blake2b((text or "").encode(), digest_size=16).digest() for text in found[:2]), *found[2:])


def _digest(table: sa.Table, *columns: Any) -> Any:
    """SQL: every row's `columns` as one text (the rows in the order read; a row's columns apart by spaces)."""
    row: sa.ColumnElement[str] = sa.cast(columns[0], sa.Text)
    for column in columns[1:]:
        row = row + " " + sa.func.coalesce(sa.cast(column, sa.Text), "")
    return sa.select(sa.func.aggregate_strings(row, ",")).select_from(table).scalar_subquery()


def first_given(store: Store, since: datetime) -> tuple[Any, Any]:
    """When the first label and the first vote at or after `since` were given (None where there is none). Two
    periods whose first label and vote are the same leave in the same labels and votes (none was given between
    their starts), so their figures are the same while the history stays as it was (`trust_state`)."""
    label, vote = table_of(Label), table_of(Feedback)
    parts = [sa.select(sa.func.min(table.c.updated_at)).where(table.c.updated_at >= since).scalar_subquery()
             for table in (label, vote)]
    with store.engine.connect() as conn:
        first_label, first_vote = conn.execute(sa.select(*parts)).one()
    return first_label, first_vote

