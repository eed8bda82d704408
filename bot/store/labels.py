"""People's labels of judgments: what a person says a verdict should have been, and every label and vote as the pairs
calibration compares."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, exists
from sqlmodel import col, select

from bot.calibration import LabeledVerdict
from bot.records import RowState
from bot.store.judgments import Store
from bot.store.models import Feedback, Judgment, Label, utcnow


def save_label(store: Store, *, judgment: Judgment, user_id: str, source: str, values: dict[str, Any],
               passed: bool | None, tag: str | None, headline: float | None, note: str | None) -> Label | None:
    """Keep a person's label of a judgment, replacing their earlier one; return the label it replaced, if any."""
    return store.upsert(Label, {"judgment_id": judgment.id, "user_id": user_id}, {
        "team_id": judgment.team_id, "channel_id": judgment.channel_id, "source": source,
        "rubric_name": judgment.rubric_name, "rubric_hash": judgment.rubric_hash, "judge_model": judgment.judge_model,
        "values": values, "passed": passed, "tag": tag, "headline": headline, "note": note, "updated_at": utcnow()})


def labels_of(store: Store, judgment_id: int) -> list[Label]:
    """The labels of one judgment, the newest last."""
    with store.session() as session:
        return list(session.exec(select(Label).where(Label.judgment_id == judgment_id)
                                 .order_by(col(Label.updated_at), col(Label.id))))


def value_at(values: dict[str, Any] | None, path: str) -> Any:
    """The value at a dotted path of nested dicts, or None when any part of the path is missing."""
    found: Any = values
    for part in path.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found


def numbers_at(values: dict[str, Any] | None, paths: Sequence[str], *, dotted: bool = False) -> dict[str, float]:
    """The numbers at `paths` (nested dicts, or flat keys that are dotted paths); a path without a number is left out."""
    found: dict[str, float] = {}
    for path in paths:
        value = (values or {}).get(path) if dotted else value_at(values, path)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[path] = float(value)
    return found


def _scope(rubric_name: str, judge_model: str | None, channel_id: str | None, team_id: str | None,
           everywhere: bool) -> list[ColumnElement[bool]]:
    """Which judgments count: scored, of the rubric (and judge), in the channel or the terminal unless everywhere."""
    where = [col(Judgment.status) == RowState.SCORED, col(Judgment.rubric_name) == rubric_name]
    if judge_model is not None:
        where.append(col(Judgment.judge_model) == judge_model)
    if channel_id is not None:
        where.append(col(Judgment.channel_id) == channel_id)
    elif not everywhere:
        where.append(col(Judgment.channel_id).is_(None))
    if team_id is not None:
        where.append(col(Judgment.team_id) == team_id)
    return where


def labels_and_votes(store: Store, where: Sequence[ColumnElement[bool]], since: datetime | None = None
                     ) -> tuple[Sequence[tuple[Label, Judgment]], Sequence[tuple[Feedback, Judgment]]]:
    """The labels, and the votes of people who gave no label of the same judgment, on the judgments `where` picks."""
    labeled = and_(col(Label.judgment_id) == col(Feedback.judgment_id), col(Label.user_id) == col(Feedback.user_id))
    with store.session() as session:
        label_rows = session.exec(select(Label, Judgment).join(Judgment, col(Judgment.id) == col(Label.judgment_id))
                                  .where(*where, *([col(Label.updated_at) >= since] if since else []))).all()
        vote_rows = session.exec(select(Feedback, Judgment).join(Judgment, col(Judgment.id) == col(Feedback.judgment_id))
                                 .where(*where, ~exists().where(labeled),
                                        *([col(Feedback.updated_at) >= since] if since else []))).all()
    return label_rows, vote_rows


def labeled_judgments(store: Store, *, rubric_name: str, channel_id: str | None = None, everywhere: bool = False
                      ) -> tuple[Sequence[tuple[Label, Judgment]], Sequence[tuple[Feedback, Judgment]]]:
    """The labels and votes (as `labels_and_votes`) on scored judgments of a rubric: in one channel, the terminal's,
    or everywhere."""
    return labels_and_votes(store, _scope(rubric_name, None, channel_id, None, everywhere))


def labeled_verdicts(store: Store, *, rubric_name: str, judge_model: str | None = None, channel_id: str | None = None,
                     team_id: str | None = None, since: datetime | None = None, numeric: Sequence[str] = (),
                     everywhere: bool = False) -> list[LabeledVerdict]:
    """Every label and vote on scored judgments of a rubric as (judge, person) pairs, the oldest first.

    `channel_id` None means the judgments made in a terminal, unless `everywhere`. A person's label of a judgment
    stands in for their vote on it. An Agree says the judge was right in everything; a Disagree says only that
    pass/fail should have been the other way. `numeric` names the dotted paths whose values are compared.
    """
    where = _scope(rubric_name, judge_model, channel_id, team_id, everywhere)
    label_rows, vote_rows = labels_and_votes(store, where, since)
    found = [_from_label(label, judgment, numeric) for label, judgment in label_rows]
    found += [_from_vote(vote, judgment, numeric) for vote, judgment in vote_rows]
    return sorted(found, key=lambda verdict: verdict.labeled_at)


def _judge_side(judgment: Judgment, numeric: Sequence[str]) -> dict[str, Any]:
    return {"judge_passed": judgment.passed, "judge_tag": judgment.tag,
            "judge_values": numbers_at(judgment.output, numeric), "judge_model": judgment.judge_model,
            "rubric_hash": judgment.rubric_hash}


def _from_label(label: Label, judgment: Judgment, numeric: Sequence[str]) -> LabeledVerdict:
    return LabeledVerdict(**_judge_side(judgment, numeric), human_passed=label.passed, human_tag=label.tag,
                          human_values=numbers_at(label.values, numeric, dotted=True), labeled_at=label.updated_at)


def _from_vote(vote: Feedback, judgment: Judgment, numeric: Sequence[str]) -> LabeledVerdict:
    judge = _judge_side(judgment, numeric)
    if vote.agree:
        human = {"human_passed": judgment.passed, "human_tag": judgment.tag, "human_values": judge["judge_values"]}
    else:
        human = {"human_passed": None if judgment.passed is None else not judgment.passed}
    return LabeledVerdict(**judge, **human, labeled_at=vote.updated_at)
