"""The `judgebot` command in a subprocess, against the local judge server over HTTP and a SQLite history file:
judging files and single triples, the judge's errors, quota and interruptions, and the rubrics commands.

The server runs in a thread of this process; every command runs with cwd=tmp_path (so no stray .env is
read) and an environment that names only what the test sets.
"""

from __future__ import annotations

import codecs
import csv
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing

import pytest

from tests.support.cli import (
    EXAMPLE,
    JUDGE_MODEL,
    ROOT,
    Billing,
    assert_scored,
    base_env,
    eth_responder,
    flat,
    history,
    judgebot,
    judgebot_json,
    judgebot_many,
    read_results,
    tag_for,
    write_rows,
)
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.rubric_files import SHIPPED

ETH_COLUMNS = ["correctness", "completeness", "result_tag", "reasoning", "headline", "passed", "label", "status",
               "error", "flags", "judge_model", "rubric_version", "cached"]
ARABIC_Q = "كيف أسجل في امتحاناتي في المعهد؟"
ARABIC_R = "يتم التسجيل عبر بوابة myStudies (ETHIS) خلال فترة التسجيل."
ARABIC_A = "سجّل في myStudies، بوابة الطلاب ETHIS، خلال فترة التسجيل."
HYPERLINK = '=HYPERLINK("http://evil.example/x","click me")'


# --- judge a file ---------------------------------------------------------------------------------


def test_judge_example_csv_writes_every_row_and_a_summary(tmp_path, judge_server):
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    with (tmp_path / "answers.csv").open("a", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([[ARABIC_Q, ARABIC_R, ARABIC_A, "campus-bot-ar"],
                                 ["How do I print?", "Web Print.", HYPERLINK, "campus-bot-v1"]])
    with (tmp_path / "answers.csv").open(encoding="utf-8", newline="") as f:
        original = list(csv.DictReader(f))
    assert len(original) == 10

    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)

    assert code == 0, out
    expected_tags = [tag_for(row["answer"]) for row in original]
    assert Counter(expected_tags) == {"Correct": 5, "Generic": 3, "Hallucination": 1, "Refusal": 1}
    text = flat(out)
    assert "pass rate 50% (5/10)" in text
    assert "mean correctness 1.00" in text and "mean completeness 1.30" in text and "mean headline 57.50" in text
    assert "result_tag Correct 5 · Generic 3 · Hallucination 1 · Refusal 1" in text
    assert "rows 10" in text and "scored 10" in text and "judge errors 0" in text

    fieldnames, results = read_results(tmp_path / "answers.results.csv")
    assert fieldnames == ["row", "question", "reference", "answer", "model", *ETH_COLUMNS]
    assert [r["row"] for r in results] == [str(n) for n in range(2, 12)]
    for source, result, tag in zip(original, results, expected_tags):
        shown = {k: ("'" + v if v.startswith("=") else v) for k, v in source.items()}
        assert {k: result[k] for k in source} == shown
        assert_scored(result, tag)
    assert results[8]["question"] == ARABIC_Q and results[8]["answer"] == ARABIC_A  # untouched
    assert results[9]["answer"] == "'" + HYPERLINK  # a spreadsheet shows it as text, never runs it
    # the judge saw the original text, not the neutralised one
    assert sorted(triple_of(b)[2] for b in judge_server.bodies()) == sorted(r["answer"] for r in original)
    assert history(tmp_path, "SELECT status, total_rows, source_name FROM run") == [("done", 10, "answers.csv")]


UTF8_ROWS = [["Was kostet die Mensa?", "Zwischen 5 und 7 CHF, laut Website.", "Etwa 6 CHF — günstig."],
             [ARABIC_Q, ARABIC_R, ARABIC_A]]
CP1252_ROWS = [["Où est la cafétéria?", "Au bâtiment HG, étage E.", "Im Hauptgebäude (HG), Stock E – 5 €."],
               ["Größe des Campus?", "Über 100 Gebäude.", "Rund 100 Gebäude; “groß”."]]
