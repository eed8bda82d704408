"""The review queue worked from a terminal: `judgebot review label` takes a person's labels case by case from the
keyboard (blind where the channel reviews blind), and `judgebot review --out` writes the open cases as a CSV whose
labels `labels import` (or judging the file) saves, closing the cases they label."""

from __future__ import annotations

import csv
import os
import signal
import time
from pathlib import Path

import pytest

from bot.records import Verdict
from bot.rubric import load_rubrics
from bot.store import Store, add_rows, create_run, iter_judgments, save_verdict, set_blind
from bot.trust.review import send_to_review
from tests.support import forkserver
from tests.support.cli import base_env, flat, history, judgebot, judgebot_json, read_results, write_rows
from tests.support.scripted_judge import Script

TAGS = {"a1": "Correct", "a2": "Generic", "a3": "Correct", "a4": "Refusal", "a5": "Correct", "a6": "Correct",
        "a7": "Hallucination", "a8": "Correct", "a9": "Generic", "a10": "Correct"}


def judged_file(tmp_path: Path, judge_server) -> None:
    """Ten rows judged in the terminal: three cases of them sent to the terminal's queue at random."""
    judge_server.responder = Script({"judge-cli": {answer: [tag] for answer, tag in TAGS.items()}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"a{n}"] for n in range(1, 11)])
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", server=judge_server)
    assert code == 0 and "3 cases sent to review (3 at random)" in flat(out), out


def open_count(tmp_path: Path, *channel: str) -> int:
    code, found, stderr = judgebot_json(tmp_path, "review", *channel)
    assert code == 0, stderr
    return len(found["cases"])


def test_three_cases_labeled_at_the_keyboard_close_and_count_in_calibration(tmp_path: Path, judge_server) -> None:
    judged_file(tmp_path, judge_server)
    typed = ("p\n1\nright on the portal\n"  # pass, tag 1 (Correct), a note
             "maybe\nf\nrefusal\n\n"  # a word that is no answer is asked again; the tag by name; no note
             "f\n\n\n")  # fail, no tag, no note
    code, out = judgebot(tmp_path, "review", "label", "--as", "ada", input=typed)

    text = flat(out)
    assert code == 0, out
    assert text.count("A case for your label") == 3 and text.count("picked at random") == 3
    assert "The judge said" in text and "Question q" in text and "Reference Use myStudies." in text
    assert "Please answer p (pass) or f (fail)" in text
    assert text.count("Saved your label of #") == 3
    assert "No case of the terminal waits for your label. 3 cases labeled" in text
    labels = history(tmp_path, "SELECT user_id, source, passed, tag, note FROM label ORDER BY id")
    assert labels == [("ada", "correction", 1, "Correct", "right on the portal"), ("ada", "correction", 0, "Refusal", None),
                      ("ada", "correction", 0, None, None)]
    assert history(tmp_path, "SELECT state, labeled_by FROM review_case") == [("labeled", "ada")] * 3
    assert open_count(tmp_path) == 0

    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth")
    assert code == 0, stderr
    assert found["labels"] == 3 and found["at_random"]["cases"] == 3 and found["at_random"]["pass_fail_labels"] == 3


def test_the_end_of_input_stops_cleanly_and_leaves_the_case_shown_in_the_queue(tmp_path: Path, judge_server) -> None:
    judged_file(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "review", "label", "--as", "bo", input="p\n\n\ns\n")  # one labeled, one skipped

    assert code == 0, out
    assert "Skipped: the case goes to someone else" in flat(out)
    assert "Stopped: 1 case labeled; the case shown was not labeled and stays in the queue." in flat(out)
    assert "Traceback" not in out and open_count(tmp_path) == 2
    # the case shown when input ended is not held for bo: it is offered first again; the skipped one waits a day
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case WHERE offered_to IS NOT NULL") == [(0,)]
    code, out = judgebot(tmp_path, "review", "label", "--as", "bo", input="q\n")
    assert code == 0 and "Stopped: 0 cases labeled" in flat(out)


