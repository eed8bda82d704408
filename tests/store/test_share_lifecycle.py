"""The lifecycle of a file shared in Slack as the store enforces it (table of moves, races, leases), without Slack."""

from __future__ import annotations

import itertools
import socket
import threading
from collections import deque
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import update

from bot.errors import IllegalMove
from bot.records import ShareState
from bot.store import (
    MOVES,
    SharedFile,
    Store,
    claim_share,
    earlier_share,
    earlier_unread,
    get_share,
    move_share,
    process_name,
    sources,
    take_share,
    unfinished_shares,
    update_share,
)

S = ShareState
TERMINAL = {S.DONE, S.FAILED, S.REFUSED, S.SKIPPED}
ALLOWED = [(state, to) for state in S for to in sorted(MOVES[state])]
PAST = datetime(2000, 1, 1, 12, 0, 0, 123456)  # an updated_at long gone, so that any move visibly bumps it
DEAD_OWNER = f"{socket.gethostname()}:99999999:abc"  # a pid above any pid_max: no such process on this host
_numbers = itertools.count(1)
# Every move the bot makes (bot/slack/flows/file_run.py, file_summary.py, file_recovery.py, listeners/file.py).
BOT_MOVES = [
    (S.RECEIVED, S.SKIPPED), (S.RECEIVED, S.REFUSED), (S.RECEIVED, S.CONFIRM), (S.RECEIVED, S.ASKING),  # shared, begin
    (S.RECEIVED, S.LOADING), (S.LOADING, S.RUNNING),  # _start
    (S.LOADING, S.LOADING), (S.LOADING, S.ASKING), (S.LOADING, S.REFUSED),  # a restart takes a loading file up
    (S.ASKING, S.RECEIVED), (S.CONFIRM, S.RECEIVED), (S.CONFIRM, S.SKIPPED),  # a rubric picked; Run again; Don't
    (S.RUNNING, S.PAUSED), (S.RUNNING, S.REFUSED), (S.RUNNING, S.FINISHING),  # judge: paused, rubric changed, done
    (S.PAUSED, S.RUNNING), (S.PAUSED, S.FINISHING),  # Resume, Finish here
    (S.FINISHING, S.FINISHING), (S.FINISHING, S.REFUSED),  # a restart finishes, or finds the rubric changed
    (S.FINISHING, S.DONE), (S.FINISHING, S.FAILED),  # the summary posted, or not
]


# --- helpers ---------------------------------------------------------------------------------------------------


def path_to(state: ShareState) -> list[ShareState]:
    """The states after RECEIVED on a shortest walk of the table from RECEIVED to `state` (empty for RECEIVED)."""
    came_from: dict[ShareState, ShareState | None] = {S.RECEIVED: None}
    queue = deque([S.RECEIVED])
    while queue:
        current = queue.popleft()
        for target in sorted(MOVES[current]):
            if target not in came_from:
                came_from[target] = current
                queue.append(target)
    steps: list[ShareState] = []
    at: ShareState | None = state
    while at is not None and at != S.RECEIVED:
        steps.append(at)
        at = came_from[at]
    return steps[::-1]


def claim(store: Store, **fields: Any) -> SharedFile:
    """A newly claimed share (state RECEIVED) of a file of its own, in thread 1.0 of channel C1."""
    n = next(_numbers)
    share = claim_share(store, **{"team_id": "T1", "channel_id": "C1", "thread_ts": "1.0", "message_ts": f"{n}.0",
                                  "file_id": f"F{n}", "file_name": f"file{n}.csv", **fields})
    assert share is not None
    return share


def backdate(store: Store, share_id: int, **values: Any) -> None:
    """Set columns of a share behind the store's back (test setup), with updated_at long ago."""
    with store.session() as session:
        session.execute(update(SharedFile).where(SharedFile.id == share_id).values(updated_at=PAST, **values))
        session.commit()


def placed(store: Store, state: ShareState, **fields: Any) -> SharedFile:
    """A share walked from RECEIVED to `state` by allowed moves, then backdated; read back from the store."""
    share = claim(store, **fields)
    for step in path_to(state):
        assert move_share(store, share_id=share.id, to=step)
    backdate(store, share.id)
    return row(store, share.id)


def row(store: Store, share_id: int) -> SharedFile:
    found = get_share(store, share_id=share_id)
    assert found is not None
    return found