MULTILINE_ROWS = [["First line\nsecond line", 'He said "use myStudies"', "Line one,\r\nline two\n\nline four"],
                  ["Plain?", "Yes.", "Sure, \"quoted\", and, commas"]]
LONG_ANSWER = ("Use myStudies. " + "0123456789" * 20_000)[:200_000]


def _tab_utf16(rows: list[list[str]]) -> bytes:
    lines = ["question\treference\tanswer", *("\t".join(r) for r in rows)]
    return codecs.BOM_UTF16_LE + ("\r\n".join(lines) + "\r\n").encode("utf-16-le")


def _comma(rows: list[list[str]], header="question,reference,answer", encoding="utf-8") -> bytes:
    body = "".join(",".join('"' + c.replace('"', '""') + '"' for c in r) + "\r\n" for r in rows)
    return (header + "\r\n" + body).encode(encoding)


VARIANTS = {
    "utf8-bom": (codecs.BOM_UTF8 + _comma(UTF8_ROWS), ["question", "reference", "answer"], UTF8_ROWS, None),
    "utf16le-bom-tab": (_tab_utf16(UTF8_ROWS), ["question", "reference", "answer"], UTF8_ROWS, None),
    "cp1252": (_comma(CP1252_ROWS, encoding="cp1252"), ["question", "reference", "answer"], CP1252_ROWS, None),
    "semicolon-sep-line": (
        b"sep=;\r\nquestion;reference;answer\r\nWhere, exactly?;In HG, floor E;Floor E, HG\r\nWhy;Because;So\r\n"
,
        ["question", "reference", "answer"], [["Where, exactly?", "In HG, floor E", "Floor E, HG"],
                                              ["Why", "Because", "So"]], None),
    "multiline-quoted": (_comma(MULTILINE_ROWS), ["question", "reference", "answer"], MULTILINE_ROWS, None),
    "cell-of-200k-chars": (_comma([["Long?", "Use myStudies.", LONG_ANSWER], ["Short?", "Yes.", "No."]]),
                           ["question", "reference", "answer"],
                           [["Long?", "Use myStudies.", LONG_ANSWER], ["Short?", "Yes.", "No."]], None),
    "header-aliases": (
        _comma([["Q1?", "R1.", "A1.", "bot-a"], ["Q2?", "R2.", "A2.", ""]],
               header="Query,Ground Truth,model_response,model_name"),
        ["Query", "Ground Truth", "model_response", "model_name"],
        [["Q1?", "R1.", "A1."], ["Q2?", "R2.", "A2."]], ["bot-a", None]),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_csv_variant_reaches_the_judge_intact(tmp_path, judge_server, variant):
    data, headers, triples, models = VARIANTS[variant]
    judge_server.responder = eth_responder
    (tmp_path / "in.csv").write_bytes(data)

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", "tested-model",
                         "--out", "out.csv", server=judge_server)

    assert code == 0, out
    assert sorted(triple_of(b) for b in judge_server.bodies()) == sorted(tuple(t) for t in triples)
    fieldnames, results = read_results(tmp_path / "out.csv")
    assert fieldnames == ["row", *headers, *ETH_COLUMNS]
    assert len(results) == len(triples)
    for triple, result in zip(triples, results):
        assert [result[h] for h in headers[:3]] == triple
        assert_scored(result, tag_for(triple[2]))
    # --model-name fills the model of rows without one; a model column wins where it has a value
    wanted = [m or "tested-model" for m in (models or [None] * len(triples))]
    assert [m for (m,) in history(tmp_path, "SELECT model_name FROM judgment ORDER BY id")] == wanted


