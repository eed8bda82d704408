"""`judgebot resume` and retried errors, runs busy in another process, problems found before any request, settings
and a history that fails, each command in a subprocess against the local judge server and a SQLite history file."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support import forkserver
from tests.support.cli import (
    Billing,
    assert_scored,
    base_env,
    eth_responder,
    flat,
    history,
    judgebot,
    judgebot_many,
    read_results,
    write_rows,
)
from tests.support.openai_server import Reply
from tests.support.read_only import read_only
from tests.support.replies import eth_reply, triple_of

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
        assert "Estimate" not in out and "rows/s" not in out  # refused before any estimate or progress bar
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


def test_a_postgresql_server_that_cannot_be_reached_is_said_in_a_sentence(tmp_path):
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, out = judgebot(tmp_path, "runs", DATABASE_URL=f"postgresql://judge:s3cret@127.0.0.1:{port}/history")
    text = flat(out)
    assert code == 2 and "cannot open the history database" in text and "Connection refused" in text, out
    assert "unexpected error" not in text and "s3cret" not in text


def test_a_judge_url_without_its_scheme_is_refused_with_how_to_write_it(tmp_path):
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "Q", "-r", "R", "-a", "A",
                         OPENAI_BASE_URL="localhost:11434/v1")
    text = flat(out)
    assert code == 2 and ("OPENAI_BASE_URL: 'localhost:11434/v1' is not an http(s) URL: write it like "
                          "http://localhost:11434/v1") in text, out
    assert "Value error" not in text