def test_a_blind_channels_case_shows_the_verdict_only_once_the_label_is_saved(tmp_path: Path) -> None:
    eth = load_rubrics().get("eth")
    common = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-m", "channel_id": "C0BLIND", "team_id": "T0TEAM"}
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    run = create_run(store, **common)
    add_rows(store, [{**common, "run_id": run.id, "row_number": 1, "status": "pending", "question": "Where are grades?",
                      "reference": "Use myStudies.", "answer": "On the [red]portal[/red].",
                      "context": '["grades are in myStudies", "the portal is for rooms"]'}])
    output = {"correctness": 0, "completeness": 0, "result_tag": "Hallucination", "reasoning": "r"}
    verdict = Verdict(status="scored", output=output, headline=0.0, passed=False, label="Hallucination · secret",
                      tag="Hallucination", raw_reply="{}", prompt_hash="p" * 32, unsure=True, samples=3,
                      **{key: common[key] for key in ("rubric_name", "rubric_version", "rubric_hash", "judge_model")})
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")
    send_to_review(store, run, rate=0)
    set_blind(store, team_id="T0TEAM", channel_id="C0BLIND", blind=True, user_id="U0ADMIN")

    code, out = judgebot(tmp_path, "review", "--out", "blind.csv", "--channel", "C0BLIND")  # the file hides it too
    assert code == 0 and "1 open case of eth in channel C0BLIND written to blind.csv" in flat(out), out
    header, rows = read_results(tmp_path / "blind.csv")
    assert "judge_pass" not in header and "judge_tag" not in header and len(rows) == 1
    assert "secret" not in (tmp_path / "blind.csv").read_text(encoding="utf-8-sig")

    code, out = judgebot(tmp_path, "review", "label", "--channel", "C0BLIND", "--as", "cy",
                         input="f\nhallucination\nthe portal is wrong\n")

    assert code == 0, out
    before, _, after = out.partition("Saved your label")
    assert "Blind review: the judge's verdict is shown once your label is saved." in flat(before)
    assert "secret" not in before and "The judge said" not in before  # hidden until the label is saved
    assert "secret" in after and "You agree on pass/fail." in flat(after)
    assert "[1] grades are in myStudies" in before and "[2] the portal is for rooms" in before  # passages numbered
    assert "On the [red]portal[/red]." in before  # untrusted text printed as text, not as markup
    assert history(tmp_path, "SELECT channel_id, user_id, passed, tag, note FROM label") == [
        ("C0BLIND", "cy", 0, "Hallucination", "the portal is wrong")]
    assert open_count(tmp_path, "--channel", "C0BLIND") == 0


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_the_queue_as_a_csv_round_trip_closes_the_cases_it_labels_and_says_the_rows_it_cannot_match(
        tmp_path: Path, judge_server) -> None:
    judged_file(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "review", "--out", "queue.csv")
    assert code == 0 and "3 open cases of eth in the terminal written to queue.csv" in flat(out), out

    header, rows = read_results(tmp_path / "queue.csv")
    assert header == ["rubric", "question", "reference", "answer", "model", "human_pass", "human_result_tag", "note",
                      "why", "judge_pass", "judge_tag", "judgment_id"]
    assert len(rows) == 3 and all(row["human_pass"] == row["human_result_tag"] == row["note"] == "" for row in rows)
    assert {row["rubric"] for row in rows} == {"eth"} and {row["why"] for row in rows} == {"picked at random"}
    rows[0].update(human_pass="fail", human_result_tag="Generic", note="too vague")
    rows[1].update(human_result_tag="Correct")  # the tag alone: pass/fail by the rubric's rule on it
    stray = {**rows[2], "question": "a question never queued", "human_pass": "pass", "judgment_id": ""}
    with (tmp_path / "queue.csv").open("w", encoding="utf-8-sig", newline="") as f:
        writer = csv.DictWriter(f, header)
        writer.writeheader()
        writer.writerows([rows[0], rows[1], rows[2], stray])

    code, out = judgebot(tmp_path, "labels", "import", "queue.csv", LOGNAME="eve")  # labeled as the person here

    text = flat(out)
    assert code == 1, out  # a labeled row matched no open case
    assert ("2 cases of the terminal's queue labeled and closed; 1 row without a label left out; 1 labeled row "
            "matched no open case.") in text
    assert "row 5: no open case of the queue has these texts (labeled already, or never queued)" in text
    assert open_count(tmp_path) == 1
    assert history(tmp_path, "SELECT user_id, source, passed, pass_from, tag, note FROM label ORDER BY id") == [
        ("eve", "file", 0, "given", "Generic", "too vague"), ("eve", "file", None, None, "Correct", None)]
    code, out = judgebot(tmp_path, "labels", "import", "queue.csv", LOGNAME="eve")  # again: nothing is open for those rows now
    assert code == 1 and "0 cases of the terminal's queue labeled and closed" in flat(out)

    # the last case labeled in the file, and the file judged: its human_ columns close it (from the cache, $0)
    rows[2].update(human_pass="pass", note="fine")
    with (tmp_path / "queue.csv").open("w", encoding="utf-8-sig", newline="") as f:
        writer = csv.DictWriter(f, header)
        writer.writeheader()
        writer.writerows([rows[0], rows[1], rows[2]])
    asked = len(judge_server.bodies())
    code, out = judgebot(tmp_path, "judge", "queue.csv", "--rubric", "eth", server=judge_server, LOGNAME="eve")
    assert code == 0, out
    assert len(judge_server.bodies()) == asked  # every row's verdict came from the history
    assert open_count(tmp_path) == 0
    # eve's labels of the first two cases stand as they were; the third closed with its note
    assert history(tmp_path, "SELECT user_id, passed, note FROM label ORDER BY id") == [
        ("eve", 0, "too vague"), ("eve", None, None), ("eve", 1, "fine")]
    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth")
    assert code == 0 and found["labels"] == 3, stderr
    assert found["at_random"]["cases"] == 2  # the tag alone gives no pass/fail: eth's pass rule reads completeness too


