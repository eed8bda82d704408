"""People's votes on judgments: one per person and judgment (voting again replaces it), and their tally."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import col, select

from bot.store.judgments import Store
from bot.store.models import Feedback, utcnow


def record_feedback(store: Store, *, judgment_id: int, user_id: str, agree: bool) -> bool | None:
    """Store a person's vote on a judgment, replacing their earlier one; return the earlier vote, if any."""
    before = store.upsert(Feedback, {"judgment_id": judgment_id, "user_id": user_id},
                          {"agree": agree, "updated_at": utcnow()})
    return before.agree if before else None


def feedback_tally(store: Store, *, judgment_id: int) -> tuple[int, int]:
    """(agree, disagree) votes on a judgment."""
    with store.session() as session:
        rows = session.execute(select(Feedback.agree, func.count()).where(Feedback.judgment_id == judgment_id)
                               .group_by(col(Feedback.agree)))
        votes = {agree: count for agree, count in rows}
    return votes.get(True, 0), votes.get(False, 0)