def test_malformed_rows_are_counted_shown_reported_and_fail_the_exit_code(tmp_path, judge_server):
    judge_server.responder = eth_responder
    (tmp_path / "in.csv").write_text(
        "question,reference,answer\n"
        "Where is my payslip?,In Staffnet.,In Staffnet ESS.\n"
        "one,two,three,four\n"
        "only,two\n"
        "How do I print?,Web Print.,Ask IT.\n", encoding="utf-8")

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)

    assert code == 1, out
    text = flat(out)
    assert "malformed rows 2" in text and "scored 2" in text and "rows 4" in text
    assert "row 3 malformed: it has 4 cells but the header has 3" in text
    assert "row 4 malformed: it has 2 cells but the header has 3" in text
    _, results = read_results(tmp_path / "in.results.csv")
    assert [(r["row"], r["status"]) for r in results] == [("2", "scored"), ("3", "malformed"), ("4", "malformed"),
                                                          ("5", "scored")]
    assert results[1]["error"] == "it has 4 cells but the header has 3"
    assert (results[1]["question"], results[1]["answer"]) == ("one", "three")
    assert results[2]["error"] == "it has 2 cells but the header has 3"
    assert (results[2]["question"], results[2]["reference"], results[2]["answer"]) == ("only", "two", "")
    assert results[1]["result_tag"] == results[1]["headline"] == ""
    assert len(judge_server.bodies()) == 2


def test_input_columns_named_like_result_columns_stay_apart(tmp_path, judge_server):
    """A results CSV judged again brings its own row, status and rubric columns as input columns."""
    judge_server.responder = eth_responder
    write_rows(tmp_path / "again.csv", ["row", "question", "reference", "answer", "status", "correctness"],
               [["7", "q1", "r1", "Use myStudies.", "scored", "0"], ["9", "q2", "r2", "Ask IT.", "scored", "1"]])

    code, out = judgebot(tmp_path, "judge", "again.csv", "--rubric", "eth", server=judge_server)

    assert code == 0, out
    with (tmp_path / "again.results.csv").open(encoding="utf-8-sig", newline="") as f:
        header, *rows = list(csv.reader(f))
    assert len(header) == len(set(header)), f"duplicate result columns: {header}"
    columns = dict(zip(header, zip(*rows)))
    assert ("2", "3") in columns.values(), "the row numbers are lost"
    assert ("7", "9") in columns.values(), "the input's own row cells are lost"
    assert columns["status"] == ("scored", "scored") and columns["judge_status"] == ("scored", "scored")
    assert columns["correctness"] == ("0", "1") and columns["judge_correctness"] == ("2", "0")


def test_two_answer_columns_are_refused_until_one_is_named_and_the_summary_shows_the_columns(tmp_path,
                                                                                            judge_server):
    billing = Billing(quota_after=1)
    judge_server.responder = billing
    rows = [["Where do I register?", "In myStudies.", "Ask someone.", f"Use myStudies ({n})."] for n in range(3)]
    write_rows(tmp_path / "two.csv", ["question", "reference", "answer", "model_response"], rows)

    code, out = judgebot(tmp_path, "judge", "two.csv", "--rubric", "eth", server=judge_server)
    assert code == 2, out
    assert 'both "answer" and "model_response" could be the answer column' in flat(out)
    assert "--columns answer=model_response" in flat(out)
    code, out = judgebot(tmp_path, "judge", "two.csv", "--rubric", "eth", "--columns", "answer=model_reply",
                         server=judge_server)
    assert code == 2 and 'there is no column "model_reply" for the answer' in flat(out), out
    assert judge_server.bodies() == [] and not (tmp_path / "h.db").exists()

    code, out = judgebot(tmp_path, "judge", "two.csv", "--rubric", "eth", "--columns", "answer=model_response",
                         server=judge_server)  # the judge runs out of quota after one row: the run pauses
    assert code == 1, out
    shown = "columns question=question, reference=reference, answer=model_response"
    assert shown in flat(out), out
    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 1 and shown in flat(out), out  # still out of quota, the columns kept with the run
    billing.quota_after = None
    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 0 and shown in flat(out), out

    assert sorted(billing.billed) == sorted(row[3] for row in rows)  # the answers graded are model_response's
    _, results = read_results(tmp_path / "two.results.csv")
    assert [(r["answer"], r["model_response"], r["result_tag"]) for r in results] == [
        (row[2], row[3], "Correct") for row in rows]