def test_review_out_refuses_a_queue_of_several_rubrics_without_one_named(tmp_path: Path, judge_server) -> None:
    judged_file(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "review", "--out", "q.csv", "--rubric", "academic")
    assert code == 0 and "0 open cases of academic" in flat(out)
    code, out = judgebot(tmp_path, "labels", "import")
    assert code == 2 and "give its FILE" in flat(out)
    code, out = judgebot(tmp_path, "labels", "export")
    assert code == 2 and "give --rubric NAME" in flat(out)


def test_ctrl_c_at_a_prompt_stops_at_once_with_a_sentence(tmp_path: Path, judge_server) -> None:
    judged_file(tmp_path, judge_server)
    keyboard, out = tmp_path / "keyboard", tmp_path / "out.txt"
    os.mkfifo(keyboard)  # a keyboard nobody types on: the prompt waits
    command = forkserver.start(["review", "label", "--as", "di"], cwd=tmp_path, env=base_env(tmp_path), out=out,
                               stdin=keyboard)
    with keyboard.open("w"):  # nothing is typed
        deadline = time.monotonic() + 30
        while "Pass or fail?" not in out.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, out.read_text(encoding="utf-8")
            time.sleep(0.05)
        command.send_signal(signal.SIGINT)  # once: the prompt stops, the event loop does not wait for it
        code = command.wait(30)
    text = flat(out.read_text(encoding="utf-8"))
    assert code == 130, text
    assert "Stopped: 0 cases labeled; the case shown was not labeled and stays in the queue." in text
    assert "Traceback" not in text and history(tmp_path, "SELECT COUNT(*) FROM label") == [(0,)]
    assert history(tmp_path, "SELECT COUNT(*) FROM review_case WHERE offered_to IS NOT NULL") == [(0,)]
