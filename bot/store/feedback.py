"""What people add to the history: their votes on judgments, and the model under test each one last named."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import select

from bot.store.judgments import Store
from bot.store.models import Feedback, UserSetting, utcnow


def record_feedback(store: Store, judgment_id: int, user_id: str, *, agree: bool) -> bool | None:
    """Store a person's vote on a judgment, replacing their earlier one; return the earlier vote, if any."""
    before = store.upsert(Feedback, {"judgment_id": judgment_id, "user_id": user_id},
                          {"agree": agree, "updated_at": utcnow()})
    return before.agree if before else None


def feedback_tally(store: Store, judgment_id: int) -> tuple[int, int]:
    """(agree, disagree) votes on a judgment."""
    with store.session() as session:
        rows = session.execute(select(Feedback.agree, func.count()).where(Feedback.judgment_id == judgment_id)
                               .group_by(Feedback.agree))
        votes = {agree: count for agree, count in rows}
    return votes.get(True, 0), votes.get(False, 0)


def remembered_model(store: Store, team_id: str, user_id: str) -> str | None:
    """The model under test this person named last."""
    with store.session() as session:
        setting = session.exec(select(UserSetting).where(
            UserSetting.team_id == team_id, UserSetting.user_id == user_id)).first()
        return setting.model_name if setting else None


def remember_model(store: Store, team_id: str, user_id: str, model_name: str | None) -> None:
    """Keep the model under test this person named, for the next time."""
    store.upsert(UserSetting, {"team_id": team_id, "user_id": user_id},
                 {"model_name": model_name, "updated_at": utcnow()})