def test_duplicate_header_names_keep_both_columns_in_the_results(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "dup.csv", ["question", "reference", "answer", "note", "note"],
               [["Where?", "In myStudies.", "Use myStudies.", "first", "second"]])

    code, out = judgebot(tmp_path, "judge", "dup.csv", "--rubric", "eth", server=judge_server)

    assert code == 0, out
    fieldnames, [result] = read_results(tmp_path / "dup.results.csv")
    assert fieldnames[:6] == ["row", "question", "reference", "answer", "note", "note.2"]
    assert (result["note"], result["note.2"]) == ("first", "second")


@pytest.mark.slow
def test_usage_errors_exit_2_with_a_clear_message(tmp_path, judge_server):
    write_rows(tmp_path / "nocol.csv", ["Question", "Gold", "answer"], [["q", "r", "a"]])
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 8)
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    commands = {
        "missing column": ["judge", "nocol.csv", "--rubric", "eth"],
        "empty": ["judge", "empty.csv", "--rubric", "eth"],
        "binary": ["judge", "binary.csv", "--rubric", "eth"],
        "unknown rubric": ["judge", "answers.csv", "--rubric", "eht"],
        "unknown role": ["judge", "answers.csv", "--rubric", "eth", "--columns", "answer=answer,answers=model"],
        "columns of a triple": ["judge", "--rubric", "eth", "-q", "q", "-r", "r", "-a", "a", "--columns", "answer=a"],
    }
    outcome = dict(zip(commands, judgebot_many(tmp_path, list(commands.values()), server=judge_server)))

    assert all(code == 2 for code, _ in outcome.values()), outcome
    message = {name: flat(out) for name, (_, out) in outcome.items()}
    assert 'no reference column. Headers found: "Question", "Gold", "answer".' in message["missing column"]
    assert "reference: reference, ground truth, expected, reference answer" in message["missing column"]
    assert "the file is empty" in message["empty"]
    assert "is not a text CSV (it contains binary data)" in message["binary"]
    assert "No rubric named 'eht'. Did you mean 'eth'?" in message["unknown rubric"]
    assert "answers is not a role of a column: the roles are question, reference, answer, model" in message[
        "unknown role"]
    assert "--columns names the columns of a CSV file" in message["columns of a triple"]
    assert judge_server.bodies() == []
    assert not (tmp_path / "h.db").exists() or history(tmp_path, "SELECT count(*) FROM run") == [(0,)]


def test_an_empty_question_or_reference_is_refused_like_in_a_csv(tmp_path, judge_server):
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "", "-r", " ", "-a", "", server=judge_server)
    assert code == 2, out
    assert "-q and -r cannot be empty" in flat(out)
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "Where?", "-r", "", "-a", "Here", server=judge_server)
    assert code == 2 and "-r cannot be empty" in flat(out), out
    assert judge_server.bodies() == []
    assert not (tmp_path / "h.db").exists() or history(tmp_path, "SELECT count(*) FROM run") == [(0,)]


def test_no_judge_endpoint_exits_2_naming_both_settings(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", OPENAI_API_KEY=None,
                         OPENAI_BASE_URL=None)
    assert code == 2, out
    text = flat(out)
    assert "judgebot needs a judge to talk to. Set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL" in text
    assert "JUDGE_MODEL" in text and ".env" in text


# --- one triple, history --------------------------------------------------------------------------


