"""What people said of the cases picked at random for review: their labels, and the votes that stand for them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlmodel import col

from bot.store.joins import InOrder
from bot.store.tables.core import JUDGMENT
from bot.store.tables.history import Feedback, table_of
from bot.store.tables.trust import Label, ReviewCase
from bot.store.trust.labels import standing_vote
from bot.store.trust.review import ANY_TEAM

if TYPE_CHECKING:
    from bot.store.database import Store


def random_share_pairs(store: Store, *, team_id: str | None, channel_id: str | None, rubric_name: str,
                       since: datetime | None = None, everywhere: bool = False,
                       judge_model: str | None = None) -> list[tuple[str, bool, bool]]:
    """(case, judge passed, person passed) for each person's word on a case picked at random for review (their
    label, else their vote that stands: an Agree says the verdict it was given on, a Disagree the other way), in a
    channel (team_id ANY_TEAM: in whichever workspace) or `everywhere`, on verdicts of `judge_model` when given. The
    judge's verdict is the one that sent the case to review: the nobody-chose sample is held to one verdict a case."""
    cases, judgments = table_of(ReviewCase), JUDGMENT
    voted = JUDGMENT.alias()
    where = [cases.c.random.is_(True), cases.c.rubric_name == rubric_name, judgments.c.passed.is_not(None)]
    if not everywhere:
        where.append(cases.c.channel_id.is_not_distinct_from(channel_id))
        if team_id != ANY_TEAM:
            where.append(cases.c.team_id.is_not_distinct_from(team_id))
    if judge_model is not None:
        where.append(judgments.c.judge_model == judge_model)
    labels = (sa.select(cases.c.case_key, judgments.c.passed, col(Label.passed))
              .select_from(cases.join(judgments, judgments.c.id == cases.c.judgment_id)
                           .join(Label, col(Label.case_key) == cases.c.case_key))
              .where(*where, col(Label.passed).is_not(None), *([col(Label.updated_at) >= since] if since else [])))
    feedback = table_of(Feedback)
    joined: sa.Join
    if everywhere:  # from the cases picked at random (a few) to their votes, not from every vote to its case
        joined = InOrder(InOrder(InOrder(cases, feedback, feedback.c.case_key == cases.c.case_key), judgments,
                                 judgments.c.id == cases.c.judgment_id), voted, voted.c.id == feedback.c.judgment_id)
    else:  # a channel's cases are found by its index, their votes by theirs
        joined = (cases.join(judgments, judgments.c.id == cases.c.judgment_id)
                  .join(feedback, feedback.c.case_key == cases.c.case_key)
                  .join(voted, voted.c.id == feedback.c.judgment_id))
    votes = (sa.select(cases.c.case_key, judgments.c.passed, feedback.c.agree, voted.c.passed, feedback.c.id)
             .select_from(joined)
             .where(*where, voted.c.passed.is_not(None), standing_vote(),
                    *([feedback.c.updated_at >= since] if since else [])))
    with store.engine.connect() as conn:
        said = [(key, bool(judge), bool(person)) for key, judge, person in conn.execute(labels)]
        voting = list(conn.execute(votes))
        if everywhere:  # every vote, in the order given, as reading them from the votes gave them
            voting.sort(key=lambda row: row.id)
        said += [(key, bool(judge), bool(on) if agree else not on) for key, judge, agree, on, _ in voting]
    return said
