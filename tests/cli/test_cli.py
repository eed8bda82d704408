"""The `judgebot` command in a subprocess, against the local judge server over HTTP and a SQLite history file.

The server runs in a thread of this process; every command runs with cwd=tmp_path (so no stray .env is
read) and an environment that names only what the test sets.
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import true

from bot.store import Store, make_engine
from bot.store.models import Feedback, Judgment, JudgmentTally
from bot.store.tallies import add_judgments
from tests.support import forkserver
from tests.support.cli import (
    JUDGE_MODEL,
    Billing,
    base_env,
    eth_responder,
    flat,
    history,
    judgebot,
    read_results,
    tag_for,
    write_rows,
)
from tests.support.openai_server import Reply
from tests.support.read_only import read_only
from tests.support.replies import VERDICTS, eth_reply, triple_of
from tests.support.slack_side import SIGNING_SECRET

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "answers.csv"
ETH_COLUMNS = ["correctness", "completeness", "result_tag", "reasoning", "headline", "passed", "label", "status",
               "error", "flags", "judge_model", "rubric_version", "cached"]
ARABIC_Q = "كيف أسجل في امتحاناتي في المعهد؟"
ARABIC_R = "يتم التسجيل عبر بوابة myStudies (ETHIS) خلال فترة التسجيل."
ARABIC_A = "سجّل في myStudies، بوابة الطلاب ETHIS، خلال فترة التسجيل."
HYPERLINK = '=HYPERLINK("http://evil.example/x","click me")'


# --- helpers -------------------------------------------------------------------------------------


def judgebot_many(tmp_path: Path, commands: list[list[str]], server=None, **extra: str | None):
    """Several independent commands at once (they only read); [(exit code, output)] in order."""
    env = base_env(tmp_path, server, **extra)
    procs = [subprocess.Popen([sys.executable, "-m", "bot", *map(str, args)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for args in commands]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        text = out.decode("utf-8")
        assert "Traceback" not in text, text
        results.append((proc.returncode, text))
    return results


def assert_scored(row: dict[str, str], tag: str) -> None:
    correctness, completeness = VERDICTS[tag]
    assert row["status"] == "scored" and row["error"] == "", row
    assert (row["correctness"], row["completeness"], row["result_tag"]) == (str(correctness), str(completeness), tag)
    assert row["reasoning"] == f"graded as {tag}"
    assert float(row["headline"]) == (correctness + completeness) / 4 * 100
    assert row["passed"] == ("true" if tag == "Correct" else "false")
    assert row["label"] == f"{tag} · correctness {correctness}/2 · completeness {completeness}/2"
    assert (row["judge_model"], row["rubric_version"], row["cached"]) == (JUDGE_MODEL, "1.0", "false")


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
    assert "row 3 malformed: row 3 has 4 cells but the header has 3" in text
    assert "row 4 malformed: row 4 has 2 cells but the header has 3" in text
    _, results = read_results(tmp_path / "in.results.csv")
    assert [(r["row"], r["status"]) for r in results] == [("2", "scored"), ("3", "malformed"), ("4", "malformed"),
                                                          ("5", "scored")]
    assert results[1]["error"] == "row 3 has 4 cells but the header has 3"
    assert (results[1]["question"], results[1]["answer"]) == ("one", "three")
    assert results[2]["error"] == "row 4 has 2 cells but the header has 3"
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

    code, out = judgebot(tmp_path, "runs")
    assert code == 0, out
    [line] = [line for line in out.splitlines() if re.match(r"│\s*1\s*│", line)]
    assert "done" in line and "eth 1.0" in line and "cli" in line and JUDGE_MODEL in line


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
    assert "judge errors 2" in text and "scored 0" in text and "row 2 invalid:" in text
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


def test_rubrics_lists_the_three_rubrics_with_descriptions(tmp_path):
    code, out = judgebot(tmp_path, "rubrics")
    assert code == 0, out
    names = re.findall(r"^│ (\w+)\s+│", out, re.MULTILINE)
    assert names == ["academic", "benchmark", "eth"]
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
    assert "valid" in text and "eth.yaml (4 goldens)" in text
    assert len(judge_server.bodies()) == 4
    if sound:
        assert code == 0, out
        assert "Every golden came out as expected." in text and "MISS" not in text
        assert text.count("ok eth/") == 4
    else:
        assert code == 1, out
        assert "ok eth/names-the-portal" in text
        for name in ("generic-advice", "honest-refusal", "invented-portal"):
            assert f"MISS eth/{name}" in text
        assert "result_tag = 'Correct', expected 'Refusal'" in text
        assert "3 golden(s) missed." in text


def _team_rubric(text: str, name: str) -> str:
    return (text.replace("name: eth\n", f"name: {name}\n")
            .replace("aliases: [eth-audit, auditor, strict]", f"aliases: [{name}-alias]")
            .replace("description: Strict auditor;", "description: Team copy of the auditor;"))


def test_a_team_rubric_directory_adds_rubrics(tmp_path, judge_server):
    team = tmp_path / "team"
    team.mkdir()
    (team / "team-audit.yaml").write_text(_team_rubric((ROOT / "rubrics" / "eth.yaml").read_text("utf-8"),
                                                       "team-audit"), encoding="utf-8")
    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    assert code == 0, out
    assert re.findall(r"^│ ([\w-]+)\s+│", out, re.MULTILINE) == ["academic", "benchmark", "eth", "team-audit"]
    assert "Team copy of the auditor;" in flat(out)


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
    assert ("error: The rubric 'broken' cannot be used until its file is fixed: broken.yaml: output.correctness.type: "
            "Input should be 'integer'") in flat(judge_out)
    assert listed == 0, list_out
    assert re.findall(r"^│ ([\w-]+)\s+│", list_out, re.MULTILINE) == ["academic", "benchmark", "eth"]
    assert f"broken {team / 'broken.yaml'}: output.correctness.type: Input should be 'integer'" in flat(list_out)
    assert judge_server.bodies() == []


# --- retrying errors, runs busy elsewhere, checks before any request, settings -----------------------------------


def garbage_then_healthy(body: dict) -> Reply:
    """GARBLE answers get prose (invalid), FAIL400 answers a 400 (error), the rest a verdict."""
    answer = triple_of(body)[2]
    if "GARBLE" in answer:
        return Reply(content="Looks fine to me.")
    if "FAIL400" in answer:
        return Reply(status=400, error={"message": "this request cannot be served", "type": "invalid_request_error",
                                        "code": None})
    return eth_responder(body)


RETRY_ROWS = [["Where is my payslip?", "In Staffnet.", "GARBLE: see Staffnet."],
              ["How do I print?", "Web Print.", "FAIL400: use webprint."],
              ["How do I register?", "In myStudies.", "Use myStudies."]]


def test_resume_retry_errors_judges_the_failed_rows_again(tmp_path, judge_server):
    judge_server.responder = garbage_then_healthy
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], RETRY_ROWS)
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)
    assert code == 1, out
    assert "model under test" not in out  # one model (none named): no per-model table
    assert history(tmp_path, "SELECT row_number, status FROM judgment ORDER BY row_number") == [
        (2, "invalid"), (3, "error"), (4, "scored")]
    before = len(judge_server.bodies())

    judge_server.responder = eth_responder  # the judge is healthy again
    code, out = judgebot(tmp_path, "resume", "1", "--retry-errors", server=judge_server)

    assert code == 0, out
    text = flat(out)
    assert "2 rows with a judge error or an invalid reply were judged again." in text
    assert "scored 3" in text and "judge errors 0" in text
    assert sorted(triple_of(b)[2] for b in judge_server.bodies()[before:]) == sorted(r[2] for r in RETRY_ROWS[:2])
    _, results = read_results(tmp_path / "in.results.csv")
    assert [r["status"] for r in results] == ["scored"] * 3 and [r["error"] for r in results] == [""] * 3
    assert history(tmp_path, "SELECT status, owner FROM run") == [("done", None)]


def test_a_good_results_file_survives_a_stopped_run_and_resume_writes_where_the_run_began(tmp_path, judge_server):
    rows = [[f"question {i}?", f"Reference {i}, see myStudies.", f"Answer {i} via myStudies."] for i in range(4)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)
    judge_server.responder = lambda body: eth_reply("Generic")
    assert judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)[0] == 0
    good = (tmp_path / "in.results.csv").read_bytes()

    billing = Billing(quota_after=1)  # judged again: the quota runs out after one row
    judge_server.responder = billing
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--fresh", server=judge_server)

    assert code == 1, out
    assert "in.results.csv is left as it was: run 2's results replace it once its pending rows are judged" in flat(out)
    assert (tmp_path / "in.results.csv").read_bytes() == good
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    billing.quota_after = None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out = judgebot(elsewhere, "resume", server=judge_server, JUDGEBOT_DB=str(tmp_path / "h.db"))

    assert code == 0, out
    assert list(elsewhere.iterdir()) == []  # no run-2.results.csv in the working directory
    _, results = read_results(tmp_path / "in.results.csv")
    for result in results:
        assert_scored(result, "Correct")
    assert sum(billing.billed.values()) == 4
    assert history(tmp_path, "SELECT id, results_path FROM run") == [(1, str(tmp_path / "in.results.csv")),
                                                                     (2, str(tmp_path / "in.results.csv"))]


def test_resume_of_a_finished_run_writes_its_results_elsewhere(tmp_path, judge_server):
    """What the message for an unwritable results file advises: `judgebot resume ID --out PATH`."""
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], RETRY_ROWS[2:])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out

    code, out = judgebot(tmp_path, "resume", "1", "--out", "again.csv", server=judge_server)

    assert code == 0, out
    assert len(judge_server.bodies()) == 1  # nothing judged again
    assert read_results(tmp_path / "again.csv")[1] == read_results(tmp_path / "in.results.csv")[1]


def judgebot_each(tmp_path: Path, commands: list[tuple[list[str], dict[str, str | None]]], server=None):
    """Independent commands at once, each with settings of its own; [(exit code, output)] in order."""
    procs = [subprocess.Popen([sys.executable, "-m", "bot", *map(str, args)], cwd=tmp_path,
                              env=base_env(tmp_path, server, **extra), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) for args, extra in commands]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        results.append((proc.returncode, out.decode("utf-8")))
    return results


@pytest.mark.slow
def test_problems_found_before_any_request_and_settings(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], RETRY_ROWS[2:])
    (tmp_path / "header.csv").write_text("question,reference,answer\n", encoding="utf-8")
    (tmp_path / "db-is-a-dir").mkdir()
    commands = {
        "out in a missing directory": (["judge", "in.csv", "--rubric", "eth", "--out", "missing/out.csv"], {}),
        "header only": (["judge", "header.csv", "--rubric", "eth"], {"JUDGEBOT_DB": str(tmp_path / "header.db")}),
        "debug": (["rubrics"], {"JUDGEBOT_LOG_LEVEL": "debug"}),
        "nonsense": (["rubrics"], {"JUDGEBOT_LOG_LEVEL": "nonsense"}),
        "database is a directory": (["runs"], {"JUDGEBOT_DB": str(tmp_path / "db-is-a-dir")}),
    }
    outcome = dict(zip(commands, judgebot_each(tmp_path, list(commands.values()), server=judge_server)))
    for name, (_, out) in outcome.items():
        assert "Traceback" not in out, (name, out)
    text = {name: flat(out) for name, (_, out) in outcome.items()}
    codes = {name: code for name, (code, _) in outcome.items()}

    assert codes["out in a missing directory"] == 2, text
    assert "cannot write the results to missing/out.csv: choose another --out" in text["out in a missing directory"]
    assert not (tmp_path / "missing").exists() and not (tmp_path / "h.db").exists()

    assert codes["header only"] == 2, text
    assert "header.csv has a header but no data rows" in text["header only"]
    db = sqlite3.connect(tmp_path / "header.db")
    try:  # no run is made for it
        assert db.execute("SELECT count(*) FROM run").fetchall() == [(0,)]
    finally:
        db.close()

    assert codes["debug"] == 0 and "Strict auditor" in text["debug"], text["debug"]
    assert codes["nonsense"] == 2, text["nonsense"]
    assert "a setting is invalid: JUDGEBOT_LOG_LEVEL" in text["nonsense"]

    broken_db = text["database is a directory"]
    assert codes["database is a directory"] == 2, broken_db
    assert "cannot open the history database" in broken_db and "Check JUDGEBOT_DB or DATABASE_URL" in broken_db
    assert judge_server.bodies() == []


@pytest.mark.parametrize(("url", "said"), [
    ("not a url", "DATABASE_URL cannot be read as a database URL: write it like postgresql+psycopg://"),
    ("postgresql://judge:s3cret-pw@db.example:notaport/history", "DATABASE_URL cannot be read as a database URL"),
    ("nosuchdb://judge:s3cret-pw@db.example/history",
     "DATABASE_URL nosuchdb://judge:***@db.example/history names a kind of database judgebot does not know (nosuchdb)"),
    ("postgresql+pg8000://judge:s3cret-pw@db.example/history",
     "the driver pg8000 that DATABASE_URL postgresql+pg8000://judge:***@db.example/history needs is not installed. "
     "For PostgreSQL, `pip install 'judgebot[postgres]'` installs psycopg"),
])
def test_a_database_url_that_cannot_be_used_is_a_settings_error_without_its_password(tmp_path, url, said):
    for command in (["runs"], ["judge", "-q", "Q?", "-r", "R", "-a", "A", "--rubric", "eth"]):
        code, out = judgebot(tmp_path, *command, DATABASE_URL=url, OPENAI_BASE_URL="http://127.0.0.1:9/v1")
        assert code == 2, out
        assert said in flat(out), out
        assert "s3cret-pw" not in out and "unexpected error" not in out


def test_a_history_that_fails_names_its_file_and_says_what_to_do(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"],
               [["How do I register?", "In myStudies.", "Use myStudies."], ["How do I print?", "Web Print.", "Ask."]])
    assert judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)[0] == 0
    db = tmp_path / "h.db"
    saved = history(tmp_path, "SELECT id, status, headline FROM judgment ORDER BY id")
    bodies = len(judge_server.bodies())

    with read_only(db):
        judged, judge_out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--fresh", server=judge_server)
        listed, runs_out = judgebot(tmp_path, "runs")
    assert judged == 2, judge_out
    assert (f"the history {db} is read-only, so nothing more can be saved in it: make the file and its folder "
            "writable. Every row saved before is kept") in flat(judge_out)
    assert "unexpected error" not in judge_out and "[SQL:" not in judge_out
    assert len(judge_server.bodies()) == bodies  # nothing judged that could not be saved
    assert listed == 0 and "eth 1.0" in flat(runs_out)  # a read-only history can still be read
    assert history(tmp_path, "SELECT id, status, headline FROM judgment ORDER BY id") == saved

    history(tmp_path, "PRAGMA wal_checkpoint(TRUNCATE)")
    damaged = tmp_path / "damaged.db"
    shutil.copy(db, damaged)
    with damaged.open("r+b") as file:  # every page after the first overwritten with junk
        size = file.seek(0, os.SEEK_END)
        file.seek(4096)
        file.write(bytes(range(256)) * ((size - 4096) // 256 + 1))
    for command in (["runs"], ["history"], ["judge", "in.csv", "--rubric", "eth"]):
        code, out = judgebot(tmp_path, *command, server=judge_server, JUDGEBOT_DB=str(damaged))
        assert code == 2, (command, out)
        assert f"the history {damaged} is damaged" in flat(out) and f"sqlite3 {damaged} .recover" in flat(out), out
        assert "unexpected error" not in out and "[SQL:" not in out

    notes = tmp_path / "notes.db"
    notes.write_text("my notes, not a history\n", encoding="utf-8")
    other = tmp_path / "contacts.db"
    with sqlite3.connect(other) as contacts:
        contacts.execute("CREATE TABLE contact (name TEXT)")
    contacts.close()
    for path, said in [(notes, "it is not an SQLite database"),
                       (other, "it is an SQLite database of something else (tables contact)")]:
        before = path.read_bytes()
        code, out = judgebot(tmp_path, "runs", JUDGEBOT_DB=str(path))
        assert code == 2 and f"{path} is not a judgebot history: {said}" in flat(out), out
        assert path.read_bytes() == before

    empty = tmp_path / "empty.db"
    empty.touch()  # a file made for the history beforehand: truly empty, so it becomes one
    assert judgebot(tmp_path, "runs", JUDGEBOT_DB=str(empty))[0] == 0
    with sqlite3.connect(empty) as made:
        assert ("schema_version",) in made.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    made.close()


def test_per_model_table_shows_names_with_markup_literally(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"], [
        ["How do I register?", "In myStudies.", "Use myStudies.", "[/]"],
        ["How do I print?", "Web Print.", "Ask someone.", "[/]"],
        ["How do I register?", "In myStudies.", "Register in myStudies.", "[bold red]x"],
        ["Where is my payslip?", "In Staffnet.", "Staffnet has it.", "[bold red]x"],
        ["How do I print?", "Web Print.", "Print it somehow.", "plain-bot"],
    ])

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)

    assert code == 0, out
    text = flat(out)
    assert "pass rate 60% (3/5)" in text
    assert "model under test rows scored pass rate mean headline" in text
    table = text[text.index("model under test"):]
    # best mean headline first; each name exactly as written in the CSV
    assert re.search(r"\[bold red\]x 2 2 100% 100\.0 \[/\] 2 2 50% 62\.5 plain-bot 1 1 0% 25\.0", table), table


@pytest.mark.slow
def test_resume_of_a_run_another_live_process_is_judging_exits_2(tmp_path, judge_server):
    def quota_after_the_first_error(body: dict) -> Reply:
        return garbage_then_healthy(body) if "FAIL400" in triple_of(body)[2] else Reply.quota()

    judge_server.responder = quota_after_the_first_error
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], RETRY_ROWS[1:])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--concurrency", "1", server=judge_server)
    assert code == 1, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status ORDER BY status") == [
        ("error", 1), ("pending", 1)]
    heartbeat = datetime.now(UTC).replace(tzinfo=None).isoformat(sep=" ")
    db = sqlite3.connect(tmp_path / "h.db")
    with db:
        db.execute("UPDATE run SET status = 'running', owner = 'otherhost:1', heartbeat_at = ?", (heartbeat,))
    db.close()
    judge_server.responder = eth_responder
    before = len(judge_server.bodies())

    results = judgebot_many(tmp_path, [["resume", "1"], ["resume"]], server=judge_server)
    for code, out in results:
        assert code == 2, out
        assert "run 1 is being judged by another judgebot process right now" in flat(out), out
    assert len(judge_server.bodies()) == before
    assert history(tmp_path, "SELECT status, owner FROM run") == [("running", "otherhost:1")]

    code, out = judgebot(tmp_path, "resume", "1", "--retry-errors", server=judge_server)
    assert code == 2, out
    assert "being judged by another judgebot process" in flat(out)
    # refused: so the other process's rows are left as they were, its error row included
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status ORDER BY status") == [
        ("error", 1), ("pending", 1)]


def test_results_never_overwrite_the_input_and_a_home_relative_history_works(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"],
               [["How do I register?", "In myStudies.", "Use myStudies."]])
    original = (tmp_path / "in.csv").read_bytes()

    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--out", "./in.csv", server=judge_server)
    assert code == 2 and "is the input file; give the results another name" in flat(out)
    assert (tmp_path / "in.csv").read_bytes() == original and judge_server.bodies() == []

    # JUDGEBOT_DB as a .env file would write it, with ~ for the home directory
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server,
                         HOME=str(tmp_path / "home"), JUDGEBOT_DB="~/judgebot/history.db")
    assert code == 0, out
    assert (tmp_path / "home" / "judgebot" / "history.db").is_file()
    assert not (tmp_path / "~").exists()


def test_a_run_whose_loading_never_finished_says_to_start_again(tmp_path, judge_server):
    code, _ = judgebot(tmp_path, "runs")  # creates the history
    assert code == 0
    with sqlite3.connect(tmp_path / "h.db") as db:  # what a process killed while loading leaves behind
        db.execute("INSERT INTO run (created_at, status, rubric_name, rubric_version, rubric_hash, judge_model, "
                   "source, fresh, total_rows) VALUES ('2026-11-20 10:00:00', 'loading', 'eth', '1.0', 'h', 'm', "
                   "'cli', 0, 0)")
    code, out = judgebot(tmp_path, "resume", "1", server=judge_server)
    assert code == 2
    assert ("run 1 cannot be judged (its process stopped while its rows were loading); start a new run from the "
            "file") in flat(out)
    assert judge_server.bodies() == []


@pytest.mark.slow
def test_a_run_killed_while_its_rows_load_is_failed_when_the_history_is_next_opened(tmp_path, judge_server):
    judge_server.responder = eth_responder
    padding = "lorem ipsum dolor sit amet " * 8
    write_rows(tmp_path / "big.csv", ["question", "reference", "answer"],
               [[f"question {i} {padding}", f"reference {i} {padding}", f"answer {i} {padding}"] for i in range(40_000)])
    loading = forkserver.start(["judge", "big.csv", "--rubric", "eth"], cwd=tmp_path,
                               env=base_env(tmp_path, judge_server), out=tmp_path / "out.log")
    try:
        deadline, loaded = time.monotonic() + 60, 0
        while loaded == 0:  # some rows are in, not all: the run is half-loaded
            assert loading.poll() is None, (tmp_path / "out.log").read_text()
            assert time.monotonic() < deadline, "the rows never started loading"
            time.sleep(0.02)
            if not (tmp_path / "h.db").exists():
                continue
            try:
                found = history(tmp_path, "SELECT status, (SELECT count(*) FROM judgment) FROM run")
            except sqlite3.Error:  # the history is being created
                continue
            if found:
                [(status, loaded)] = found
                assert status == "loading", (status, loaded)
        loading.kill()
        loading.wait(10)
    finally:
        if loading.poll() is None:
            loading.kill()
            loading.wait(10)
    assert history(tmp_path, "SELECT status FROM run") == [("loading",)]  # killed: nothing could mark it

    code, out = judgebot(tmp_path, "runs")

    assert code == 0, out
    assert "failed (its process stopped while its rows were loading)" in flat(out)
    assert history(tmp_path, "SELECT status, owner FROM run") == [("failed", None)]
    assert history(tmp_path, "SELECT count(*) FROM judgment") == [(0,)]  # the half-loaded rows are not kept
    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 2 and "no unfinished run to resume" in flat(out), out
    assert judge_server.bodies() == []


def rewrite_history(tmp_path: Path, statement: str) -> None:
    """Change judgments behind judgebot's back, then count them again as an upgrade counts an existing history."""
    engine = make_engine(f"sqlite:///{tmp_path / 'h.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql(statement)
        conn.execute(JudgmentTally.__table__.delete())
        add_judgments(conn, Judgment.__table__, JudgmentTally.__table__, true(), feedback=Feedback.__table__)
    engine.dispose()


@pytest.mark.slow
def test_history_and_stats_of_the_terminal_and_of_a_slack_channel(tmp_path, judge_server):
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    assert judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)[0] == 0
    # one row as if judged in a Slack channel
    rewrite_history(tmp_path, "UPDATE judgment SET channel_id = 'C0SLACK' WHERE id = (SELECT MIN(id) FROM judgment)")

    code, out = judgebot(tmp_path, "stats")
    assert code == 0, out
    text = flat(out)
    assert "the terminal, last 30 days" in text
    assert "campus-bot-v2 eth 3 0 100.0 100% Correct 3 0 -" in text  # its first row went to the channel
    assert "campus-bot-v1 eth 4 0 12.5 0% Generic 2, Hallucination 1, Refusal 1 0 -" in text

    code, out = judgebot(tmp_path, "stats", "--channel", "C0SLACK", "--days", "0", "--model", "CAMPUS-BOT-V2")
    text = flat(out)
    assert code == 0 and "campus-bot-v2 eth 1 0 100.0 100% Correct 1 0 -" in text and "campus-bot-v1" not in text, out
    code, out = judgebot(tmp_path, "history", "--channel", "C0SLACK")
    assert code == 0 and flat(out).count(" eth campus-bot-") == 1, out
    code, out = judgebot(tmp_path, "history", "-n", "3")
    assert code == 0 and flat(out).count(" eth campus-bot-") == 3, out
    assert judgebot(tmp_path, "history", "-n", "0")[0] == 2


