"""Calibration's labels and votes kept from one reading to the next (bot/store/trust/kept_rows.py, and the rows made
of them in bot/trust/cases.py): after each change of the history, by this process or another, on SQLite and
PostgreSQL, what a store that read it before reads is what a store opened anew reads, and the figures are the same;
after a vote, only that vote's judgment is looked up."""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import col

from bot.config import Settings
from bot.records import RowState, Verdict
from bot.rubric import load_rubrics
from bot.store import (
    Feedback,
    Label,
    Store,
    get_judgment,
    record_feedback,
    reset_rows,
    save_label,
    save_verdict,
    utcnow,
)
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from bot.trust.cases import verdict_rows
from bot.trust.labels import numeric_paths
from bot.trust.report import TrustBar, rubric_trust
from tests.store.test_labeled_verdicts import NUMERIC, SCOPES, history, judged

ROOT = Path(__file__).resolve().parents[2]


def asked(scope: dict[str, Any], since: Any = None) -> dict[str, Any]:
    moment = since if since is not None else (utcnow() - timedelta(days=scope["since"]) if "since" in scope else None)
    return {"rubric_name": scope["rubric"], "channel_id": scope["channel"], "everywhere": scope["everywhere"],
            "team_id": scope.get("team"), "judge_model": scope.get("judge"), "since": moment}


def same_as_anew(store: Store, db_url: str, *, since: Any = None) -> None:
    """Every scope read by `store` (which keeps what it read) as a store opened anew reads it: its rows, both ways,
    and calibration's figures."""
    anew = Store.open(db_url)
    eth = load_rubrics().get("eth")
    bar = TrustBar.from_settings(Settings(_env_file=None))
    try:
        for scope in SCOPES:
            question = asked(scope, since)
            for compared_only in (True, False):
                kept = verdict_rows(store, numeric=NUMERIC, compared_only=compared_only, **question)
                assert kept == verdict_rows(anew, numeric=NUMERIC, compared_only=compared_only, **question), scope
            if scope["rubric"] == "eth":
                figures = [rubric_trust(opened, rubric_name="eth", rubric=eth, channel_id=question["channel_id"],
                                        team_id=question["team_id"], since=question["since"], bar=bar,
                                        judge_model=question["judge_model"], everywhere=question["everywhere"]).figures
                           for opened in (store, anew)]
                assert figures[0].model_dump_json() == figures[1].model_dump_json(), scope
    finally:
        anew.engine.dispose()


def scored(store: Store, rng: random.Random, judgment: JudgmentTable) -> None:
    """A judge error judged again (as `--retry-errors` does): pending, then scored."""
    assert reset_rows(store, judgment.run_id, (RowState.ERROR,)) == 1
    verdict = Verdict(status="scored", output={"correctness": 1, "completeness": 2, "result_tag": "Generic",
                                               "reasoning": "r"}, headline=50.0, passed=rng.random() < 0.5,
                      label="x", tag="Generic", raw_reply="{}", prompt_hash="p" * 32, rubric_name=judgment.rubric_name,
                      rubric_version="1.0", rubric_hash=judgment.rubric_hash, judge_model=judgment.judge_model)
    assert save_verdict(store, judgment.id, verdict, cache_key=f"again{judgment.id}")


def judgments(store: Store) -> list[JudgmentTable]:
    with store.session() as session:
        return list(session.exec(sa.select(JudgmentTable).order_by(col(JudgmentTable.id))).scalars())  # type: ignore[call-overload]


