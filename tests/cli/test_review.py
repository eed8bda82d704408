"""`judgebot judge` sends a share of a file's rows to the review queue and says so; `judgebot review` lists the cases
waiting for a label."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.records import Verdict
from bot.store import Store, add_rows, create_run, iter_judgments, open_cases, save_label, save_verdict, set_reviewers
from bot.trust.review import send_to_review
from tests.support.cli import flat, history, judgebot, judgebot_json, judgebot_many, write_rows
from tests.support.scripted_judge import Script

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}


def unsure_verdict() -> Verdict:
    output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
    return Verdict(status="scored", output=output, headline=100.0, passed=True, label="Correct", tag="Correct",
                   raw_reply="{}", prompt_hash="p" * 32, unsure=True, samples=3, **COMMON)


def test_a_judged_file_sends_a_random_share_to_review_once_and_review_lists_it(tmp_path: Path, judge_server) -> None:
    answers = {f"a{n}": "Correct" for n in range(1, 11)}
    judge_server.responder = Script({"judge-cli": {answer: [tag] for answer, tag in answers.items()}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 11)])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server)
    assert code == 0, out
    # 5% of 10 cases is less than 3: three cases, drawn with the run's seed
    assert "3 cases sent to review (3 at random): `judgebot review` lists them." in flat(out)
    assert history(tmp_path, "SELECT COUNT(*), SUM(random), MIN(reason) FROM review_case") == [(3, 3, "random")]

    code, out = judgebot(tmp_path, "resume", "1", "--out", "again.csv", server=judge_server)  # summarised again
    assert code == 0, out
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case") == [(3,)]  # the same three, not three more
    assert "3 cases sent to review (3 at random)" in flat(out)  # the run's own, as it said the first time

    code, found, stderr = judgebot_json(tmp_path, "review")
    assert code == 0 and found["channel"] is None, stderr
    assert [(case["reason"], case["at_random"], case["rubric"]) for case in found["cases"]] == [("random", True, "eth")] * 3
    queued = [case["queued_at"] for case in found["cases"]]
    assert queued == sorted(queued) and all(when.endswith("Z") for when in queued)  # oldest first, in UTC
    code, out = judgebot(tmp_path, "review")
    text = flat(out)
    assert code == 0 and "Cases of the terminal waiting for a label" in text and text.count("picked at random") == 3
    code, found, _ = judgebot_json(tmp_path, "review", "--channel", "C0NONE")
    assert code == 0 and found == {"channel": "C0NONE", "cases": []}
    code, out = judgebot(tmp_path, "review", "--channel", "C0NONE")
    assert code == 0 and "No case of channel C0NONE waits for a label." in flat(out)

    # people label the three, and one more row nobody picked: the random share is reported apart
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    picked = [judgment for _, judgment in open_cases(store, team_id=None, channel_id=None)]
    others = [row for row in iter_judgments(store, 1) if row.id not in {j.id for j in picked}]
    for judgment, passed in [(picked[0], True), (picked[1], True), (picked[2], False), (others[0], False)]:
        save_label(store, judgment=judgment, user_id="me", source="correction", values={}, passed=passed,
                   pass_from="given", tag=None, headline=None, note=None)
    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth")
    assert code == 0, stderr
    at_random = found["at_random"]
    assert (at_random["pass_fail_labels"], at_random["agreeing_labels"], at_random["cases"]) == (3, 2, 3)
    # Wilson 95% for 2/3 (statsmodels proportion_confint(2, 3, method="wilson")): 0.2077-0.9385
    assert at_random["agreement"] == pytest.approx(2 / 3)
    assert at_random["interval"] == pytest.approx([0.2077, 0.9385], abs=1e-4)
    assert found["figures"]["pass_fail"]["agreement"] == 0.5 and found["labels"] == 4  # all labels
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth")  # and how a person reads it
    assert code == 0 and ("on cases picked at random for review: random sample: 67% (2/3), 95% CI 21%-94% (Wilson); "
                          "few labeled cases (n = 3); all labels: 50%") in flat(out)
    code, found, _ = judgebot_json(tmp_path, "review")
    assert code == 0 and found["cases"] == []  # labeled: out of the queue


def test_review_sample_rate_zero_sends_nothing_at_random(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-cli": {f"a{n}": ["Correct"] for n in range(1, 6)}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 6)])
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server,
                         REVIEW_SAMPLE_RATE="0")
    assert code == 0, out
    assert "sent to review" not in flat(out)
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case") == [(0,)]


@pytest.mark.slow
def test_two_processes_nudging_at_once_send_each_reviewer_one_message(tmp_path: Path, db_url: str,
                                                                      slack_server) -> None:
    store = Store.open(db_url)  # SQLite, then PostgreSQL
    run = create_run(store, **COMMON, channel_id="C0GENERAL", team_id=slack_server.team_id)
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": f"q{n}",
                     "reference": "r", "answer": "a", "channel_id": "C0GENERAL", "team_id": slack_server.team_id}
                    for n in (1, 2)])
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, unsure_verdict(), cache_key=f"k{row.id}")
    send_to_review(store, run, rate=0)
    set_reviewers(store, team_id=slack_server.team_id, channel_id="C0GENERAL", reviewers=["U0USER", "S0EVALS"],
                  user_id="U0ADMIN")
    slack = {"SLACK_BOT_TOKEN": slack_server.bot_token, "SLACK_API_URL": slack_server.api_url, "DATABASE_URL": db_url}

    both = judgebot_many(tmp_path, [["review", "--channel", "C0GENERAL", "--nudge"]] * 2, **slack)

    assert all(code == 0 for code, _ in both), both
    said = sorted(flat(out) for _, out in both)
    assert sum(int(text.split()[1]) for text in said if text.startswith("Nudged")) == 2, said  # Bob and Ada, once
    dms = slack_server.calls_to("chat.postMessage")
    assert sorted(call.params["channel"] for call in dms) == ["D0ADMIN", "D0USER"]
    code, out = judgebot(tmp_path, "review", "--channel", "C0GENERAL", "--nudge", **slack)  # later the same day
    assert code == 0 and "each was nudged today already" in flat(out) and len(slack_server.calls_to("chat.postMessage")) == 2
    code, out = judgebot(tmp_path, "review", "--nudge")
    assert code == 2 and "give --channel ID" in flat(out)


def test_judging_the_same_file_again_from_the_cache_or_fresh_adds_no_case(tmp_path: Path, judge_server) -> None:
    torn = "a10"  # its three samples split: unsure, so it goes to review whatever the draw
    plan = {f"a{n}": ["Correct"] for n in range(1, 10)} | {torn: ["Correct", "Generic", "Generic"]}
    judge_server.responder = Script({"judge-cli": plan})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 11)])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--samples", "3", server=judge_server)
    assert code == 0, out
    queued = history(tmp_path, "SELECT j.answer, c.reason, c.random FROM review_case c "
                     "JOIN judgment j ON j.id = c.judgment_id ORDER BY j.row_number")
    drawn = sum(random for _, _, random in queued)
    assert drawn == 3 and (torn, "unsure") in {(answer, reason) for answer, reason, _ in queued}
    unsure = sum(not random for _, _, random in queued)  # the torn row, unless it was drawn at random too
    parts = ", ".join([*([f"{unsure} unsure"] if unsure else []), "3 at random"])
    assert f"{len(queued)} cases sent to review ({parts}): `judgebot review` lists them." in flat(out)
    asked = len(judge_server.bodies())

    for again in ([], ["--fresh"]):  # from the cache ($0), then judged anew by the same judge
        code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--samples", "3", "--out",
                             f"again{len(again)}.csv", *again, server=judge_server)
        assert code == 0, out
        assert "no new case sent to review: all were queued before." in flat(out), out  # the torn row's case
        assert "cases sent to review (" not in flat(out)
        assert history(tmp_path, "SELECT COUNT(*), SUM(random) FROM review_case") == [(len(queued), 3)]
    assert len(judge_server.bodies()) == asked + 30  # the cache, then 10 rows x 3 samples judged fresh
    assert history(tmp_path, "SELECT COUNT(DISTINCT run_id) FROM judgment") == [(3,)]

    code, found, stderr = judgebot_json(tmp_path, "review")
    assert code == 0, stderr
    listed = sorted((case["reason"], case["at_random"]) for case in found["cases"])
    assert listed == sorted((reason, bool(random)) for _, reason, random in queued)  # the queue, each case once
    assert sum(at_random for _, at_random in listed) == 3
