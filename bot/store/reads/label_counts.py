"""What people said of a channel's judgments, counted per model under test and rubric: every label (a correction, a
CSV's human_ columns) and every vote that stands, for the stats and the digest's figures (read over the Core tables)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bot.records import RowState
from bot.store.counts.tallies import KEY_LENGTH, key_of
from bot.store.counts.votes import vote_stands
from bot.store.tables.core import FEEDBACK, JUDGMENT, LABEL

if TYPE_CHECKING:
    from bot.store.database import Store


@dataclass(frozen=True)
class Said:
    """`count` labels or votes on scored judgments of one case, alike in the judge's pass/fail and what the person
    said: a label's pass/fail (None: not given), or a vote's Agree (True) or Disagree (False)."""

    judge_passed: bool | None
    said: bool | None
    vote: bool
    case_key: str | None
    count: int


def _judged(since: datetime | None, until: datetime | None, model: str | None) -> list[Any]:
    """Conditions on the judgment of a label or vote: judged in [since, until), of the model under test when given
    (matched as the stats match it). The channel is not among them: it is read with the counts, so the database starts
    from the labels and votes (few), not from the channel's judgments (a million)."""
    j = JUDGMENT.c
    where = [] if since is None else [j.judged_at >= since]
    where += [] if until is None else [j.judged_at < until]
    where += [] if model is None else [sa.func.lower(key_of(j.model_name)) == model.lower()[:KEY_LENGTH]]
    return where


def said_by_model(store: Store, *, channel_id: str | None, since: datetime | None = None,
                  until: datetime | None = None, model: str | None = None) -> dict[tuple[str, str], list[Said]]:
    """Every label, and every vote of a person who gave no label of the same case (their latest), on the scored
    judgments of one channel (None: the terminal's) judged in [since, until), per (model under test as the tallies
    key it, rubric).

    Read from the labels and votes joined to their judgments by id, counted per case in the database, and narrowed
    to the channel's scored judgments after.
    """
    j, label, voted = JUDGMENT.c, LABEL.c, FEEDBACK.c
    group = (j.channel_id, j.status, key_of(j.model_name), j.rubric_name, j.passed)
    where = _judged(since, until, model)
    labels = (sa.select(*group, label.passed, label.case_key, sa.func.count()).select_from(LABEL)
              .join(JUDGMENT, j.id == label.judgment_id).where(*where)
              .group_by(*group, label.passed, label.case_key))
    votes = (sa.select(*group, voted.agree, voted.case_key, sa.func.count()).select_from(FEEDBACK)
             .join(JUDGMENT, j.id == voted.judgment_id).where(*where, vote_stands(FEEDBACK, LABEL))
             .group_by(*group, voted.agree, voted.case_key))
    found: dict[tuple[str, str], list[Said]] = {}
    with store.engine.connect() as conn:
        for statement, vote in ((labels, False), (votes, True)):
            for channel, status, key, rubric, judge_passed, said, case_key, count in conn.execute(statement):
                if channel == channel_id and status == RowState.SCORED:
                    found.setdefault((key, rubric), []).append(Said(judge_passed, said, vote, case_key, int(count)))
    return found
