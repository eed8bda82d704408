"""Calibration's labeled verdicts read by the database (labels and the votes that stand, joined to their judgments,
numbers read out of the JSON there) held to the same verdicts read as the history's entities, in Python: on varied
histories (re-runs of a case, second labels, labels replaced, votes turned, a label standing in for its person's
votes, numbers nested, flat, boolean and textual, other channels, workspaces, judges and rubrics, older labels), and
the figures calibration makes of them held to those of building each case one by one."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import col, update

from bot.config import Settings
from bot.records import Verdict
from bot.rubric import load_rubrics
from bot.store import (
    Feedback,
    Judgment,
    Label,
    Scope,
    Store,
    add_rows,
    create_run,
    first_judgment,
    get_judgment,
    labeled_items,
    labeled_judgments,
    record_feedback,
    save_label,
    save_verdict,
    utcnow,
)
from bot.trust.calibration import VerdictRow
from bot.trust.cases import labeled_verdicts, verdict_rows
from bot.trust.labels import numbers_at, numeric_paths, ordinal_scales, tag_order, vote_as_label
from bot.trust.report import TrustBar, rubric_trust
from tests.support.case_by_case import calibrated_case_by_case

NUMERIC = ("correctness", "completeness", "criteria.depth")
TAGS = ("Correct", "Generic", "Refusal", "Hallucination")
USERS = ("U1", "U2", "U3", "U4")


def judged(store: Store, rng: random.Random, *, question: str, channel: str | None, team: str | None,
           judge: str = "judge-m", rubric: str = "eth", status: str = "scored") -> Judgment:
    """A row of a new run given a verdict: one case a question (the reference and answer are the same for all)."""
    common = {"rubric_name": rubric, "rubric_version": "1.0", "rubric_hash": rng.choice(["h" * 16, "k" * 16]),
              "judge_model": judge}
    run = create_run(store, **common, channel_id=channel, team_id=team)
    add_rows(store, [{**common, "run_id": run.id, "row_number": 1, "status": "pending", "question": question,
                      "reference": "r", "answer": "a", "channel_id": channel, "team_id": team}])
    row = first_judgment(store, run.id)
    assert row is not None
    output = {"correctness": rng.choice([0, 1, 2, 2.0, True, "2"]), "completeness": rng.choice([0, 1, 2]),
              "criteria": rng.choice([{"depth": rng.choice([0.5, 1 / 3, 2])}, {"depth": None}, "flat"]),
              "result_tag": rng.choice(TAGS), "reasoning": "r"}
    verdict = (Verdict(status="scored", output=output, headline=50.0, passed=rng.random() < 0.6, label="x",
                       tag=rng.choice([*TAGS, None]), raw_reply="{}", prompt_hash="p" * 32, **common)
               if status == "scored" else
               Verdict(status=status, error="x", raw_reply="{}", prompt_hash="p" * 32, **common))
    assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")
    found = get_judgment(store, row.id)
    assert found is not None
    return found


def history(store: Store, seed: int) -> None:
    """Judgments of a few questions asked again and again in two channels, two workspaces and the terminal, by two
    judges and two rubrics; people's labels and votes on them, some of them given weeks ago."""
    rng = random.Random(seed)
    places = [("C1", "T1"), ("C1", "T2"), ("C2", "T1"), (None, None)]
    judgments = [judged(store, rng, question=f"q{rng.randrange(6)}", channel=channel, team=team,
                        judge=rng.choice(["judge-m", "judge-x"]), rubric=rng.choice(["eth", "eth", "academic"]),
                        status=rng.choice(["scored"] * 6 + ["error"]))
                 for channel, team in (rng.choice(places) for _ in range(18))]
    for _ in range(30):
        judgment, user = rng.choice(judgments), rng.choice(USERS)
        if rng.random() < 0.45:
            values = {"correctness": rng.choice([0, 1, 2, 1.5, "two"]), "criteria.depth": rng.choice([1, 0.25]),
                      "result_tag": rng.choice(TAGS)}
            save_label(store, judgment=judgment, user_id=user, source="correction",
                       values={key: value for key, value in values.items() if rng.random() < 0.7},
                       passed=rng.choice([True, False, None]), pass_from="given", tag=rng.choice([*TAGS, None]),
                       headline=None, note=None)
        else:
            record_feedback(store, judgment_id=judgment.id, user_id=user, agree=rng.random() < 0.6)
    with store.session() as session:
        for table in (Label, Feedback):
            for row_id in session.execute(sa.select(col(table.id))).scalars().all():
                if rng.random() < 0.4:
                    session.execute(update(table).where(col(table.id) == row_id)
                                    .values(updated_at=utcnow() - timedelta(days=rng.randrange(1, 60))))
        session.commit()