def test_single_triple_prints_the_verdict_and_lands_in_history(tmp_path, judge_server):
    judge_server.responder = eth_responder
    code, out = judgebot(tmp_path, "judge", "--rubric", "strict", "-q", "Where do I book a sports course?",
                         "-r", "Through ASVZ.", "-a", "Sorry, I don't know.", "--model-name", "campus-bot",
                         server=judge_server)
    assert code == 0, out
    assert "Refusal · correctness 0/2 · completeness 0/2" in out and "FAIL" in out
    shown = json.loads(out[out.index("{"):out.index("}") + 1])
    assert shown == {"correctness": 0, "completeness": 0, "result_tag": "Refusal", "reasoning": "graded as Refusal"}
    assert [triple_of(b) for b in judge_server.bodies()] == [
        ("Where do I book a sports course?", "Through ASVZ.", "Sorry, I don't know.")]
    assert history(tmp_path, "SELECT status, model_name, tag FROM judgment") == [("scored", "campus-bot", "Refusal")]

    code, found, stderr = judgebot_json(tmp_path, "runs")
    assert code == 0, stderr
    [run] = found["runs"]
    assert (run["id"], run["status"], run["rubric"], run["rubric_version"], run["source"], run["judge_model"],
            run["rows"]) == (1, "done", "eth", "1.0", "cli", JUDGE_MODEL, 1)


@pytest.mark.slow
def test_once_a_command_ends_the_history_file_alone_holds_its_verdicts(tmp_path, judge_server):
    """judgebot ends without the interpreter's last collector passes (they cost start-up a third of its time): the
    connections are still closed at exit, so SQLite folds its write-ahead log back into the file, and a copy of the
    file alone (a backup, a file sent to a colleague) misses nothing. Real processes, which end as a user's do."""
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], [["q1", "r1", "a1"], ["q2", "r2", "a2"]])
    for command, scored in ((["judge", "--rubric", "eth", "-q", "Where?", "-r", "Here.", "-a", "Here."], 1),
                            (["judge", "in.csv", "--rubric", "eth"], 3), (["runs"], 3)):
        done = subprocess.run([sys.executable, "-m", "bot", *command], cwd=tmp_path, env=base_env(tmp_path, judge_server),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (tmp_path / "h.db-wal").exists(), command
        copy = tmp_path / "copy.db"
        copy.write_bytes((tmp_path / "h.db").read_bytes())
        with closing(sqlite3.connect(copy)) as db:
            assert db.execute("SELECT count(*) FROM judgment WHERE status = 'scored'").fetchone() == (scored,)
        copy.unlink()


# --- judge errors, quota, interruption --------------------------------------------------------------


def test_a_judge_that_never_returns_json_leaves_rows_invalid_with_the_reason(tmp_path, judge_server):
    judge_server.responder = lambda body: Reply(content="The answer is fine, I would say.")
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], [["q1", "r1", "a1"], ["q2", "r2", "a2"]])

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)

    assert code == 1, out
    text = flat(out)
    assert "judge errors 0" in text and "invalid replies 2" in text and "scored 0" in text and "row 2 invalid:" in text
    _, results = read_results(tmp_path / "in.results.csv")
    assert [r["status"] for r in results] == ["invalid", "invalid"]
    for result in results:
        assert result["error"] == ("the judge's reply broke the rubric after one repair: "
                                   "no JSON object found in the reply")
        assert result["result_tag"] == "" and result["passed"] == ""
    assert len(judge_server.bodies()) == 4  # one request and one repair per row