@pytest.mark.parametrize("columns", ["80", "60"])
def test_narrow_terminals_never_cut_the_model_under_test(tmp_path, judge_server, columns):
    judge_server.responder = eth_responder
    models = ["campus-bot-v2-2026-11-preview", "campus-bot-v1-2025-baseline"]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"], [
        ["How do I register for my exams this semester?", "In myStudies.", "Use myStudies.", models[0]],
        ["How do I print on campus?", "Web Print.", "Ask someone.", models[1]]])
    narrow = {"COLUMNS": columns}
    code, judged = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server, **narrow)
    assert code == 0, judged
    outputs = {"judge": judged}
    for command in (["stats"], ["history"], ["runs"]):
        code, outputs[command[0]] = judgebot(tmp_path, *command, **narrow)
        assert code == 0, outputs[command[0]]

    for command, out in outputs.items():
        assert "…" not in out, (command, out)
        assert max(len(line) for line in out.splitlines()) <= int(columns), (command, out)
        if command != "runs":  # runs name the judge, not the model under test
            for model in models:
                assert re.search(rf"│ {model} +│", out), (command, model, out)
    assert re.search(r"│ campus-bot-v2-2026-11-preview +│ eth +│", outputs["stats"])  # the rubric is kept beside it
    assert "100.0" in outputs["stats"]  # and the mean headline