def snapshot(store: Store, share_id: int) -> dict[str, Any]:
    """Every column of a share, to tell whether anything changed."""
    return row(store, share_id).model_dump()


# --- the table -------------------------------------------------------------------------------------------------


def test_every_state_has_an_entry_in_the_table():
    assert set(MOVES) == set(ShareState)
    assert all(targets <= set(ShareState) for targets in MOVES.values())


@pytest.mark.parametrize("state", sorted(TERMINAL))
def test_terminal_states_move_nowhere(state):
    assert MOVES[state] == frozenset()


def test_only_terminal_states_move_nowhere():
    assert {state for state, targets in MOVES.items() if not targets} == TERMINAL


def test_every_state_is_reachable_from_received():
    assert {S.RECEIVED, *itertools.chain.from_iterable(path_to(state) for state in S)} == set(S)
    for state in S:
        walk = [S.RECEIVED, *path_to(state)]
        assert walk[-1] == state
        assert all(b in MOVES[a] for a, b in itertools.pairwise(walk))


@pytest.mark.parametrize("to", list(ShareState))
def test_sources_are_exactly_the_states_that_may_move_there(to):
    assert set(sources(to)) == {state for state in S if to in MOVES[state]}
    assert len(sources(to)) == len(set(sources(to)))


@pytest.mark.parametrize(("state", "to"), BOT_MOVES, ids=[f"{a}-{b}" for a, b in BOT_MOVES])
def test_every_move_the_bot_makes_is_in_the_table(state, to):
    assert to in MOVES[state]
    assert state in sources(to)


def test_nothing_moves_back_to_received_but_the_questions():
    assert set(sources(S.RECEIVED)) == {S.ASKING, S.CONFIRM}


# --- allowed and refused moves ---------------------------------------------------------------------------------


# The tests below try every state and move: the same conditional UPDATE on either database, so they run on SQLite;
# the races (two clicks at once, a share claimed twice) run on PostgreSQL too.
@pytest.mark.parametrize(("state", "to"), ALLOWED, ids=[f"{a}-{b}" for a, b in ALLOWED])
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # every move: one database is enough (see above)
def test_an_allowed_move_sets_the_state_the_fields_and_updated_at(store, state, to):
    share = placed(store, state)
    assert share.state == state and share.updated_at == PAST
    assert move_share(store, share_id=share.id, to=to, note=f"{state} to {to}", owner="host:1:x", question_ts="7.5") is True
    after = row(store, share.id)
    assert after.state == to
    assert (after.note, after.owner, after.question_ts) == (f"{state} to {to}", "host:1:x", "7.5")
    assert after.updated_at > PAST
    assert (after.file_id, after.message_ts, after.created_at) == (share.file_id, share.message_ts, share.created_at)


@pytest.mark.parametrize("state", list(ShareState))
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # every move: one database is enough (see above)
def test_a_move_the_table_does_not_list_raises_and_leaves_the_row_alone(store, state):
    share = placed(store, state, note="before", owner=DEAD_OWNER)
    before = snapshot(store, share.id)
    refused = [to for to in S if to not in MOVES[state]]
    assert refused
    for to in refused:
        with pytest.raises(IllegalMove, match=f"cannot move from {state} to {to}"):
            move_share(store, share_id=share.id, to=to, note="after", owner="host:2:y")
        assert snapshot(store, share.id) == before


@pytest.mark.parametrize("to", list(ShareState))
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # every move: one database is enough (see above)
def test_with_expect_a_share_moves_only_from_the_expected_states(store, to):
    for state in sources(to):
        share = placed(store, state)
        before = snapshot(store, share.id)
        others = tuple(s for s in S if s != state)
        assert move_share(store, share_id=share.id, to=to, expect=others, note="wrong") is False
        assert snapshot(store, share.id) == before
        assert move_share(store, share_id=share.id, to=to, expect=(state,), note="right") is True
        assert (row(store, share.id).state, row(store, share.id).note) == (to, "right")


@pytest.mark.parametrize("state", list(ShareState))
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # every move: one database is enough (see above)
def test_expect_cannot_widen_the_table(store, state):
    share = placed(store, state)
    before = snapshot(store, share.id)
    for to in S:
        if to not in MOVES[state]:
            assert move_share(store, share_id=share.id, to=to, expect=(state,)) is False
            assert snapshot(store, share.id) == before