def read_as_entities(store: Store, *, rubric: str, channel: str | None, everywhere: bool, since: Any = None,
                     team: str | None = None, judge: str | None = None) -> list[VerdictRow]:
    """The labeled verdicts read as the history's entities and their values in Python, every judge's value read."""
    labels, votes = labeled_judgments(store, rubric_name=rubric, channel_id=channel, everywhere=everywhere)
    found = []
    for label, judgment in labels:
        found.append(VerdictRow(judgment.passed, judgment.tag, numbers_at(judgment.output, NUMERIC), label.passed,
                                label.tag, numbers_at(label.values, NUMERIC, dotted=True), label.updated_at,
                                judgment.judge_model, judgment.rubric_hash, label.case_key))
    for vote, judgment in votes:
        values = numbers_at(judgment.output, NUMERIC)
        said = vote_as_label(vote.agree, passed=judgment.passed, tag=judgment.tag, values=values)
        found.append(VerdictRow(judgment.passed, judgment.tag, values, said.passed, said.tag, said.values,
                                vote.updated_at, judgment.judge_model, judgment.rubric_hash, vote.case_key))
    kept = [row for row in found if (since is None or row.labeled_at >= since)
            and (judge is None or row.judge_model == judge)]
    if team is not None:
        teams = {judgment.id: judgment.team_id for _, judgment in (*labels, *votes)}
        ids = [judgment.id for _, judgment in (*labels, *votes)]
        kept = [row for row, number in zip(found, ids, strict=True) if row in kept and teams[number] == team]
    return sorted(kept, key=lambda row: row.labeled_at)


SCOPES = [
    {"rubric": "eth", "channel": "C1", "everywhere": False},
    {"rubric": "eth", "channel": None, "everywhere": False},
    {"rubric": "eth", "channel": None, "everywhere": True},
    {"rubric": "eth", "channel": "C1", "everywhere": False, "team": "T2"},
    {"rubric": "eth", "channel": None, "everywhere": True, "judge": "judge-x"},
    {"rubric": "eth", "channel": "C2", "everywhere": False, "since": 14},
    {"rubric": "academic", "channel": None, "everywhere": True, "since": 30},
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_verdicts_the_database_reads_are_those_read_as_entities(store: Store, seed: int) -> None:
    history(store, seed)
    for scope in SCOPES:
        since = utcnow() - timedelta(days=scope["since"]) if "since" in scope else None
        asked = {"rubric_name": scope["rubric"], "channel_id": scope["channel"], "everywhere": scope["everywhere"],
                 "team_id": scope.get("team"), "judge_model": scope.get("judge"), "since": since}
        expected = read_as_entities(store, rubric=scope["rubric"], channel=scope["channel"],
                                    everywhere=scope["everywhere"], since=since, team=scope.get("team"),
                                    judge=scope.get("judge"))
        assert verdict_rows(store, numeric=NUMERIC, compared_only=False, **asked) == expected
        read = labeled_verdicts(store, numeric=NUMERIC, **asked)
        assert [verdict.model_dump() for verdict in read] == [row._asdict() for row in expected]
        compared = verdict_rows(store, numeric=NUMERIC, **asked)  # a judge's values only where compared
        assert [row._replace(judge_values={}) for row in compared] == [row._replace(judge_values={})
                                                                       for row in expected]
        assert all(row.judge_values in ({}, wanted.judge_values) for row, wanted in zip(compared, expected))


@pytest.mark.parametrize("seed", [4, 5])
def test_calibration_of_a_history_is_that_of_its_cases_built_one_by_one(store: Store, seed: int) -> None:
    history(store, seed)
    eth = load_rubrics().get("eth")
    paths = numeric_paths(eth)
    for channel, everywhere in (("C1", False), (None, True), (None, False)):
        figures = rubric_trust(store, rubric_name="eth", rubric=eth, channel_id=channel, team_id=None, since=None,
                               bar=TrustBar.from_settings(Settings(_env_file=None)), everywhere=everywhere).figures
        rows = verdict_rows(store, rubric_name="eth", channel_id=channel, everywhere=everywhere, numeric=paths,
                            compared_only=False)
        one_by_one = calibrated_case_by_case(rows, tags=tag_order(eth), criteria=paths, scales=ordinal_scales(eth))
        assert figures.model_dump_json() == one_by_one.model_dump_json()


def test_a_document_sqlite_cannot_read_or_a_key_no_path_names_is_read_in_python(store: Store) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL's JSON holds no NaN, and its paths name any key")
    rng = random.Random(9)
    judgment = judged(store, rng, question="q", channel="C1", team="T1")
    record_feedback(store, judgment_id=judgment.id, user_id="U1", agree=True)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE judgment SET output = ? WHERE id = ?",
                             ('{"correctness": 2, "completeness": NaN, "say \\"when\\"": 3}', judgment.id))
    [item] = labeled_items(store, Scope("eth", channel_id="C1"), None, ["correctness", "completeness"])
    assert item.judge_numbers[0] == 2.0 and item.judge_numbers[1] != item.judge_numbers[1]  # NaN, as json reads it
    [item] = labeled_items(store, Scope("eth", channel_id="C1"), None, ['say "when"', "correctness"])
    assert item.judge_numbers == (3.0, 2.0)
