"""Tests for bot.store.reads.channel, feedback and preferences on a hand-computed history (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from bot.rubric import RubricSet
from bot.store import (
    Figures,
    Store,
    channel_stats,
    feedback_tally,
    recent_by_user,
    recent_in_channel,
    record_feedback,
    remember_model,
    remembered_model,
    utcnow,
)
from tests.support.history_rows import Row, add


def same(actual: list[Figures], expected: list[Figures]) -> None:
    """Figures equal field by field, the database's mean compared as a float."""
    assert [(f.model_name, f.rubric_name) for f in actual] == [(f.model_name, f.rubric_name) for f in expected]
    for got, want in zip(actual, expected):
        assert got.mean_headline == pytest.approx(want.mean_headline), (got, want)
        assert type(got.mean_headline) is type(want.mean_headline)
        assert (got.cases, got.scored, got.passed, got.errors, got.tags, got.votes, got.agreeing) == (
            want.cases, want.scored, want.passed, want.errors, want.tags, want.votes, want.agreeing), (got, want)
        assert got.pass_rate == pytest.approx(want.pass_rate)
        assert got.agreement == pytest.approx(want.agreement)


@pytest.fixture
def history(store: Store, rubrics: RubricSet) -> dict[str, Any]:
    """Two channels, two models, two rubrics; runs of C1 and C2 interleaved so ids alone do not separate them."""
    eth, benchmark = rubrics.get("eth"), rubrics.get("benchmark")
    ids: dict[str, Any] = {}
    ids["c1_eth_u1"] = add(store, eth, [
        Row("m1", "scored", 100, True, "Correct"),     # 0
        Row("m1", "scored", 25, False, "Generic"),     # 1
        Row("m1", "scored", 0, False, "Refusal", 40),  # 2: judged 40 days ago
        Row("m1", "error"),                            # 3
        Row("m1", "invalid"),                          # 4
        Row("m1", "pending"),                          # 5: never judged, never counted
        Row("m1", "malformed"),                        # 6: bad input, never counted
        Row(None, "scored", 100, True, "Correct"),     # 7: no model named
    ], channel="C1", user="U1")
    ids["c2_eth_u1"] = add(store, eth, [
        Row("m1", "scored", 50, True, "Hallucination"),
        Row("m1", "error"),
        Row("m2", "scored", 10, False, "Generic"),
    ], channel="C2", user="U1")
    ids["c1_eth_u2"] = add(store, eth, [  # judged 40 days ago
        Row("m2", "scored", 75, True, "Correct", 40),
        Row("m2", "scored", 50, False, "Generic", 40),
    ], channel="C1", user="U2")
    ids["c1_bench_u1"] = add(store, benchmark, [
        Row("m1", "scored", 80, True),
        Row("m1", "error"),
        Row("m1", "pending"),
    ], channel="C1", user="U1")
    ids["t2_eth_u1"] = add(store, eth, [Row("m1", "scored", 90, True, "Correct")], channel="C9", user="U1",
                           team="T2")

    c1_eth = ids["c1_eth_u1"]
    assert record_feedback(store, judgment_id=c1_eth[0], user_id="U1", agree=True) is None
    assert record_feedback(store, judgment_id=c1_eth[0], user_id="U2", agree=False) is None
    assert record_feedback(store, judgment_id=c1_eth[0], user_id="U2", agree=True) is False  # changed: counts once, as agreeing
    assert record_feedback(store, judgment_id=c1_eth[1], user_id="U1", agree=False) is None
    assert record_feedback(store, judgment_id=ids["c1_bench_u1"][0], user_id="U3", agree=False) is None
    assert record_feedback(store, judgment_id=ids["c2_eth_u1"][0], user_id="U1", agree=True) is None  # C2: not in C1's figures
    assert record_feedback(store, judgment_id=ids["c2_eth_u1"][0], user_id="U2", agree=True) is None
    return ids


