"""Tests for the review queue in the history: what a run sends to it, once; offering a case to one reviewer at a time;
its return after a day; and its closing by the first new label or vote."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from bot.records import Verdict
from bot.store import (
    OFFER_FOR,
    Judgment,
    ReviewCase,
    Run,
    Store,
    add_rows,
    create_run,
    get_judgment,
    iter_judgments,
    offer_next,
    open_cases,
    queue_state,
    queued_of_run,
    random_share_pairs,
    record_feedback,
    save_label,
    save_verdict,
    skip_case,
    table_of,
    utcnow,
    waiting_for,
)
from bot.trust.review import RANDOM_AT_LEAST, SentToReview, random_count, send_to_review
from bot.trust.review_queue import random_share, random_share_text

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}


def verdict(passed: bool, *, unsure: bool | None = None) -> Verdict:
    tag = "Correct" if passed else "Generic"
    return Verdict(status="scored", output={"correctness": 2 if passed else 0, "completeness": 1, "result_tag": tag,
                                            "reasoning": "r"}, headline=75.0 if passed else 25.0, passed=passed,
                   label=tag, tag=tag, raw_reply="{}", prompt_hash="p" * 32, unsure=unsure,
                   samples=None if unsure is None else 3, **COMMON)


def judged_run(store: Store, passes: list[bool], *, unsure: set[int] = frozenset(),  # type: ignore[assignment]
               channel: str | None = "C1", team: str | None = "T1", prefix: str = "q") -> tuple[Run, list[Judgment]]:
    """A run of one row per entry of `passes` (row n asks question f"{prefix}{n}"), each scored so; rows in `unsure`
    judged 3 times and split."""
    run = create_run(store, **COMMON, channel_id=channel, team_id=team)
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": f"{prefix}{n}",
                     "reference": "r", "answer": "a", "channel_id": channel, "team_id": team}
                    for n in range(1, len(passes) + 1)])
    rows = list(iter_judgments(store, run.id))
    for row, passed in zip(rows, passes, strict=True):
        assert save_verdict(store, row.id, verdict(passed, unsure=True if row.row_number in unsure else None),
                                  cache_key=f"k{row.id}")
    return run, [get_judgment(store, row.id) for row in rows]  # type: ignore[misc]


def correct(store: Store, judgment: Judgment, user: str, *, passed: bool) -> bool:
    values: dict[str, Any] = {"correctness": 2 if passed else 0, "completeness": 1,
                              "result_tag": "Correct" if passed else "Generic"}
    return save_label(store, judgment=judgment, user_id=user, source="correction", values=values, passed=passed,
                      pass_from="rule", tag=values["result_tag"], headline=None, note=None)


def test_the_random_share_is_a_rate_of_the_rows_and_at_least_three() -> None:
    assert [random_count(n, 0.05) for n in (0, 1, 2, 3, 10, 60, 61, 1000)] == [0, 1, 2, 3, 3, 3, 4, 50]
    assert random_count(1000, 0) == 0 and random_count(10, 1.0) == 10 and RANDOM_AT_LEAST == 3


@pytest.mark.slow  # a run of many rows queued three ways: 5 s beside other tests
def test_a_run_queues_unsure_rows_contradicted_rows_and_a_random_share_once(store: Store) -> None:
    first, rows = judged_run(store, [True] * 40)
    correct(store, rows[4], "U1", passed=False)  # row 5: a person says fail where the judge passed
    correct(store, rows[5], "U1", passed=True)   # row 6: a person agrees: nothing to ask

    sent = send_to_review(store, first, rate=0.05)

    # 38 cases nobody labeled: 5% is 2, so 3 at random; row 5 contradicts a label
    assert sent == SentToReview({"disagree": 1, "random": 3})
    assert sent.text() == "4 cases sent to review (1 contradicting a label, 3 at random)"
    cases = open_cases(store, team_id="T1", channel_id="C1")
    by_row = {judgment.row_number: case for case, judgment in cases}
    assert len(cases) == 4 and by_row[5].reason == "disagree" and not by_row[5].random and 6 not in by_row
    drawn = _random_rows(store, first)
    assert len(drawn) == 3 and not drawn & {5, 6}
    assert send_to_review(store, first, rate=0.05) == sent  # summarised again: the same cases, nothing queued twice
    assert sum(queued_of_run(store, first.id).values()) == 4

    # the same 40 cases judged again (from the cache or fresh), rows 2 and 3 now unsure: no random share (each case
    # had its draw in the first run), row 5 is queued already; rows 2 and 3 are added unless drawn before
    again, _ = judged_run(store, [True] * 40, unsure={2, 3})
    sent = send_to_review(store, again, rate=0.05)
    added = {2, 3} - drawn
    assert sent == SentToReview({"unsure": len(added)} if added else {}, queued_before=3 - len(added),
                                judged_before=40)
    assert len(open_cases(store, team_id="T1", channel_id="C1")) == 4 + len(added)

    # again, with nothing unsure: nothing added, and the summary says why
    third, _ = judged_run(store, [True] * 40)
    sent = send_to_review(store, third, rate=0.05)
    assert sent.total == 0 and sent.text() == "no new case sent to review: all were queued before"
    subset, _ = judged_run(store, [True] * 4)  # a part of the file, judged again
    sent = send_to_review(store, subset, rate=0.05)
    assert sent.total == 0 and sent.text() == ("no new case sent to review: all were judged before (each is drawn for "
                                               "review once)")
    assert len(open_cases(store, team_id="T1", channel_id="C1")) == 4 + len(added)
    assert {judgment.run_id for case, judgment in open_cases(store, team_id="T1", channel_id="C1")
            if case.random} == {first.id}


def test_the_random_share_is_drawn_from_the_cases_new_to_the_history(store: Store) -> None:
    old, _ = judged_run(store, [True] * 20)
    assert send_to_review(store, old, rate=0.05).by_reason == {"random": 3}
    mixed = create_run(store, **COMMON, channel_id="C1", team_id="T1")  # the 20 cases again, and 20 new ones
    add_rows(store, [{**COMMON, "run_id": mixed.id, "row_number": n, "status": "pending",
                     "question": f"q{n}" if n <= 20 else f"new{n}", "reference": "r", "answer": "a",
                     "channel_id": "C1", "team_id": "T1"} for n in range(1, 41)])
    for row in iter_judgments(store, mixed.id):
        assert save_verdict(store, row.id, verdict(True), cache_key=f"k{row.id}")
    sent = send_to_review(store, mixed, rate=0.05)
    assert sent.by_reason == {"random": 3}  # 5% of the 20 new cases is 1: three, at least
    assert all(row > 20 for row in _random_rows(store, mixed, channel="C1"))
    # another channel's cases are its own: the same texts there are new
    elsewhere, _ = judged_run(store, [True] * 20, channel="C2")
    assert send_to_review(store, elsewhere, rate=0.05).by_reason == {"random": 3}


def test_a_run_summarised_again_after_its_cases_were_labeled_draws_nothing_new(store: Store) -> None:
    run, rows = judged_run(store, [True] * 10)
    sent = send_to_review(store, run, rate=0.05)
    assert sent.by_reason == {"random": 3}
    for _, judgment in open_cases(store, team_id="T1", channel_id="C1"):
        correct(store, judgment, "U1", passed=True)  # the three drawn are labeled: the unlabeled ones changed
    assert open_cases(store, team_id="T1", channel_id="C1") == []
    assert send_to_review(store, run, rate=0.05) == sent  # the same three, still counted as this run's
    assert open_cases(store, team_id="T1", channel_id="C1") == []  # and none drawn in their place
    assert sum(queued_of_run(store, run.id).values()) == 3


def test_a_case_first_judged_on_a_card_takes_no_part_in_a_later_draw(store: Store) -> None:
    card, _ = judged_run(store, [True])  # one triple, judged on its own: no random share
    assert send_to_review(store, card, rate=0) == SentToReview({})
    file, _ = judged_run(store, [True] * 4)
    send_to_review(store, file, rate=1.0)
    assert _random_rows(store, file) == {2, 3, 4}


def _random_rows(store: Store, run: Run, *, channel: str = "C1") -> set[int]:
    """The rows of `run` whose cases it queued at random (open or labeled)."""
    table = table_of(ReviewCase)
    with store.engine.connect() as conn:
        ids = set(conn.execute(sa.select(table.c.judgment_id).where(table.c.run_id == run.id, table.c.random.is_(True),
                                                                    table.c.channel_id == channel)).scalars())
    return {row.row_number or 0 for row in iter_judgments(store, run.id) if row.id in ids}


def test_a_case_is_offered_to_one_reviewer_at_a_time_and_returns_after_a_day(store: Store) -> None:
    run, rows = judged_run(store, [True, False], unsure={1, 2})
    send_to_review(store, run, rate=0)
    first = offer_next(store, team_id="T1", channel_id="C1", user_id="U1")
    assert first is not None and first.judgment_id == rows[0].id and first.offered_to == "U1"
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U1").id == first.id  # still theirs
    second = offer_next(store, team_id="T1", channel_id="C1", user_id="U2")
    assert second is not None and second.judgment_id == rows[1].id  # not U1's case
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U3") is None  # both are held
    assert waiting_for(store, team_id="T1", channel_id="C1", user_id="U3") == 0

    later = utcnow() + OFFER_FOR + timedelta(minutes=1)  # U1 did not answer within a day: the case returns
    returned = offer_next(store, team_id="T1", channel_id="C1", user_id="U3", now=later)
    assert returned is not None and returned.id == first.id and returned.offered_to == "U3"

    # other channels and workspaces never see this queue
    assert offer_next(store, team_id="T1", channel_id="C2", user_id="U4") is None
    assert offer_next(store, team_id="T2", channel_id="C1", user_id="U4") is None


def test_a_label_closes_a_case_and_nobody_is_offered_a_case_they_labeled(store: Store) -> None:
    run, rows = judged_run(store, [True, True, True], unsure={1, 2, 3})
    send_to_review(store, run, rate=0)
    record_feedback(store, judgment_id=rows[0].id, user_id="U1", agree=True)  # a vote on the card answers case 1
    offered = offer_next(store, team_id="T1", channel_id="C1", user_id="U2")
    assert offered is not None and offered.judgment_id == rows[1].id
    correct(store, rows[1], "U2", passed=False)
    state = queue_state(store, team_id="T1", channel_id="C1", since=utcnow() - timedelta(days=7))
    assert (state.open, state.labeled) == (1, 2) and state.oldest is not None
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U2").judgment_id == rows[2].id

    # a second opinion: U2 labeled case 2, so when it is queued again it goes to someone else
    again, _ = judged_run(store, [True, True, True])  # the judge passes case 2 again, against U2's fail
    send_to_review(store, again, rate=0)
    assert waiting_for(store, team_id="T1", channel_id="C1", user_id="U2") == 1  # case 3 only (it holds it)


def test_skipping_passes_a_case_on_for_a_day(store: Store) -> None:
    run, rows = judged_run(store, [True, True], unsure={1, 2})
    send_to_review(store, run, rate=0)
    first = offer_next(store, team_id="T1", channel_id="C1", user_id="U1")
    assert first is not None
    skip_case(store, case_id=first.id, user_id="U1")
    following = offer_next(store, team_id="T1", channel_id="C1", user_id="U1")
    assert following is not None and following.id != first.id
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U2").id == first.id  # free for another


def test_agreement_on_the_random_share_counts_only_cases_picked_at_random(store: Store) -> None:
    run, rows = judged_run(store, [True] * 10, unsure={1})
    send_to_review(store, run, rate=0.3)
    cases = open_cases(store, team_id="T1", channel_id="C1")
    picked = [judgment for case, judgment in cases if case.random]
    chosen = [judgment for case, judgment in cases if not case.random]
    assert len(picked) == 3  # 30% of 10
    for judgment, passed in zip(picked, (True, True, False), strict=True):
        correct(store, judgment, "U1", passed=passed)
    for judgment in chosen:
        correct(store, judgment, "U1", passed=False)
    assert sorted(pair[1:] for pair in random_share_pairs(store, team_id="T1", channel_id="C1", rubric_name="eth")) == [
        (True, False), (True, True), (True, True)]
    assert random_share_pairs(store, team_id="T1", channel_id="C2", rubric_name="eth") == []
    share = random_share(store, rubric_name="eth", channel_id="C1", team_id="T1")
    # Wilson 95% for 2/3 (statsmodels proportion_confint(2, 3, method="wilson")): 0.2077-0.9385
    assert (share.pass_agree, share.pass_n) == (2, 3)
    assert random_share_text(share, 0.5) == ("random sample: 67% (2/3), 95% CI 21%-94% (Wilson); few labeled cases "
                                             "(n = 3); all labels: 50%")
    assert random_share_text(random_share(store, rubric_name="eth", channel_id="C2", team_id="T1")).startswith(
        "random sample: no labels yet")


def test_two_reviewers_asking_at_once_never_get_the_same_case(store: Store) -> None:
    run, _ = judged_run(store, [True] * 6, unsure=set(range(1, 7)))
    send_to_review(store, run, rate=0)
    users = [f"U{n}" for n in range(8)]
    with ThreadPoolExecutor(len(users)) as pool:
        offered = list(pool.map(lambda user: offer_next(store, team_id="T1", channel_id="C1", user_id=user), users))
    given = [case.id for case in offered if case is not None]
    assert len(given) == 6 and len(set(given)) == 6  # six cases, each to one of the eight
    assert sum(case is None for case in offered) == 2


def test_agree_votes_on_cases_picked_at_random_count_in_their_figure(store: Store) -> None:
    run, rows = judged_run(store, [True] * 3)
    send_to_review(store, run, rate=1.0)  # all three at random
    record_feedback(store, judgment_id=rows[0].id, user_id="U1", agree=True)   # "The judge is right"
    record_feedback(store, judgment_id=rows[1].id, user_id="U1", agree=True)
    correct(store, rows[2], "U1", passed=False)
    record_feedback(store, judgment_id=rows[2].id, user_id="U1", agree=True)  # the label stands for the vote
    share = random_share(store, rubric_name="eth", channel_id="C1", team_id="T1")
    assert (share.pass_agree, share.pass_n) == (2, 3)
    assert random_share(store, rubric_name="eth", channel_id="C1", team_id="T1", judge_model="other").pass_n == 0


def test_a_case_one_person_contradicted_is_asked_again_once_for_a_second_opinion(store: Store) -> None:
    run, rows = judged_run(store, [True], unsure={1})
    send_to_review(store, run, rate=0)
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U2") is not None
    correct(store, rows[0], "U2", passed=False)  # U2 says fail: the case is answered
    assert open_cases(store, team_id="T1", channel_id="C1") == []

    again, _ = judged_run(store, [True])  # the judge passes it again, against U2's label
    sent = send_to_review(store, again, rate=0)
    assert sent.by_reason == {"disagree": 1}
    [(case, judgment)] = open_cases(store, team_id="T1", channel_id="C1")
    assert (case.reason, case.run_id, judgment.run_id) == ("disagree", again.id, again.id)
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U2") is None  # never to U2 again
    assert offer_next(store, team_id="T1", channel_id="C1", user_id="U3") is not None
    correct(store, judgment, "U3", passed=True)  # the second opinion

    third, _ = judged_run(store, [True])
    assert send_to_review(store, third, rate=0).total == 0  # two people have spoken: not asked a third time
    assert open_cases(store, team_id="T1", channel_id="C1") == []


def test_a_queued_case_drawn_at_random_is_marked_so_and_counted_once(store: Store) -> None:
    run, rows = judged_run(store, [True, True, True], unsure={1, 2, 3})
    assert send_to_review(store, run, rate=0).by_reason == {"unsure": 3}
    assert send_to_review(store, run, rate=1.0).by_reason == {"random": 3}  # now drawn at random as well
    assert [case.random for case, _ in open_cases(store, team_id="T1", channel_id="C1")] == [True, True, True]
    twice = create_run(store, **COMMON, channel_id="C1", team_id="T1")  # one case on two rows of a file
    add_rows(store, [{**COMMON, "run_id": twice.id, "row_number": n, "status": "pending", "question": "same",
                     "reference": "r", "answer": "a", "channel_id": "C1", "team_id": "T1"} for n in (1, 2)])
    for row in iter_judgments(store, twice.id):
        assert save_verdict(store, row.id, verdict(True, unsure=True), cache_key=f"k{row.id}")
    assert send_to_review(store, twice, rate=0).by_reason == {"unsure": 1}  # two rows of one case: one case
    assert len(open_cases(store, team_id="T1", channel_id="C1")) == 4
