"""`judgebot align`: examples from people's corrections, measured on held-out cases by cross-validation against the
rubric as it is, and written as a candidate rubric; a judge that ignores examples shows no improvement, honestly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.rubric import load_rubrics
from bot.store import add_rows, create_run, iter_judgments, save_verdict
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.learning_judge import LearningJudge
from tests.support.replies import triple_of

# 15 answers people call Correct and the judge too; 15 that begin "Maybe", which the judge passes as Correct and
# people call Generic (a fail by eth's own rule): 15 corrections to learn from.
ROWS = [[f"How do I register, case {n}?", "In myStudies.", f"Use myStudies, case {n}.", "Correct", "2"]
        for n in range(15)] + [[f"Where do I register, case {n}?", "In myStudies.", f"Maybe ask around, case {n}.",
                                "Generic", "", "too vague: names no tool" if n < 2 else ""] for n in range(15)]


def labels_file(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "human_result_tag",
                                                "human_completeness", "note"],
                      [row + [""] * (6 - len(row)) for row in ROWS])


@pytest.mark.slow
def test_align_fixes_held_out_cases_and_writes_a_candidate_beside_the_rubric(tmp_path: Path, judge_server) -> None:
    judge = LearningJudge({"Use": "Correct", "Maybe": "Correct"})
    judge_server.responder = judge

    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", labels_file(tmp_path), "--yes",
                         "--out", tmp_path / "candidates", server=judge_server)

    text = flat(out)
    assert code == 0, out
    # the rubric as it is agrees on the 15 "Use" cases; the candidate, whose examples come from the other folds,
    # learns that "Maybe ..." is Generic and fixes all 15 held-out cases, breaking none (exact McNemar: 2 * 0.5^15),
    # on pass/fail (Generic fails by eth's rule) and on the tag alike
    assert "30 held-out cases, 15 corrections; folds by question" in text
    assert "as it is agreement on pass/fail 50% (15/30)" in text and "candidate agreement on pass/fail 100% (30/30)" in text
    assert "pass/fail: fixed 15, broken 0 (McNemar p < 0.001)" in text
    assert "as it is the same tag 50% (15/30)" in text and "the tag: fixed 15, broken 0 (McNemar p < 0.001)" in text
    assert "The candidate agrees with people more often on pass/fail and the tag, and not by chance." in text
    assert "fixed row 17: people Generic (fail); before Correct (pass), after Generic (fail)" in text
    assert judge.leaks == []  # no held-out case was ever shown as its own example
    assert len(judge_server.bodies()) == 60  # each case once as it is, once with the candidate

    candidate = load_rubrics(tmp_path / "candidates").get("eth-aligned")
    assert candidate.version == "1.1" and 1 <= len(candidate.examples) <= 6
    assert all(example.expected == {"result_tag": "Generic"} for example in candidate.examples)
    assert len({example.question for example in candidate.examples}) == len(candidate.examples)
    written = (tmp_path / "candidates" / "eth-aligned.yaml").read_text(encoding="utf-8")
    assert written.startswith("# eth-aligned 1.1: eth 1.0 with")
    assert ("agreement on pass/fail 50% -> 100%, fixed 15, broken 0; on the tag 50% -> 100%, fixed 15, broken 0"
            in written)
    # the instructions as blocks a reviewer can diff line by line, not one escaped line; read back exactly
    eth = load_rubrics(None).get("eth")
    assert "\nsystem: |\n  You audit answers" in written and "\\n" not in written
    assert f"  {eth.system.splitlines()[1]}" in written.splitlines()
    assert candidate.system == eth.system and candidate.user_template == eth.user_template
    # the check runs are kept out of every figure: the terminal's history shows no judgment of them
    assert history(tmp_path, "SELECT COUNT(*) FROM run WHERE source != 'check'") == [(0,)]


@pytest.mark.slow
def test_a_judge_that_ignores_examples_shows_no_improvement(tmp_path: Path, judge_server) -> None:
    judge_server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"}, ignores_examples=True)
    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", labels_file(tmp_path), "--yes",
                         "--out", tmp_path, server=judge_server)
    text = flat(out)
    assert code == 0, out
    assert "as it is agreement on pass/fail 50% (15/30)" in text and "candidate agreement on pass/fail 50% (15/30)" in text
    assert "pass/fail: fixed 0, broken 0 (McNemar n/a)" in text and "No improvement that could not be chance" in text
    assert "the tag:" not in text  # no tag moved: no second line


@pytest.mark.slow
def test_too_few_labels_or_corrections_are_refused_with_a_sentence(tmp_path: Path, judge_server) -> None:
    few = write_rows(tmp_path / "few.csv", ["question", "reference", "answer", "human_result_tag"],
                     [[f"q{n}", "r", f"Use it {n}", "Correct"] for n in range(12)])
    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", few, "--yes", server=judge_server)
    assert code == 2 and "12 labeled cases of eth are too few to align on: it takes at least 20" in flat(out)
    assert judge_server.bodies() == []

    agreeing = write_rows(tmp_path / "agreeing.csv", ["question", "reference", "answer", "human_result_tag",
                                                      "human_completeness"],
                          [[f"q{n}", "r", f"Use it {n}", "Correct", "2"] for n in range(22)])
    judge_server.responder = LearningJudge({"Use": "Correct"})
    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", agreeing, "--yes", server=judge_server)
    assert code == 2 and "disagrees with people on 0 of 22 labeled cases: too few corrections" in flat(out)
    assert not list(tmp_path.glob("*-aligned.yaml"))


@pytest.mark.slow  # judges the labeled rows fold by fold through a command: 3 s alone, 11-25 s beside other tests
def test_align_on_a_channels_labels_offers_their_notes_and_reads_no_other_channel(tmp_path: Path,
                                                                                 judge_server) -> None:
    from bot.records import Verdict
    from bot.store import Store, save_label

    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    eth = load_rubrics(Path(__file__).parents[2] / "rubrics").get("eth")
    common = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-cli"}
    for channel, note in (("C1", "names no tool"), ("C2", "SECRET note of another channel")):
        run = create_run(store, **common, channel_id=channel, team_id="T1")
        add_rows(store, [{**common, "run_id": run.id, "row_number": n + 2, "status": "pending", "question": question,
                         "reference": reference, "answer": answer, "channel_id": channel, "team_id": "T1"}
                        for n, (question, reference, answer, *_) in enumerate(ROWS)])
        output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
        for row in iter_judgments(store, run.id):
            assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                      label="Correct", tag="Correct", raw_reply="{}",
                                                      prompt_hash="p" * 32, **common), cache_key=f"k{row.id}")
            generic = row.answer.startswith("Maybe")
            values = {"result_tag": "Generic" if generic else "Correct", "correctness": 0 if generic else 2,
                      "completeness": 1 if generic else 2}
            save_label(store, judgment=row, user_id="U1", source="correction", values=values, passed=not generic,
                       pass_from="rule", tag=values["result_tag"], headline=None,
                       note=note if generic and row.row_number == 17 else None)
    judge_server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"})

    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--channel", "C1", "--yes", "--out", tmp_path,
                         server=judge_server)

    assert code == 0, out
    assert "fixed 15, broken 0" in flat(out)
    written = (tmp_path / "eth-aligned.yaml").read_text(encoding="utf-8")
    assert "#   - names no tool" in written and "SECRET" not in written
    assert all("SECRET" not in str(body) for body in judge_server.bodies())


@pytest.mark.slow  # six batches polled through a command: 11 s beside other tests
def test_align_through_the_batch_api_measures_the_same(tmp_path: Path) -> None:
    from tests.support.batch_server import BatchJudgeServer

    server = BatchJudgeServer().start()
    try:
        server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"})
        code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", labels_file(tmp_path), "--yes",
                             "--batch", "--out", tmp_path, server=server, BATCH_POLL_SECONDS="0.05",
                             JUDGE_MODEL="gpt-4o")
    finally:
        server.stop()
    assert code == 0, out
    assert "fixed 15, broken 0 (McNemar p < 0.001)" in flat(out)
    # every verdict came through batches: the rubric as it is once, then a batch per fold
    assert history(tmp_path, "SELECT COUNT(DISTINCT run_id), SUM(done) FROM run_batch") == [(6, 60)]


def test_align_counts_cases_deals_folds_by_question_and_splits_tag_fixes_from_pass_fail(tmp_path: Path,
                                                                                         judge_server) -> None:
    # 12 questions, two answers each: "Sorry ..." answers the judge calls Generic and people Refusal (both fail:
    # fixing them changes the tag, not pass/fail); "Use ..." answers both call Correct. The answer "Sorry case 0." is
    # labeled by three people.
    rows = []
    for question in range(12):
        for answer, tag in ((f"Use myStudies, case {question}.", "Correct"), (f"Sorry case {question}.", "Refusal")):
            people = ["ana", "ben", "eva"] if answer == "Sorry case 0." else ["ana"]
            rows += [[f"Where do I register, {question}?", "In myStudies.", answer, tag, "2" if tag == "Correct" else "0",
                      person] for person in people]
    labels = write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "human_result_tag",
                                                  "human_completeness", "labeled_by"], rows)
    judge = LearningJudge({"Use": "Correct", "Sorry": "Generic"})
    prompts: list[tuple[str, list[str]]] = []  # (the question judged, the questions of the examples beside it)

    def watched(body: dict):
        user = next(message["content"] for message in body["messages"] if message["role"] == "user")
        prompts.append((triple_of(body)[0], re.findall(r"^Question: (.*)$", user, re.MULTILINE)))
        return judge(body)

    judge_server.responder = watched
    code, out = judgebot(tmp_path, "align", "--rubric", "eth", "--labels", labels, "--yes", "--folds", "3",
                         "--out", tmp_path, server=judge_server)

    text = flat(out)
    assert code == 0, out
    # no case was judged beside an example of its own question: the folds are dealt by question
    assert all(question not in shown for question, shown in prompts if shown)
    assert any(shown for _, shown in prompts)
    # 24 cases (26 labels); pass/fail agrees before and after (Generic and Refusal both fail); the tag is fixed on
    # 12 cases, each once though one has three labels: McNemar over cases, 2 / 2^12
    assert "(24 held-out cases, 26 labels, 12 corrections; folds by question)" in text
    assert "as it is agreement on pass/fail 100% (26 labels of 24 cases, each case weighing one)" in text
    assert "pass/fail: fixed 0, broken 0 (McNemar n/a)" in text
    assert "as it is the same tag 50% (26 labels of 24 cases, each case weighing one)" in text
    assert "the tag: fixed 12, broken 0 (McNemar p < 0.001)" in text
    assert "The candidate agrees with people more often on the tag, and not by chance." in text


def test_mcnemar_over_held_out_cases_counts_a_case_labeled_three_times_once() -> None:
    from bot.trust.align_report import AlignReport, Changed, verdict_text
    from bot.trust.calibration import calibrate
    from bot.trust.stats.mcnemar import mcnemar_p

    # 4 fixed cases: as cases p = 2 / 2^4 = 0.125, not "not by chance" (as 6 labels it would read 0.031)
    assert mcnemar_p(4, 0) == 0.125 and mcnemar_p(6, 0) == 0.03125
    found = AlignReport(4, 4, calibrate([]), calibrate([]), fixed=[Changed(n, "q", "-", "-", "-") for n in range(4)],
                        p=mcnemar_p(4, 0))
    assert not found.improved and verdict_text(found).startswith("No improvement that could not be chance")
