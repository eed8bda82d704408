"""A card judged again once: the claim of the first click among processes clicking at once, a claim given up, one
left by a process that is gone before it saved a run, and a workspace forgotten with its claims (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from bot.store import (
    STALE,
    Rejudge,
    Store,
    add_rows,
    claim_rejudge,
    create_run,
    forget_team,
    give_up_rejudge,
    iter_judgments,
    rejudge_saved,
    table_of,
    utcnow,
)
from tests.support.store_rows import COMMON, at_once, row


def judgments(store: Store, count: int, team: str = "T0TEST") -> tuple[int, list[int]]:
    run = create_run(store, **COMMON, team_id=team, channel_id="C0GENERAL")
    add_rows(store, [row(run.id, n, team_id=team, channel_id="C0GENERAL") for n in range(1, count + 1)])
    return run.id, [judgment.id for judgment in iter_judgments(store, run.id)]


def test_processes_clicking_one_card_at_once_get_one_claim_between_them(db_url: str, store: Store):
    _, [card] = judgments(store, 1)
    answers = at_once(db_url, lambda each: claim_rejudge(each, judgment_id=card))
    assert sum(answer is None for answer in answers) == 1
    assert {answer.judgment_id for answer in answers if answer is not None} == {card}


def test_a_claim_is_kept_with_its_run_given_up_when_nothing_was_shown_and_taken_over_from_the_gone(store: Store):
    run_id, [kept, given_up, left, left_with_run] = judgments(store, 4)
    assert claim_rejudge(store, judgment_id=kept) is None
    rejudge_saved(store, judgment_id=kept, run_id=run_id)
    held = claim_rejudge(store, judgment_id=kept)
    assert held is not None and held.run_id == run_id  # judged again: for good

    assert claim_rejudge(store, judgment_id=given_up) is None
    give_up_rejudge(store, judgment_id=given_up)
    assert claim_rejudge(store, judgment_id=given_up) is None  # nothing was shown: the next click may

    table = table_of(Rejudge)
    long_ago = utcnow() - timedelta(seconds=STALE + 60)
    with store.engine.begin() as conn:  # a process on another host, quiet for longer than STALE
        conn.execute(table.insert(), [{"judgment_id": card, "owner": "elsewhere:1:gone", "claimed_at": long_ago,
                                       "run_id": run} for card, run in ((left, None), (left_with_run, run_id))])
    assert claim_rejudge(store, judgment_id=left) is None  # it died before it saved a run: taken over
    held = claim_rejudge(store, judgment_id=left_with_run)
    assert held is not None and held.run_id == run_id  # its run is saved: the card's, whoever completes it


def test_forgetting_a_workspace_removes_its_claims(store: Store):
    run_id, [ours] = judgments(store, 1)
    _, [theirs] = judgments(store, 1, team="T0OTHER")
    for card in (ours, theirs):
        assert claim_rejudge(store, judgment_id=card) is None
    rejudge_saved(store, judgment_id=ours, run_id=run_id)
    assert forget_team(store, "T0TEST")["rejudge"] == 1
    with store.engine.connect() as conn:
        left = conn.execute(sa.select(table_of(Rejudge).c.judgment_id)).scalars().all()
    assert left == [theirs]
