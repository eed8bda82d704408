"""`judgebot judge` sends a share of a file's rows to the review queue and says so; `judgebot review` lists the cases
waiting for a label."""

from __future__ import annotations

from pathlib import Path

from bot.store import Store
from bot.store.labels import save_label
from bot.store.review import open_cases
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.scripted_judge import Script


def test_a_judged_file_sends_a_random_share_to_review_once_and_review_lists_it(tmp_path: Path, judge_server) -> None:
    answers = {f"a{n}": "Correct" for n in range(1, 11)}
    judge_server.responder = Script({"judge-cli": {answer: [tag] for answer, tag in answers.items()}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 11)])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server)
    assert code == 0, out
    # 5% of 10 rows is less than 3: three rows, drawn with the run's seed
    assert "3 rows sent to review (3 picked at random): `judgebot review` lists them." in flat(out)
    assert history(tmp_path, "SELECT COUNT(*), SUM(random), MIN(reason) FROM review_case") == [(3, 3, "random")]

    code, out = judgebot(tmp_path, "resume", "1", "--out", "again.csv", server=judge_server)  # summarised again
    assert code == 0, out
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case") == [(3,)]  # the same three, not three more

    code, out = judgebot(tmp_path, "review")
    text = flat(out)
    assert code == 0 and "Cases of the terminal waiting for a label" in text and text.count("picked at random") == 3
    code, out = judgebot(tmp_path, "review", "--channel", "C0NONE")
    assert code == 0 and "No case of channel C0NONE waits for a label." in flat(out)

    # people label the three, and one more row nobody picked: the random share is reported apart
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    picked = [judgment for _, judgment in open_cases(store, team_id=None, channel_id=None)]
    others = [row for row in store.iter_judgments(1) if row.id not in {j.id for j in picked}]
    for judgment, passed in [(picked[0], True), (picked[1], True), (picked[2], False), (others[0], False)]:
        save_label(store, judgment=judgment, user_id="me", source="correction", values={}, passed=passed,
                   pass_from="given", tag=None, headline=None, note=None)
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth")
    assert code == 0 and "on cases picked at random for review: random sample: 67% (2/3); all labels: 50%" in flat(out)
    code, out = judgebot(tmp_path, "review")
    assert "No case of the terminal waits for a label." in flat(out)  # labeled: out of the queue


def test_review_sample_rate_zero_sends_nothing_at_random(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-cli": {f"a{n}": ["Correct"] for n in range(1, 6)}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 6)])
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server,
                         REVIEW_SAMPLE_RATE="0")
    assert code == 0, out
    assert "sent to review" not in flat(out)
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case") == [(0,)]