@pytest.mark.parametrize(("state", "to"), [(S.ASKING, S.RECEIVED), (S.CONFIRM, S.RECEIVED), (S.CONFIRM, S.SKIPPED),
                                           (S.PAUSED, S.RUNNING), (S.PAUSED, S.FINISHING)])
def test_the_second_of_two_identical_clicks_loses_quietly(store, state, to):
    share = placed(store, state)
    assert move_share(store, share_id=share.id, to=to, expect=(state,), owner="host:1:first") is True
    won = snapshot(store, share.id)
    assert move_share(store, share_id=share.id, to=to, expect=(state,), owner="host:2:second", note="loser") is False
    assert snapshot(store, share.id) == won
    assert won["owner"] == "host:1:first"


@pytest.mark.parametrize("first", [S.RUNNING, S.FINISHING], ids=["resume-first", "finish-first"])
def test_resume_and_finish_here_on_a_paused_share_the_first_click_wins(store, first):
    second = S.FINISHING if first == S.RUNNING else S.RUNNING
    share = placed(store, S.PAUSED)
    assert move_share(store, share_id=share.id, to=first, expect=(S.PAUSED,), owner="host:1:first") is True
    won = snapshot(store, share.id)
    assert move_share(store, share_id=share.id, to=second, expect=(S.PAUSED,), owner="host:2:second") is False
    assert snapshot(store, share.id) == won
    assert (won["state"], won["owner"]) == (first, "host:1:first")