@pytest.mark.slow  # nine checkpoints, each every scope read by two stores: 5-13 s
@pytest.mark.parametrize("seed", [11, 12])
def test_what_is_kept_reads_as_a_store_opened_anew_after_every_change(store: Store, db_url: str, seed: int) -> None:
    rng = random.Random(seed)
    history(store, seed)
    same_as_anew(store, db_url)
    every = judgments(store)
    with store.session() as session:
        first = session.exec(sa.select(Label).order_by(col(Label.id))).scalars().first()  # type: ignore[call-overload]
    labeled = get_judgment(store, first.judgment_id)
    assert labeled is not None
    # a label changed, its id kept
    save_label(store, judgment=labeled, user_id=first.user_id,
               source="correction", values={"correctness": 2.5}, passed=not first.passed, pass_from="given",
               tag="Refusal", headline=None, note=None)
    same_as_anew(store, db_url)
    # a vote turned, and one given anew
    with store.engine.connect() as conn:
        vote = conn.execute(sa.select(Feedback.__table__)).first()  # type: ignore[attr-defined]
    assert vote is not None
    record_feedback(store, judgment_id=vote.judgment_id, user_id=vote.user_id, agree=not vote.agree)
    record_feedback(store, judgment_id=rng.choice(every).id, user_id="U9", agree=True)
    same_as_anew(store, db_url)
    # a vote that no longer stands: its person labels the case, or votes later on another judgment of it
    target = next(judgment for judgment in every if judgment.status == "scored")
    record_feedback(store, judgment_id=target.id, user_id="U7", agree=True)
    same_as_anew(store, db_url)
    again = judged(store, rng, question=target.question, channel=target.channel_id, team=target.team_id,
                   judge=target.judge_model, rubric=target.rubric_name)  # a new judgment of a labeled case
    record_feedback(store, judgment_id=again.id, user_id="U7", agree=False)
    same_as_anew(store, db_url)
    save_label(store, judgment=again, user_id="U7", source="correction", values={}, passed=True, pass_from="given",
               tag=None, headline=None, note=None)
    same_as_anew(store, db_url)
    # labels and votes removed (as removing a workspace does)
    with store.engine.begin() as conn:
        conn.execute(sa.delete(Label.__table__).where(Label.__table__.c.id == first.id))  # type: ignore[attr-defined]
        conn.execute(sa.delete(Feedback.__table__).where(Feedback.__table__.c.id == vote.id))  # type: ignore[attr-defined]
    same_as_anew(store, db_url)
    # a judge error people labeled and voted on, judged again and scored: it counts from now on
    errors = [judgment for judgment in judgments(store) if judgment.status == "error"]
    assert errors, "the history has judge errors"
    record_feedback(store, judgment_id=errors[0].id, user_id="U8", agree=True)
    save_label(store, judgment=errors[0], user_id="U6", source="correction", values={"correctness": 1}, passed=True,
               pass_from="given", tag="Correct", headline=None, note=None)
    same_as_anew(store, db_url)
    scored(store, rng, errors[0])
    same_as_anew(store, db_url)


@pytest.mark.slow  # every scope read by two stores at five checkpoints: 5-9 s
def test_a_period_starts_at_its_moment_whatever_was_kept(store: Store, db_url: str) -> None:
    history(store, 13)
    same_as_anew(store, db_url)
    with store.engine.connect() as conn:
        moments = sorted(conn.execute(sa.select(Label.__table__.c.updated_at)).scalars())  # type: ignore[attr-defined]
    middle = moments[len(moments) // 2]
    for since in (middle, middle + timedelta(microseconds=1), middle - timedelta(microseconds=1)):
        same_as_anew(store, db_url, since=since)
    record_feedback(store, judgment_id=judgments(store)[0].id, user_id="U5", agree=False)  # given in every period
    same_as_anew(store, db_url, since=middle)


@pytest.mark.slow  # two commands in fresh interpreters
def test_what_another_process_writes_is_read(store: Store, db_url: str) -> None:
    history(store, 14)
    same_as_anew(store, db_url)
    every = judgments(store)
    script = (
        "import sys\nfrom bot.store import Store, get_judgment, record_feedback, save_label\n"
        "store = Store.open(sys.argv[1])\n"
        "judgment = get_judgment(store, int(sys.argv[2]))\n"
        "record_feedback(store, judgment_id=judgment.id, user_id='U1', agree=False)\n"
        "record_feedback(store, judgment_id=judgment.id, user_id='U2', agree=True)\n"
        "save_label(store, judgment=judgment, user_id='U3', source='file', values={'correctness': 0}, passed=False,"
        " pass_from='given', tag='Refusal', headline=None, note=None)\n"
        "store.engine.dispose()\n")
    for judgment in (every[0], every[-1]):
        subprocess.run([sys.executable, "-c", script, db_url, str(judgment.id)], check=True, cwd=ROOT, timeout=120)
        same_as_anew(store, db_url)


def test_after_a_vote_only_its_judgment_is_looked_up(store: Store) -> None:
    history(store, 15)
    eth = load_rubrics().get("eth")
    paths = numeric_paths(eth)
    read = lambda: verdict_rows(store, rubric_name="eth", everywhere=True, numeric=paths)  # noqa: E731
    first = read()
    looked_up: list[int] = []

    def count(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        if "FROM judgment" in statement:
            given = parameters.values() if isinstance(parameters, dict) else parameters
            looked_up.extend(value for value in given if isinstance(value, int))  # the ids, not the JSON paths

    not_scored = {judgment.id for judgment in judgments(store) if judgment.status != "scored"}
    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        assert read() == first and set(looked_up) <= not_scored  # nothing changed: only what may still change read
        voted = next(judgment for judgment in judgments(store) if judgment.status == "scored"
                     and judgment.rubric_name == "eth")
        record_feedback(store, judgment_id=voted.id, user_id="U9", agree=False)
        looked_up.clear()
        after = read()
        assert set(looked_up) - not_scored == {voted.id}
        assert len(after) == len(first) + 1
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