def test_stats_count_verdicts_reused_from_the_cache_apart_from_new_judgments(tmp_path, judge_server):
    judge_server.responder = eth_responder
    rows = [[f"How do I register for exam {i}?", "In myStudies.", f"Use myStudies, step {i}."] for i in range(4)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)
    for _ in range(3):  # the same file judged three times: billed once
        assert judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", "bot-a",
                        server=judge_server)[0] == 0
    assert len(judge_server.bodies()) == 4

    code, out = judgebot(tmp_path, "stats")

    assert code == 0, out
    assert "model under test rubric judged reused mean headline" in flat(out)
    assert "bot-a eth 4 8 100.0 100% Correct 12 0 -" in flat(out), out


@pytest.mark.slow
def test_digest_of_a_channel_in_the_terminal_and_posted_once(tmp_path, judge_server, slack_server):
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    assert judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)[0] == 0
    rewrite_history(tmp_path, "UPDATE judgment SET channel_id = 'C0GENERAL', "  # as if judged on Wednesday of W46
                              "judged_at = '2026-11-11 12:00:00.000000'")

    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46")
    text = flat(out)
    assert code == 0, out
    assert "Digest of C0GENERAL, 9–15 Nov 2026 (2026-W46, UTC)" in text
    assert "campus-bot-v2 eth 4 100.0 new 100% new Correct 100% 0% (0)" in text, out
    assert "campus-bot-v1 eth 4 12.5 new 0% new" in text, out
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W45")
    assert code == 0 and "no judgments over these 7 days" in out
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-46")
    assert code == 2 and "write it like 2026-W47" in out
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--post")
    assert code == 2 and "SLACK_BOT_TOKEN is not set" in out and "Digest of" not in out

    slack = {"SLACK_BOT_TOKEN": slack_server.bot_token, "SLACK_API_URL": slack_server.api_url}
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46", "--post", **slack)
    assert code == 0 and "Posted the digest of C0GENERAL for 2026-W46" in out, out
    posted = slack_server.calls_to("chat.postMessage")
    assert len(posted) == 1 and "Weekly digest · 9–15 Nov 2026 (2026-W46)" in posted[0].params["text"]
    assert len(slack_server.uploads("C0GENERAL")) == 1  # the trend chart, in the digest's thread
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46", "--post", **slack)
    assert code == 0 and "a weekly digest was posted in 2026-W47 already" in out
    assert len(slack_server.calls_to("chat.postMessage")) == 1
    code, out = judgebot(tmp_path, "digest", "--channel", "C0NOBOT", "--week", "2026-W46", "--post", **slack)
    assert code == 2 and "/invite @judgebot" in out
    this_week = "{}-W{:02d}".format(*datetime.now(UTC).isocalendar())
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", this_week, "--post", **slack)
    assert code == 2 and "is not over yet" in out and len(slack_server.calls_to("chat.postMessage")) == 2


