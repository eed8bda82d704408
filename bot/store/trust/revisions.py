"""Channels' revisions of rubrics: proposed by alignment, accepted (in force in that channel) or discarded, each with
its text, its figures and who decided."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import update
from sqlmodel import col, select

from bot.store.clock import utcnow
from bot.store.tables.trust import RubricRevision

if TYPE_CHECKING:
    from bot.store.database import Store

PROPOSED, ACCEPTED, DISCARDED, REPLACED = "proposed", "accepted", "discarded", "replaced"
EARLIER_HASHES = "earlier_hashes"  # in a revision's figures: the hashes its text had before retention took copies out


def propose_revision(store: Store, *, team_id: str, channel_id: str, rubric_name: str, version: str,
                     content_hash: str, based_on: str, content: str, figures: dict[str, Any],
                     user_id: str) -> RubricRevision:
    """Keep a proposed revision of a rubric for a channel; the record made."""
    revision = RubricRevision(team_id=team_id, channel_id=channel_id, rubric_name=rubric_name, version=version,
                              content_hash=content_hash, based_on=based_on, content=content, figures=figures,
                              proposed_by=user_id)
    with store.session() as session:
        session.add(revision)
        session.commit()
        session.refresh(revision)
        return revision


def revision_of(store: Store, revision_id: int) -> RubricRevision | None:
    """One revision."""
    with store.session() as session:
        return session.get(RubricRevision, revision_id)


def set_message(store: Store, *, revision_id: int, message_ts: str) -> None:
    """The card a proposed revision is shown on."""
    with store.session() as session:
        session.execute(update(RubricRevision).where(col(RubricRevision.id) == revision_id)
                        .values(message_ts=message_ts))
        session.commit()


def decide_revision(store: Store, *, revision_id: int, team_id: str, channel_id: str, accept: bool,
                    user_id: str) -> RubricRevision | None:
    """Accept (it is in force in its channel from now, the one before it replaced) or discard a proposed revision
    of this channel; None when it is not a proposed revision of this channel (decided already, or elsewhere)."""
    now = utcnow()
    with store.session() as session:
        found = session.get(RubricRevision, revision_id)
        if found is None or (found.team_id, found.channel_id) != (team_id, channel_id) or found.state != PROPOSED:
            return None
        if accept:
            session.execute(update(RubricRevision).where(
                col(RubricRevision.team_id) == team_id, col(RubricRevision.channel_id) == channel_id,
                col(RubricRevision.rubric_name) == found.rubric_name, col(RubricRevision.state) == ACCEPTED)
                .values(state=REPLACED))
        taken = session.execute(update(RubricRevision).where(col(RubricRevision.id) == revision_id,
                                                             col(RubricRevision.state) == PROPOSED)
                                .values(state=ACCEPTED if accept else DISCARDED, decided_by=user_id, decided_at=now))
        session.commit()
        if taken.rowcount != 1:  # type: ignore[attr-defined]  # another click decided it first
            return None
        return session.get(RubricRevision, revision_id)


def revision_in_force(store: Store, *, team_id: str | None, channel_id: str | None,
                      rubric_name: str) -> RubricRevision | None:
    """The revision of a rubric accepted in a channel, if one is in force there."""
    if team_id is None or channel_id is None:
        return None
    with store.session() as session:
        return session.exec(select(RubricRevision).where(
            RubricRevision.team_id == team_id, RubricRevision.channel_id == channel_id,
            RubricRevision.rubric_name == rubric_name, RubricRevision.state == ACCEPTED)).first()


def revision_by_hash(store: Store, content_hash: str) -> RubricRevision | None:
    """A revision by the hash of its rubric (any state: a judgment made with it names it so), or by a hash it had
    before retention took the examples copied from old cases out of it."""
    with store.session() as session:
        found = session.exec(select(RubricRevision).where(RubricRevision.content_hash == content_hash)
                             .order_by(col(RubricRevision.id))).first()
        if found is not None:
            return found
        return next((revision for revision in session.exec(select(RubricRevision).order_by(col(RubricRevision.id)))
                     if content_hash in earlier_hashes(revision)), None)  # a channel has a handful of revisions


def earlier_hashes(revision: RubricRevision) -> list[str]:
    """The hashes a revision's text had before retention took copies of old cases' texts out of it."""
    return [str(value) for value in (revision.figures or {}).get(EARLIER_HASHES, [])]


def all_revisions(store: Store) -> list[RubricRevision]:
    """Every revision, the oldest first: the rubrics judgments may have been made with."""
    with store.session() as session:
        return list(session.exec(select(RubricRevision).order_by(col(RubricRevision.id))))
