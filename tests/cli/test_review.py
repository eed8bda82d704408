"""`judgebot judge` sends a share of a file's rows to the review queue and says so; `judgebot review` lists the cases
waiting for a label."""

from __future__ import annotations

from pathlib import Path

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


def test_review_sample_rate_zero_sends_nothing_at_random(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-cli": {f"a{n}": ["Correct"] for n in range(1, 6)}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 6)])
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server,
                         REVIEW_SAMPLE_RATE="0")
    assert code == 0, out
    assert "sent to review" not in flat(out)
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case") == [(0,)]