def test_a_history_folder_that_cannot_be_made_is_named_and_exits_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a regular file where a folder should be\n", encoding="utf-8")
    db = blocker / "sub" / "h.db"
    code, out = judgebot(tmp_path, "runs", JUDGEBOT_DB=str(db))
    assert code == 2, out
    assert f"cannot open the history database {db}: its folder {db.parent} cannot be made" in flat(out), out
    assert "unexpected error" not in out
    assert blocker.read_text(encoding="utf-8") == "a regular file where a folder should be\n"


def test_an_empty_file_at_the_history_path_becomes_a_history_with_a_warning_on_stderr(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    code, stdout, stderr = forkserver.run(["runs"], cwd=tmp_path, env=base_env(tmp_path, JUDGEBOT_DB=str(empty)))
    assert code == 0, stdout + stderr
    assert f"{empty} was an empty file; it is now a new judgebot history" in stderr, stderr
    with sqlite3.connect(empty) as made:
        assert ("schema_version",) in made.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    made.close()
    code, stdout, stderr = forkserver.run(["runs"], cwd=tmp_path, env=base_env(tmp_path, JUDGEBOT_DB=str(empty)))
    assert code == 0 and "was an empty file" not in stderr, stdout + stderr  # said once: it is a history now


def _history_damaged_in_the_middle(path: Path) -> None:
    """A history of 3,000 rows with one page in the middle of its rows overwritten: its header and schema are sound."""
    store = Store.open(f"sqlite:///{path}")
    fields = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 32, "judge_model": JUDGE_MODEL}
    run = store.create_run(**fields)
    padding = "lorem ipsum dolor sit amet " * 20
    store.add_rows({**fields, "run_id": run.id, "row_number": n, "status": "pending", "question": f"q{n} {padding}",
                    "reference": "r", "answer": "a", "cells": {"n": n}} for n in range(1, 3_001))
    store.update_run(run.id, status="pending", total_rows=3_000)
    store.engine.dispose()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with path.open("r+b") as file:
        pages = file.seek(0, os.SEEK_END) // page_size
        file.seek(page_size * (pages // 2))
        file.write(bytes(range(256)) * (page_size // 256))


def test_serve_refuses_a_history_that_fails_its_quick_check(tmp_path, slack_server, judge_server):
    damaged = tmp_path / "damaged.db"
    _history_damaged_in_the_middle(damaged)
    code, out = judgebot(tmp_path, "runs", JUDGEBOT_DB=str(damaged))
    assert code == 0, out  # the header and schema checks of every command do not see the damage

    env = base_env(tmp_path, judge_server, JUDGEBOT_DB=str(damaged), SLACK_BOT_TOKEN=slack_server.bot_token,
                   SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack_server.api_url, PORT="0",
                   SLACK_APP_TOKEN=None)
    code, stdout, stderr = forkserver.run(["serve"], cwd=tmp_path, env=env, timeout=60)
    said = flat(stdout + stderr)
    assert code == 2, said
    assert f"the history {damaged} is damaged (" in said and f"sqlite3 {damaged} .recover" in said, said
    assert "Traceback" not in said and "unexpected error" not in said


def test_texts_from_a_csv_never_reach_the_terminal_as_escape_sequences(tmp_path, judge_server):
    judge_server.responder = eth_responder
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31mevil-bot"
    name = "in\x1b[2J.csv"
    write_rows(tmp_path / name, ["question", "reference", "answer", "model"], [
        ["How do I register?\x1b[31m", "In myStudies.", "Use myStudies.", evil],
        ["How do I print?", "Web Print.", "Print it somehow.", "plain-bot"],
    ])
    code, out = judgebot(tmp_path, "judge", name, "--rubric", "eth", server=judge_server)
    assert code == 0, out
    outputs = {"judge": out}
    for command in (["stats"], ["history"], ["runs"]):
        code, outputs[command[0]] = judgebot(tmp_path, *command)
        assert code == 0, outputs[command[0]]
    for command, text in outputs.items():
        assert not any(char in text for char in "\x1b\x07\x9b"), (command, text)
    assert "]0;pwned[2J31mevil-bot" in flat(outputs["stats"]) and "]0;pwned[2J31mevil-bot" in flat(outputs["history"])
    assert "in[2J.csv" in flat(outputs["runs"]) and "How do I register?[31m" in flat(outputs["history"])