@pytest.mark.slow
def test_quota_mid_run_says_how_to_resume_and_resume_finishes_without_double_billing(tmp_path, judge_server):
    billing = Billing(quota_after=2)
    judge_server.responder = billing
    judge_server.latency = 0.05
    rows = [[f"question {i}?", f"Reference {i}, see myStudies.", f"Answer {i} via myStudies."] for i in range(6)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)

    assert code == 1, out
    text = flat(out)
    assert "Run 1 stopped: the judge account has no quota left (insufficient_quota)" in text
    assert "4 rows are still pending; `judgebot resume 1` finishes them." in text
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status ORDER BY status") == [
        ("pending", 4), ("scored", 2)]
    assert history(tmp_path, "SELECT status FROM run") == [("paused",)]

    billing.quota_after = None
    code, out = judgebot(tmp_path, "resume", server=judge_server)

    assert code == 0, out
    assert "Resuming run 1 (in.csv, rubric eth)." in flat(out)
    _, results = read_results(tmp_path / "in.results.csv")  # where the run began writing them
    assert [[r["question"], r["reference"], r["answer"]] for r in results] == rows
    for result in results:
        assert_scored(result, "Correct")
    assert sum(billing.billed.values()) == 6 and set(billing.billed.values()) == {1}
    assert history(tmp_path, "SELECT status, stop_reason FROM run") == [("done", None)]


@pytest.mark.slow
def test_a_killed_run_resumes_and_scores_every_row_once(tmp_path, judge_server):
    rows_total, concurrency = 40, 2
    billing = Billing()
    judge_server.responder = billing
    judge_server.latency = 0.3
    rows = [[f"question {i}?", "See myStudies.", f"Answer {i}: myStudies."] for i in range(rows_total)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)

    from tests.support.kills import count, kill_when

    kill_when(tmp_path, ["judge", "in.csv", "--rubric", "eth", "--concurrency", str(concurrency)],
              lambda: count(tmp_path, "SELECT count(*) FROM judgment WHERE status = 'scored'") >= 5,
              server=judge_server, what="5 rows scored")
    [(status,)] = history(tmp_path, "SELECT status FROM run")
    assert status == "running"  # killed: nothing could mark it
    [(left,)] = history(tmp_path, "SELECT count(*) FROM judgment WHERE status = 'pending'")
    assert 0 < left <= rows_total - 5

    judge_server.latency = 0
    code, out = judgebot(tmp_path, "resume", server=judge_server)

    assert code == 0, out
    judged = history(tmp_path, "SELECT row_number, status, answer, cached_from FROM judgment ORDER BY row_number")
    assert [(n, s) for n, s, _, _ in judged] == [(n, "scored") for n in range(2, rows_total + 2)]
    assert [a for _, _, a, _ in judged] == [r[2] for r in rows]
    assert all(c is None for _, _, _, c in judged)
    # Every row billed at least once; only the rows in flight at the kill and the verdicts not yet committed (those
    # of the last GROUP_SECONDS, 0.2 s: one per worker at most when replies take 0.3 s) may have been billed twice.
    assert set(billing.billed) == {r[2] for r in rows}
    assert rows_total <= sum(billing.billed.values()) <= rows_total + 2 * concurrency
    _, results = read_results(tmp_path / "in.results.csv")
    assert len(results) == rows_total and {r["status"] for r in results} == {"scored"}
    assert history(tmp_path, "SELECT status FROM run") == [("done",)]


# --- rubrics -------------------------------------------------------------------------------------------


def test_rubrics_lists_the_shipped_rubrics_with_descriptions(tmp_path):
    code, found, stderr = judgebot_json(tmp_path, "rubrics")
    assert code == 0 and found["broken"] == [], stderr
    assert [rubric["name"] for rubric in found["rubrics"]] == SHIPPED
    by_name = {rubric["name"]: rubric for rubric in found["rubrics"]}
    eth = by_name["eth"]
    assert (eth["aliases"], eth["kind"]) == (["eth-audit", "auditor", "strict"], "pointwise")
    assert (eth["tag_field"], eth["tags"]) == ("result_tag", ["Correct", "Generic", "Refusal", "Hallucination"])
    assert "result_tag" in eth["fields"] and by_name["academic"]["tags"] == []  # academic has no tag
    assert by_name["pairwise"]["kind"] == "pairwise"
    assert by_name["correctness"]["tags"] == ["Correct", "Incomplete", "Generic", "Refusal", "Hallucination"]
    code, out = judgebot(tmp_path, "rubrics")
    assert code == 0, out
    text = flat(out)
    for fragment in ("Coverage, factuality and clarity on 1-5", "Factual accuracy, relevance, clarity",
                     "Strict auditor; does the answer name the specific ETH tool", "eth-audit, auditor, strict"):
        assert fragment in text


