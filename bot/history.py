"""Reading the history back: latest judgments and per-model figures, always scoped to one channel or one person."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import case, func
from sqlmodel import select

from bot.models import Feedback, Judgment
from bot.store import Store

JUDGED = ("scored", "invalid", "error")  # rows a judge looked at (not pending, not malformed input)


def _in_channel(channel_id: str | None) -> Any:
    """Rows of one Slack channel; with None, rows judged outside Slack (in a terminal)."""
    return Judgment.channel_id.is_(None) if channel_id is None else Judgment.channel_id == channel_id


def recent_in_channel(store: Store, channel_id: str | None, *, limit: int = 10) -> list[Judgment]:
    """The newest judgments made in one channel (None: in a terminal), newest first."""
    with store.session() as session:
        statement = (
            select(Judgment)
            .where(_in_channel(channel_id), Judgment.status.in_(JUDGED))
            .order_by(Judgment.id.desc())
            .limit(limit)
        )
        return list(session.exec(statement))


def recent_by_user(store: Store, team_id: str, user_id: str, *, limit: int = 10) -> list[Judgment]:
    """The newest judgments one person asked for, in any channel of their workspace, newest first."""
    with store.session() as session:
        statement = (
            select(Judgment)
            .where(Judgment.team_id == team_id, Judgment.user_id == user_id, Judgment.status.in_(JUDGED))
            .order_by(Judgment.id.desc())
            .limit(limit)
        )
        return list(session.exec(statement))


def newest_on_message(store: Store, channel_id: str, message_ts: str) -> Judgment | None:
    """The latest judgment shown in one message (a Retry puts a new one where an error was)."""
    with store.session() as session:
        statement = (select(Judgment).where(Judgment.channel_id == channel_id, Judgment.message_ts == message_ts)
                     .order_by(Judgment.id.desc()).limit(1))
        return session.exec(statement).first()


@dataclass
class Figures:
    """How one model under test did on one rubric in one channel over a period."""

    model_name: str | None
    rubric_name: str
    judged: int = 0
    scored: int = 0
    mean_headline: float | None = None
    passed: int = 0
    errors: int = 0
    tags: dict[str, int] = field(default_factory=dict)
    votes: int = 0
    agreeing: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Share of scored rows that passed."""
        return self.passed / self.scored if self.scored else None

    @property
    def agreement(self) -> float | None:
        """Share of human votes that agreed with the judge."""
        return self.agreeing / self.votes if self.votes else None


def in_channel(channel_id: str | None, since: datetime | None = None, until: datetime | None = None) -> list[Any]:
    """Conditions for the judged rows of one channel (None: the terminal's), made in [since, until)."""
    scope = [_in_channel(channel_id), Judgment.status.in_(JUDGED)]
    if since is not None:
        scope.append(Judgment.created_at >= since)
    if until is not None:
        scope.append(Judgment.created_at < until)
    return scope


def channel_stats(
    store: Store, channel_id: str | None, *, since: datetime | None = None, until: datetime | None = None,
    model: str | None = None,
) -> list[Figures]:
    """Per model and rubric figures of one channel (None: the terminal's), computed by the database."""
    scope = in_channel(channel_id, since, until)
    if model is not None:
        scope.append(func.lower(Judgment.model_name) == model.lower())
    group = (Judgment.model_name, Judgment.rubric_name)
    scored = Judgment.status == "scored"
    totals = (
        select(*group, func.count(), func.sum(case((scored, 1), else_=0)), func.avg(Judgment.headline),
               func.sum(case((Judgment.passed.is_(True), 1), else_=0)),
               func.sum(case((Judgment.status.in_(("invalid", "error")), 1), else_=0)))
        .where(*scope).group_by(*group)
    )
    tags = select(*group, Judgment.tag, func.count()).where(*scope, scored, Judgment.tag.is_not(None)).group_by(
        *group, Judgment.tag)
    votes = (
        select(*group, func.count(Feedback.id), func.sum(case((Feedback.agree.is_(True), 1), else_=0)))
        .join(Feedback, Feedback.judgment_id == Judgment.id).where(*scope, scored).group_by(*group)
    )
    figures: dict[tuple[str | None, str], Figures] = {}
    with store.session() as session:
        for model_name, rubric, judged, n_scored, mean, passed, errors in session.execute(totals):
            figures[(model_name, rubric)] = Figures(
                model_name, rubric, judged, int(n_scored or 0), None if mean is None else float(mean),
                int(passed or 0), int(errors or 0))
        for model_name, rubric, tag, count in session.execute(tags):
            figures[(model_name, rubric)].tags[tag] = count
        for model_name, rubric, count, agreeing in session.execute(votes):
            figures[(model_name, rubric)].votes, figures[(model_name, rubric)].agreeing = count, int(agreeing or 0)
    return sorted(figures.values(), key=lambda f: ((f.model_name or "").lower(), f.rubric_name))
