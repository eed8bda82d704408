"""Per model and rubric figures of a channel over a period, each case once, for `judgebot stats`, Slack's and the
MCP server's: added up from the hourly tallies over the Core tables (the command loads no ORM class)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import case, func

from bot.figures import ratio
from bot.records import RowState
from bot.store.counts.tallies import KEY_LENGTH, STANDS, counted
from bot.store.reads.label_counts import Said, said_by_model
from bot.store.tables.core import FEEDBACK, JUDGMENT, JUDGMENT_TALLY

if TYPE_CHECKING:
    from bot.store.database import Store


@dataclass
class Figures:
    """How one model under test did on one rubric in one channel over a period, each case once (bot.store.counts.counting):
    every figure is over the cases evaluated in the period, with the latest verdict each got there."""

    model_name: str | None
    rubric_name: str
    cases: int = 0  # cases evaluated in the period
    scored: int = 0  # of them, cases whose verdict scored
    mean_headline: float | None = None
    passed: int = 0
    errors: int = 0  # cases whose only verdicts were a judge's failures (an error, or a reply that broke the rules)
    tags: dict[str, int] = field(default_factory=dict)
    votes: int = 0
    agreeing: int = 0
    rejudged: int = 0  # judgments of these cases a later one replaced in the period (re-reads, re-runs): not counted
    unsure: int = 0  # scored cases whose several judgments (samples, a jury) disagreed
    said: list[Said] = field(default_factory=list)  # every label and standing vote on its scored rows, per case
    judges: dict[str, int] = field(default_factory=dict)  # cases by the judge model of their verdict
    versions: dict[str, int] = field(default_factory=dict)  # cases by the rubric text of their verdict ("2 (3f2a1c9)")

    @property
    def pass_rate(self) -> float | None:
        """Share of scored cases that passed."""
        return ratio(self.passed, self.scored)

    @property
    def agreement(self) -> float | None:
        """Share of human votes that agreed with the judge (bot.trust.report.people_agreement counts every label)."""
        return ratio(self.agreeing, self.votes)

    @property
    def unsure_rate(self) -> float | None:
        """Share of scored cases left unsure; None when none was, as rows judged once never are."""
        return ratio(self.unsure, self.scored) if self.unsure else None

    @property
    def mixed(self) -> list[str]:
        """What the verdicts counted mix, as sentences: several judge models, or several texts of the rubric."""
        found = []
        if len(self.judges) > 1:
            found.append("judged by " + ", ".join(f"{judge} ({count} {'case' if count == 1 else 'cases'})"
                                                  for judge, count in _most_first(self.judges)))
        if len(self.versions) > 1:
            found.append(f"rubric {self.rubric_name} " + ", ".join(
                f"version {version} ({count} {'case' if count == 1 else 'cases'})"
                for version, count in _most_first(self.versions)))
        return found


def _most_first(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def model_of(key: str) -> str | None:
    """The model under test of a tally key ("" when none was named)."""
    return key or None


def channel_stats(
    store: Store, *, channel_id: str | None, since: datetime | None = None, until: datetime | None = None,
    model: str | None = None, said: bool = True,
) -> list[Figures]:
    """Per model and rubric figures of one channel (None: the terminal's) over the cases evaluated in [since, until),
    each with its latest verdict there (bot.store.counts.counting), added up from the hourly tallies.

    The mean, pass rate and tags are over the scored cases; `rejudged` counts the judgments a later one of the same
    case replaced within the period. People's votes are those on its counted scored rows, and (unless `said` is
    False) `said` every label and standing vote on its rows.
    """
    rows = counted(JUDGMENT, JUDGMENT_TALLY, FEEDBACK, channel_id, since, until)
    chosen = [] if model is None else [func.lower(rows.c.model_key) == model.lower()[:KEY_LENGTH]]
    group = (rows.c.model_key, rows.c.rubric_name)
    stands = rows.c.replaced >= (until or STANDS)
    scored = rows.c.status == RowState.SCORED

    def counted_if(condition: Any, value: Any) -> Any:
        return func.sum(case((condition, value), else_=0))

    totals = (
        sa.select(*group, counted_if(stands, rows.c.rows), counted_if(stands & scored, rows.c.rows),
                  counted_if(stands, rows.c.headline_total), counted_if(stands, rows.c.headlines),
                  counted_if(stands, rows.c.passed), counted_if(stands & ~scored, rows.c.rows),
                  counted_if(~stands, rows.c.rows), counted_if(stands & scored, rows.c.unsure),
                  counted_if(stands & scored, rows.c.votes), counted_if(stands & scored, rows.c.agreeing))
        .where(*chosen).group_by(*group)
    )
    tags = (sa.select(*group, rows.c.tag_key, func.sum(rows.c.rows))
            .where(*chosen, stands, scored, rows.c.tag_key != "").group_by(*group, rows.c.tag_key))
    judges = (sa.select(*group, rows.c.judge_model, rows.c.rubric_version, rows.c.rubric_hash, func.sum(rows.c.rows))
              .where(*chosen, stands).group_by(*group, rows.c.judge_model, rows.c.rubric_version, rows.c.rubric_hash))
    figures: dict[tuple[str, str], Figures] = {}
    with store.engine.connect() as session:
        for (key, rubric, cases, n_scored, total, headlines, passed, errors, rejudged, unsure, votes,
             agreeing) in session.execute(totals):
            figures[(key, rubric)] = Figures(
                model_of(key), rubric, int(cases or 0), int(n_scored or 0),
                float(total) / int(headlines) if headlines else None, int(passed or 0), int(errors or 0),
                votes=int(votes or 0), agreeing=int(agreeing or 0), rejudged=int(rejudged or 0),
                unsure=int(unsure or 0))
        for key, rubric, tag, count in session.execute(tags):
            figures[(key, rubric)].tags[tag] = int(count)
        versions: dict[tuple[str, str], dict[str, set[str]]] = {}
        for key, rubric, judge, version, digest, count in session.execute(judges):
            found = figures[(key, rubric)]
            found.judges[judge] = found.judges.get(judge, 0) + int(count)
            found.versions[f"{version}:{digest}"] = found.versions.get(f"{version}:{digest}", 0) + int(count)
            versions.setdefault((key, rubric), {}).setdefault(version, set()).add(digest)
    for key, found in figures.items():  # "2", or "2 (3f2a1c9)" where one version was used with several texts
        texts = versions.get(key, {})
        found.versions = {(version if len(texts[version]) == 1 else f"{version} ({digest[:7]})"): count
                          for (version, digest), count in
                          ((text.rsplit(":", 1), count) for text, count in found.versions.items())}
    figures = {key: found for key, found in figures.items() if found.cases}  # a failure after an earlier score: none
    if said:
        for found_key, people in said_by_model(store, channel_id=channel_id, since=since, until=until,
                                               model=model).items():
            if found_key in figures:
                figures[found_key].said = people
    return sorted(figures.values(), key=lambda f: ((f.model_name or "").lower(), f.rubric_name))