GOLDEN_TAGS = {"myStudies": "Correct", "IT administrator": "Generic", "don't know": "Refusal",
               "eth-portal.com": "Hallucination"}


def golden_responder(body: dict) -> Reply:
    answer = triple_of(body)[2]
    return eth_reply(next(tag for word, tag in GOLDEN_TAGS.items() if word in answer))


@pytest.mark.parametrize("sound", [True, False], ids=["sound-judge", "always-correct"])
def test_rubrics_check_runs_the_goldens(tmp_path, judge_server, sound):
    judge_server.responder = golden_responder if sound else (lambda body: eth_reply("Correct"))
    code, out = judgebot(tmp_path, "rubrics", "check", "eth", server=judge_server)
    text = flat(out)
    assert "valid" in text and "eth.yaml (8 goldens)" in text
    assert len(judge_server.bodies()) == 4  # the 4 content-free goldens are failed by the screen, never sent
    assert "ok eth/content-free-punctuation" in text and "ok eth/content-free-question-repeated" in text
    if sound:
        assert code == 0, out
        assert "Every golden came out as expected." in text and "MISS" not in text
        assert text.count("ok eth/") == 8
    else:
        assert code == 1, out
        assert "ok eth/names-the-portal" in text
        for name in ("generic-advice", "honest-refusal", "invented-portal"):
            assert f"MISS eth/{name}" in text
        assert "result_tag = 'Correct', expected 'Refusal'" in text
        assert "3 golden(s) missed." in text


def test_content_free_answers_in_a_file_fail_without_asking_a_judge_that_passes_anything(tmp_path, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    question = "How do I register for my exams?"
    answers = [":", "Thought process:", "Let's solve this step by step", "how do I register for my exams",
               "Yes.", "42", "OK"]
    write_rows(tmp_path / "answers.csv", ["question", "reference", "answer"],
               [[question, "In myStudies.", answer] for answer in answers])
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--out", "results.csv",
                         server=judge_server)
    assert code == 0, out
    text = flat(out)
    assert "content-free answers 4 failed, not sent to the judge" in text and "3/7" in text
    assert sorted(triple_of(body)[2] for body in judge_server.bodies()) == ["42", "OK", "Yes."]
    _, rows = read_results(tmp_path / "results.csv")
    assert [(row["status"], row["passed"], row["headline"]) for row in rows[:4]] == [("scored", "false", "0.0")] * 4
    assert rows[3]["label"] == "Content-free: the answer only repeats the question"
    assert all(row["passed"] == "true" for row in rows[4:])


def _team_rubric(text: str, name: str) -> str:
    return (text.replace("name: eth\n", f"name: {name}\n")
            .replace("aliases: [eth-audit, auditor, strict]", f"aliases: [{name}-alias]")
            .replace("description: Strict auditor;", "description: Team copy of the auditor;"))


