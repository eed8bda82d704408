"""People's votes on judgments: one per person and judgment (voting again replaces it), counted in the hourly
tallies, and the votes of one judgment."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import col, select

from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.counts.case_keys import case_key
from bot.store.counts.tallies import add_votes
from bot.store.tables.core import JUDGMENT
from bot.store.tables.history import Feedback, JudgmentTally, table_of
from bot.store.tables.trust import Label
from bot.store.trust.review import close_reviewed

if TYPE_CHECKING:
    from bot.store.database import Store


def record_feedback(store: Store, *, judgment_id: int, user_id: str, agree: bool) -> bool | None:
    """Store a person's vote on a judgment, replacing their earlier one, and count the change in the judgment's
    hourly tally (in one transaction); return the earlier vote, if any."""
    judgment, feedback = JUDGMENT, table_of(Feedback)
    now = utcnow()
    with store.engine.begin() as conn:
        texts = conn.execute(sa.select(judgment.c.team_id, judgment.c.channel_id, judgment.c.rubric_name,
                                       judgment.c.question, judgment.c.reference, judgment.c.answer, judgment.c.context)
                             .where(judgment.c.id == judgment_id).with_for_update()).one()  # one at a time
        key = case_key(texts.team_id, texts.channel_id, texts.rubric_name, texts.question, texts.reference, texts.answer,
                       context=texts.context)
        earlier = conn.execute(select(feedback.c.agree).where(feedback.c.judgment_id == judgment_id,
                                                              feedback.c.user_id == user_id)).scalar_one_or_none()
        labels = table_of(Label)
        said = conn.execute(select(sa.func.count()).select_from(feedback).where(
            feedback.c.case_key == key, feedback.c.user_id == user_id)).scalar_one() + conn.execute(
            select(sa.func.count()).select_from(labels).where(labels.c.case_key == key,
                                                              labels.c.user_id == user_id)).scalar_one()
        if not said:  # their first word on the case: a queued case is answered
            close_reviewed(conn, case_key=key, user_id=user_id, now=now)
        vote = conflict_insert(store.engine.dialect.name)(feedback).values(
            judgment_id=judgment_id, user_id=user_id, agree=agree, case_key=key, created_at=now, updated_at=now)
        conn.execute(vote.on_conflict_do_update(index_elements=[feedback.c.judgment_id, feedback.c.user_id],
                                                set_={"agree": agree, "case_key": key, "updated_at": now}))
        add_votes(conn, judgment, table_of(JudgmentTally), judgment_id, votes=int(earlier is None),
                  agreeing=int(agree) - int(bool(earlier)))
    return earlier


def feedback_tally(store: Store, *, judgment_id: int) -> tuple[int, int]:
    """(agree, disagree) votes on a judgment."""
    with store.session() as session:
        rows = session.execute(select(Feedback.agree, func.count()).where(Feedback.judgment_id == judgment_id)
                               .group_by(col(Feedback.agree)))
        votes = {agree: count for agree, count in rows}
    return votes.get(True, 0), votes.get(False, 0)