# Worked out by hand from the history above.
C1_FIGURES = [
    Figures(None, "eth", cases=1, scored=1, mean_headline=100.0, passed=1, errors=0, tags={"Correct": 1}),
    Figures("m1", "benchmark", cases=2, scored=1, mean_headline=80.0, passed=1, errors=1, tags={}, votes=1,
            agreeing=0),
    Figures("m1", "eth", cases=5, scored=3, mean_headline=125 / 3, passed=1, errors=2,
            tags={"Correct": 1, "Generic": 1, "Refusal": 1}, votes=3, agreeing=2),
    Figures("m2", "eth", cases=2, scored=2, mean_headline=62.5, passed=1, errors=0,
            tags={"Correct": 1, "Generic": 1}),
]


def test_channel_stats_per_model_and_rubric(store, history):
    figures = channel_stats(store, channel_id="C1")
    same(figures, C1_FIGURES)
    m1_eth = figures[2]
    assert m1_eth.pass_rate == pytest.approx(1 / 3)
    assert m1_eth.agreement == pytest.approx(2 / 3)
    assert figures[1].agreement == 0.0
    assert figures[3].agreement is None and figures[3].votes == 0


def test_channel_stats_keep_to_their_channel(store, history):
    same(channel_stats(store, channel_id="C2"), [
        Figures("m1", "eth", cases=2, scored=1, mean_headline=50.0, passed=1, errors=1, tags={"Hallucination": 1},
                votes=2, agreeing=2),
        Figures("m2", "eth", cases=1, scored=1, mean_headline=10.0, passed=0, errors=0, tags={"Generic": 1}),
    ])
    assert all("Hallucination" not in f.tags for f in channel_stats(store, channel_id="C1"))
    assert channel_stats(store, channel_id="C0EMPTY") == []


def test_channel_stats_of_only_unjudged_rows_is_empty(store, rubrics):
    add(store, rubrics.get("eth"), [Row("m1", "pending"), Row("m1", "malformed")], channel="C3", user="U1")
    assert channel_stats(store, channel_id="C3") == []
    assert recent_in_channel(store, channel_id="C3") == []


def test_since_leaves_out_older_rows(store, history):
    since = utcnow() - timedelta(days=30)
    same(channel_stats(store, channel_id="C1", since=since), [
        C1_FIGURES[0],
        C1_FIGURES[1],
        Figures("m1", "eth", cases=4, scored=2, mean_headline=62.5, passed=1, errors=2,
                tags={"Correct": 1, "Generic": 1}, votes=3, agreeing=2),
    ])
    same(channel_stats(store, channel_id="C1"), C1_FIGURES)  # all time still has them
    same(channel_stats(store, channel_id="C1", since=utcnow() - timedelta(days=60)), C1_FIGURES)
    assert channel_stats(store, channel_id="C1", since=utcnow() + timedelta(days=1)) == []


def test_model_filter_ignores_case(store, history):
    same(channel_stats(store, channel_id="C1", model="M1"), C1_FIGURES[1:3])
    same(channel_stats(store, channel_id="C1", model="m2"), C1_FIGURES[3:])
    assert channel_stats(store, channel_id="C1", model="m3") == []
    since = utcnow() - timedelta(days=30)
    assert channel_stats(store, channel_id="C1", model="M2", since=since) == []


def test_recent_in_channel_newest_first(store, history):
    c1_judged = [*history["c1_eth_u1"][:5], history["c1_eth_u1"][7], *history["c1_eth_u2"],
                 history["c1_bench_u1"][0], history["c1_bench_u1"][1]]
    newest_first = sorted(c1_judged, reverse=True)
    assert [j.id for j in recent_in_channel(store, channel_id="C1", limit=40)] == newest_first
    assert [j.id for j in recent_in_channel(store, channel_id="C1")] == newest_first  # 10 judged rows, the default limit
    assert [j.id for j in recent_in_channel(store, channel_id="C1", limit=3)] == newest_first[:3]
    found = recent_in_channel(store, channel_id="C1", limit=40)
    assert {j.channel_id for j in found} == {"C1"}
    assert {j.status for j in found} == {"scored", "error", "invalid"}
    assert found[0].rubric_name == "benchmark" and found[0].status == "error"
    assert [j.id for j in recent_in_channel(store, channel_id="C2")] == sorted(history["c2_eth_u1"], reverse=True)