def test_a_team_rubric_directory_adds_rubrics(tmp_path, judge_server):
    team = tmp_path / "team"
    team.mkdir()
    (team / "team-audit.yaml").write_text(_team_rubric((ROOT / "rubrics" / "eth.yaml").read_text("utf-8"),
                                                       "team-audit"), encoding="utf-8")
    code, found, stderr = judgebot_json(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    assert code == 0, stderr
    assert [rubric["name"] for rubric in found["rubrics"]] == [*SHIPPED, "team-audit"]
    assert found["rubrics"][-1]["source"] == str(team / "team-audit.yaml")
    assert found["rubrics"][-1]["description"].startswith("Team copy of the auditor;")
    assert found["folders"][1:] == [str(team)]


def test_a_broken_team_rubric_is_left_out_and_named_with_its_field_by_every_command(tmp_path, judge_server):
    team = tmp_path / "team"
    team.mkdir()
    text = _team_rubric((ROOT / "rubrics" / "eth.yaml").read_text("utf-8"), "broken")
    (team / "broken.yaml").write_text(text.replace("  correctness: {type: integer, min: 0, max: 2,",
                                                   "  correctness: {type: integr, min: 0, max: 2,"),
                                      encoding="utf-8")
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    commands = [
        ["judge", "answers.csv", "--rubric", "broken"],
        ["rubrics"],
    ]
    (judged, judge_out), (listed, list_out) = judgebot_many(tmp_path, commands, server=judge_server,
                                                           RUBRICS_DIR=str(team))
    assert judged == 2, judge_out
    assert ("error: The rubric file broken.yaml in RUBRICS_DIR is broken, so the rubric 'broken' cannot be used until it "
            "is fixed (1 problem): - output.correctness.type: Input should be 'integer'") in flat(judge_out)
    assert listed == 0, list_out
    assert re.findall(r"^│ ([\w-]+)\s+│", list_out, re.MULTILINE) == SHIPPED
    assert f"broken {team / 'broken.yaml'}: output.correctness.type: Input should be 'integer'" in flat(list_out)
    assert judge_server.bodies() == []
    code, found, _ = judgebot_json(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    [broken] = found["broken"]
    assert code == 0 and broken["path"] == str(team / "broken.yaml")
    assert "output.correctness.type: Input should be 'integer'" in broken["problem"]


def test_a_judges_file_naming_a_slack_token_as_a_key_is_refused(tmp_path, judge_server):
    judge_server.responder = eth_responder
    (tmp_path / "judges.yaml").write_text(f"- model: a\n  base_url: {judge_server.base_url}\n  key_env: SLACK_BOT_TOKEN\n")
    code, out = judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", "--judges-file", "judges.yaml", "--yes",
                         server=judge_server, SLACK_BOT_TOKEN="xoxb-1-secret")
    assert code == 2 and "key_env SLACK_BOT_TOKEN names one of judgebot's own secrets" in flat(out), out
    assert judge_server.requests == [] and "xoxb-1-secret" not in out


def test_a_verdict_is_reused_only_from_the_same_endpoint(tmp_path, judge_server):
    from tests.support.openai_server import FakeJudgeServer

    judge_server.responder = eth_responder
    other = FakeJudgeServer(eth_responder).start()
    try:
        assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", "--out", "a.csv", server=judge_server)[0] == 0
        assert len(judge_server.bodies()) == 8
        # the same JUDGE_MODEL served elsewhere is another judge: nothing reused from the first server
        assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", "--out", "b.csv", server=other)[0] == 0
        assert len(other.bodies()) == 8
        assert {row["cached"] for row in read_results(tmp_path / "b.csv")[1]} == {"false"}
        # and on the first server again, its own verdicts are
        assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", "--out", "c.csv", server=judge_server)[0] == 0
        assert len(judge_server.bodies()) == 8
        assert {row["cached"] for row in read_results(tmp_path / "c.csv")[1]} == {"true"}
    finally:
        other.stop()


def test_model_name_beside_a_model_column_says_what_it_names(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"],
               [["q1", "r1", "Use myStudies.", "bot-a"], ["q2", "r2", "Use myStudies.", ""]])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", "bot-b", server=judge_server)
    assert code == 0 and "--model-name bot-b names only the rows whose cell there is empty" in flat(out), out
    assert history(tmp_path, "SELECT model_name FROM judgment ORDER BY row_number") == [("bot-a",), ("bot-b",)]
