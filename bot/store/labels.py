"""People's labels of judgments: what a person says a verdict should have been, and every label and vote as the pairs
calibration compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from bot.calibration import LabeledVerdict
from bot.records import RowState
from bot.store.judgments import Store, id_chunks
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
        return (judgment.status == RowState.SCORED and self.rubric_name in (None, judgment.rubric_name)
                and (self.judge_model is None or judgment.judge_model == self.judge_model)
                and (self.everywhere and self.channel_id is None or judgment.channel_id == self.channel_id)
                and (self.team_id is None or judgment.team_id == self.team_id))


VOTE_COLUMNS = (col(Feedback.judgment_id), col(Feedback.user_id), col(Feedback.agree), col(Feedback.updated_at))
# What a labeled verdict reads of a judgment, and what tells whether the judgment counts.
VERDICT_COLUMNS = (col(Judgment.id), col(Judgment.passed), col(Judgment.tag), col(Judgment.output),
                   col(Judgment.judge_model), col(Judgment.rubric_hash), col(Judgment.status), col(Judgment.rubric_name),
                   col(Judgment.channel_id), col(Judgment.team_id))


def labels_and_votes(store: Store, scope: Scope, since: datetime | None = None, *,
                     columns: Sequence[Any] | None = None) -> tuple[Sequence[tuple[Label, Any]], Sequence[tuple[Any, Any]]]:
    """The labels, and the votes of people who gave no label of the same judgment, on the judgments in `scope`:
    each with its judgment (only `columns` of it, when given; they include what `Scope.holds` reads). A vote is a
    row of VOTE_COLUMNS.

    Read from the labels and votes (people's clicks, few) to the judgments they name by id, a page at a time, the
    scope checked here: a channel of a million judgments costs what its labels cost, and the database never starts
    from the channel's judgments.
    """
    with store.session() as session:
        labels = session.exec(select(Label).where(*([col(Label.updated_at) >= since] if since else []))).all()
        votes = session.execute(select(*VOTE_COLUMNS).where(*([col(Feedback.updated_at) >= since] if since else []))).all()
        picked = select(Judgment) if columns is None else select(*columns)
        found: dict[int, Any] = {}
        named = {label.judgment_id for label in labels} | {vote.judgment_id for vote in votes}
        for chunk in id_chunks(sorted(named)):
            statement = picked.where(col(Judgment.id).in_(chunk))
            rows = session.exec(statement).all() if columns is None else session.execute(statement).all()
            found.update((row.id, row) for row in rows if scope.holds(row))
        labeled: set[tuple[int, str]] = set()  # a person's label of a judgment stands in for their vote on it
        for chunk in id_chunks(sorted({vote.judgment_id for vote in votes if vote.judgment_id in found})):
            labeled.update((judgment_id, user) for judgment_id, user in session.execute(
                select(col(Label.judgment_id), col(Label.user_id)).where(col(Label.judgment_id).in_(chunk))))
    label_rows = [(label, found[label.judgment_id]) for label in labels if label.judgment_id in found]
    vote_rows = [(vote, found[vote.judgment_id]) for vote in votes
                 if vote.judgment_id in found and (vote.judgment_id, vote.user_id) not in labeled]
    return label_rows, vote_rows


def labeled_judgments(store: Store, *, rubric_name: str, channel_id: str | None = None, everywhere: bool = False
                      ) -> tuple[Sequence[tuple[Label, Judgment]], Sequence[tuple[Any, Judgment]]]:
    """The labels and votes (as `labels_and_votes`: a vote is a row of VOTE_COLUMNS) on scored judgments of a
    rubric: in one channel, the terminal's, or everywhere."""
    return labels_and_votes(store, Scope(rubric_name, channel_id=channel_id, everywhere=everywhere))


def labeled_verdicts(store: Store, *, rubric_name: str, judge_model: str | None = None, channel_id: str | None = None,
                     team_id: str | None = None, since: datetime | None = None, numeric: Sequence[str] = (),
                     everywhere: bool = False) -> list[LabeledVerdict]:
    """Every label and vote on scored judgments of a rubric as (judge, person) pairs, the oldest first.

    `channel_id` None means the judgments made in a terminal, unless `everywhere`. A person's label of a judgment
    stands in for their vote on it. An Agree says the judge was right in everything; a Disagree says only that
    pass/fail should have been the other way. `numeric` names the dotted paths whose values are compared.
    """
    scope = Scope(rubric_name, judge_model, channel_id, team_id, everywhere)
    label_rows, vote_rows = labels_and_votes(store, scope, since, columns=VERDICT_COLUMNS)
    found = [_from_label(label, judgment, numeric) for label, judgment in label_rows]
    found += [_from_vote(vote, judgment, numeric) for vote, judgment in vote_rows]
    return sorted(found, key=lambda verdict: verdict.labeled_at)


def _judge_side(judgment: Any, numeric: Sequence[str]) -> dict[str, Any]:
    return {"judge_passed": judgment.passed, "judge_tag": judgment.tag,
            "judge_values": numbers_at(judgment.output, numeric), "judge_model": judgment.judge_model,
            "rubric_hash": judgment.rubric_hash}


def _from_label(label: Label, judgment: Any, numeric: Sequence[str]) -> LabeledVerdict:
    return LabeledVerdict(**_judge_side(judgment, numeric), human_passed=label.passed, human_tag=label.tag,
                          human_values=numbers_at(label.values, numeric, dotted=True), labeled_at=label.updated_at)


def _from_vote(vote: Any, judgment: Any, numeric: Sequence[str]) -> LabeledVerdict:
    judge = _judge_side(judgment, numeric)
    if vote.agree:
        human = {"human_passed": judgment.passed, "human_tag": judgment.tag, "human_values": judge["judge_values"]}
    else:
        human = {"human_passed": None if judgment.passed is None else not judgment.passed}
    return LabeledVerdict(**judge, **human, labeled_at=vote.updated_at)


def labeled_verdicts_by_rubric(store: Store, *, channel_id: str | None, team_id: str | None = None,
                               since: datetime | None = None,
                               numeric: Callable[[str], Sequence[str]] = lambda name: ()) -> dict[str, list[LabeledVerdict]]:
    """`labeled_verdicts` of every rubric labeled in the channel (None: the terminal's), read once: by rubric name,
    each compared on the numeric paths `numeric(name)` gives."""
    label_rows, vote_rows = labels_and_votes(store, Scope(None, channel_id=channel_id, team_id=team_id), since,
                                             columns=VERDICT_COLUMNS)
    paths: dict[str, Sequence[str]] = {}

    def paths_of(name: str) -> Sequence[str]:
        if name not in paths:
            paths[name] = numeric(name)
        return paths[name]

    found: dict[str, list[LabeledVerdict]] = {}
    for label, judgment in label_rows:
        found.setdefault(judgment.rubric_name, []).append(_from_label(label, judgment, paths_of(judgment.rubric_name)))
    for vote, judgment in vote_rows:
        found.setdefault(judgment.rubric_name, []).append(_from_vote(vote, judgment, paths_of(judgment.rubric_name)))
    return {name: sorted(verdicts, key=lambda verdict: verdict.labeled_at) for name, verdicts in sorted(found.items())}


def labeled_rubric_names(store: Store, *, channel_id: str | None, team_id: str | None,
                         since: datetime | None = None) -> list[str]:
    """The rubrics whose scored judgments in the channel (None: the terminal's) have labels or votes, by name."""
    label_rows, vote_rows = labels_and_votes(store, Scope(None, channel_id=channel_id, team_id=team_id), since,
                                             columns=VERDICT_COLUMNS)
    return sorted({judgment.rubric_name for _, judgment in (*label_rows, *vote_rows)})