def test_resume_and_finish_here_clicked_at_once_exactly_one_wins(store):
    for _ in range(10):
        share = placed(store, S.PAUSED)
        start = threading.Barrier(2)
        results: dict[ShareState, bool] = {}

        def click(to: ShareState, share_id: int = share.id, start: threading.Barrier = start,
                  results: dict[ShareState, bool] = results) -> None:
            start.wait()
            results[to] = move_share(store, share_id=share_id, to=to, expect=(S.PAUSED,), owner=f"host:1:{to}")

        threads = [threading.Thread(target=click, args=(to,)) for to in (S.RUNNING, S.FINISHING)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert sorted(results.values()) == [False, True]
        winner = next(to for to, won in results.items() if won)
        assert (row(store, share.id).state, row(store, share.id).owner) == (winner, f"host:1:{winner}")


# --- update_share and missing shares ---------------------------------------------------------------------------


def test_update_share_refuses_to_set_the_state(store):
    share = placed(store, S.RUNNING)
    before = snapshot(store, share.id)
    with pytest.raises(IllegalMove):
        update_share(store, share_id=share.id, state=S.DONE, note="sneaked")
    assert snapshot(store, share.id) == before


def test_update_share_writes_other_fields_and_keeps_the_state(store):
    share = placed(store, S.FINISHING)
    update_share(store, share_id=share.id, summary_ts="9.1", results_posted=True, owner=None)
    after = row(store, share.id)
    assert (after.state, after.summary_ts, after.results_posted, after.owner) == (S.FINISHING, "9.1", True, None)
    assert after.updated_at > PAST


def test_moving_a_missing_share_returns_false(store):
    assert move_share(store, share_id=424242, to=S.LOADING) is False
    assert move_share(store, share_id=424242, to=S.RUNNING, expect=(S.PAUSED,)) is False
    assert move_share(store, share_id=424242, to=S.DONE) is False  # a target only FINISHING may reach: still no IllegalMove


# --- claims, unfinished and earlier shares ---------------------------------------------------------------------


def test_the_same_share_is_claimed_once(store):
    fields = {"team_id": "T1", "channel_id": "C1", "thread_ts": "5.0", "message_ts": "5.0", "file_id": "FSAME"}
    first = claim_share(store, **fields, owner="host:1:a")
    assert first is not None and first.id is not None and first.state == S.RECEIVED
    assert claim_share(store, **fields, owner="host:2:b") is None
    assert row(store, first.id).owner == "host:1:a"
    assert claim_share(store, **{**fields, "file_id": "FOTHER"}) is not None  # another file of the same message


def test_unfinished_shares_are_the_received_loading_running_and_finishing_ones_oldest_first(store):
    placed_ids = {placed(store, state).id: state for state in reversed(list(ShareState)) for _ in range(2)}
    found = unfinished_shares(store)
    assert [share.id for share in found] == sorted(share_id for share_id, state in placed_ids.items()
                                                   if state in (S.RECEIVED, S.LOADING, S.RUNNING, S.FINISHING))
    assert {share.state for share in found} == {S.RECEIVED, S.LOADING, S.RUNNING, S.FINISHING}


@pytest.mark.parametrize("state", list(ShareState))
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # every move: one database is enough (see above)
def test_earlier_share_ignores_only_refused_and_skipped_shares(store, state):
    earlier = placed(store, state, file_id="FX", message_ts="1.0")
    later = claim(store, file_id="FX", message_ts="2.0")
    found = earlier_share(store, share=later)
    if state in (S.REFUSED, S.SKIPPED):
        assert found is None
    else:
        assert found is not None and found.id == earlier.id


def test_earlier_share_finds_the_same_bytes_past_a_settled_one(store):
    kept = placed(store, S.DONE, file_id="FA", sha256="s" * 64)
    placed(store, S.REFUSED, file_id="FB", sha256="s" * 64)
    placed(store, S.SKIPPED, file_id="FC", sha256="s" * 64)
    later = claim(store, file_id="FD", sha256="s" * 64)
    found = earlier_share(store, share=later)
    assert found is not None and found.id == kept.id
    assert earlier_share(store, share=claim(store, file_id="FE", sha256="t" * 64)) is None


# --- taking a share over ---------------------------------------------------------------------------------------


def test_a_share_held_by_this_very_process_is_not_taken(store):
    share = placed(store, S.RUNNING, owner=process_name())
    assert take_share(store, share=share, stale_after=0.0) is False
    assert snapshot(store, share.id) == share.model_dump()


def test_a_share_held_by_a_dead_pid_on_this_host_is_taken(store):
    share = placed(store, S.LOADING, owner=DEAD_OWNER)
    assert take_share(store, share=share, stale_after=3600.0) is True
    after = row(store, share.id)
    assert (after.owner, after.state) == (process_name(), S.LOADING)
    assert after.updated_at > PAST


def test_a_let_go_share_is_taken(store):
    share = placed(store, S.FINISHING, owner=None)
    assert take_share(store, share=share, stale_after=3600.0) is True
    assert row(store, share.id).owner == process_name()


def test_a_share_on_another_host_is_taken_only_once_it_went_quiet(store):
    quiet = placed(store, S.RUNNING, owner="elsewhere.invalid:1:abc")  # updated_at long ago
    assert take_share(store, share=quiet, stale_after=60.0) is True
    busy = claim(store, owner="elsewhere.invalid:1:abc")  # updated just now
    assert take_share(store, share=busy, stale_after=3600.0) is False
    assert row(store, busy.id).owner == "elsewhere.invalid:1:abc"


def test_of_two_takes_from_the_same_stale_read_one_wins(store):
    share = placed(store, S.RECEIVED, owner=DEAD_OWNER)
    assert take_share(store, share=share, stale_after=3600.0) is True
    won = snapshot(store, share.id)
    assert take_share(store, share=share, stale_after=3600.0) is False
    assert snapshot(store, share.id) == won


def test_a_share_moved_since_it_was_read_is_not_taken(store):
    share = placed(store, S.RUNNING, owner=DEAD_OWNER)
    assert move_share(store, share_id=share.id, to=S.PAUSED)  # the owner stays: only state and updated_at tell the change
    moved = snapshot(store, share.id)
    assert take_share(store, share=share, stale_after=3600.0) is False
    assert snapshot(store, share.id) == moved


def test_a_share_waits_only_for_an_earlier_one_in_its_thread_whose_bytes_are_unknown(store):
    first = claim(store)
    second = claim(store)
    assert earlier_unread(store, share=second) and not earlier_unread(store, share=first)  # first: nothing before
    update_share(store, share_id=first.id, sha256="a" * 64)
    assert not earlier_unread(store, share=second)  # its bytes are known: earlier_share decides
    elsewhere = claim(store, thread_ts="2.0")
    third = claim(store)
    assert not earlier_unread(store, share=elsewhere)  # another thread
    move_share(store, share_id=second.id, to=ShareState.REFUSED)
    assert not earlier_unread(store, share=third)  # a refused one is never fetched