def test_recent_in_channel_default_limit_is_ten(store, rubrics):
    ids = add(store, rubrics.get("eth"), [Row("m1", "scored", 50, True, "Correct")] * 12, channel="C4", user="U1")
    assert [j.id for j in recent_in_channel(store, channel_id="C4")] == sorted(ids, reverse=True)[:10]


def test_recent_by_user_keeps_to_the_person_and_their_workspace(store, history):
    mine = [*history["c1_eth_u1"][:5], history["c1_eth_u1"][7], history["c2_eth_u1"][0], history["c2_eth_u1"][1],
            history["c2_eth_u1"][2], history["c1_bench_u1"][0], history["c1_bench_u1"][1]]
    found = recent_by_user(store, team_id="T1", user_id="U1", limit=40)
    assert [j.id for j in found] == sorted(mine, reverse=True)
    assert {j.user_id for j in found} == {"U1"} and {j.team_id for j in found} == {"T1"}
    assert {j.channel_id for j in found} == {"C1", "C2"}
    assert [j.id for j in recent_by_user(store, team_id="T1", user_id="U1", limit=2)] == sorted(mine, reverse=True)[:2]
    assert [j.id for j in recent_by_user(store, team_id="T1", user_id="U2")] == sorted(history["c1_eth_u2"], reverse=True)
    assert [j.id for j in recent_by_user(store, team_id="T2", user_id="U1")] == history["t2_eth_u1"]
    assert recent_by_user(store, team_id="T2", user_id="U2") == []


def test_feedback_returns_the_earlier_vote_and_counts_one_per_person(store, history):
    judgment = history["c1_eth_u1"][0]
    assert feedback_tally(store, judgment_id=judgment) == (2, 0)  # U2's disagree was replaced by an agree
    assert record_feedback(store, judgment_id=judgment, user_id="U2", agree=True) is True
    assert record_feedback(store, judgment_id=judgment, user_id="U1", agree=False) is True
    assert feedback_tally(store, judgment_id=judgment) == (1, 1)
    assert record_feedback(store, judgment_id=judgment, user_id="U1", agree=False) is False
    assert feedback_tally(store, judgment_id=judgment) == (1, 1)
    assert feedback_tally(store, judgment_id=history["c1_eth_u1"][1]) == (0, 1)
    assert feedback_tally(store, judgment_id=history["c1_eth_u1"][3]) == (0, 0)
    same(channel_stats(store, channel_id="C1", model="m1")[1:], [
        Figures("m1", "eth", cases=5, scored=3, mean_headline=125 / 3, passed=1, errors=2,
                tags={"Correct": 1, "Generic": 1, "Refusal": 1}, votes=3, agreeing=1)])


def test_remembered_model_round_trips_per_team_and_user(store):
    assert remembered_model(store, team_id="T1", user_id="U1") is None
    remember_model(store, team_id="T1", user_id="U1", model_name="campus-bot-v2")
    assert remembered_model(store, team_id="T1", user_id="U1") == "campus-bot-v2"
    remember_model(store, team_id="T1", user_id="U1", model_name="gpt-4o mini")
    assert remembered_model(store, team_id="T1", user_id="U1") == "gpt-4o mini"
    assert remembered_model(store, team_id="T1", user_id="U2") is None
    assert remembered_model(store, team_id="T2", user_id="U1") is None
    remember_model(store, team_id="T2", user_id="U1", model_name="other-bot")
    remember_model(store, team_id="T1", user_id="U2", model_name="ما هو النموذج")
    assert remembered_model(store, team_id="T1", user_id="U1") == "gpt-4o mini"
    assert remembered_model(store, team_id="T2", user_id="U1") == "other-bot"
    assert remembered_model(store, team_id="T1", user_id="U2") == "ما هو النموذج"
    remember_model(store, team_id="T1", user_id="U1", model_name=None)
    assert remembered_model(store, team_id="T1", user_id="U1") is None
    assert remembered_model(store, team_id="T2", user_id="U1") == "other-bot"
