"""`judgebot history`, `stats` and `digest` on a history judged by real commands, and a history file that is missing,
empty or damaged, each command in a subprocess against the local judge server (and the local Slack server)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import true

from bot.store import Feedback, JudgmentTally, Store, add_judgments, add_rows, create_run, make_engine, update_run
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support import forkserver
from tests.support.cli import EXAMPLE, JUDGE_MODEL, base_env, eth_responder, flat, judgebot, judgebot_json, write_rows
from tests.support.slack_side import SIGNING_SECRET


def rewrite_history(tmp_path: Path, statement: str) -> None:
    """Change judgments behind judgebot's back, then count them again as an upgrade counts an existing history."""
    engine = make_engine(f"sqlite:///{tmp_path / 'h.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql(statement)
        conn.execute(JudgmentTally.__table__.delete())
        add_judgments(conn, JudgmentTable.__table__, JudgmentTally.__table__, true(), feedback=Feedback.__table__)
    engine.dispose()


@pytest.mark.slow
def test_history_and_stats_of_the_terminal_and_of_a_slack_channel(tmp_path, judge_server):
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    assert judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)[0] == 0
    # one row as if judged in a Slack channel
    rewrite_history(tmp_path, "UPDATE judgment SET channel_id = 'C0SLACK' WHERE id = (SELECT MIN(id) FROM judgment)")

    code, stats, stderr = judgebot_json(tmp_path, "stats")
    assert code == 0, stderr
    assert (stats["channel"], stats["days"], stats["model"]) == (None, 30, None)  # the terminal, last 30 days
    v1, v2 = sorted(stats["figures"], key=lambda found: found["model"])
    assert model_figures(v2) == ("campus-bot-v2", "eth", 3, 0, 100.0, 1.0, {"Correct": 3}, 0, None)  # its first
    assert model_figures(v1) == ("campus-bot-v1", "eth", 4, 0, 12.5, 0.0,  # row went to the channel
                                 {"Generic": 2, "Hallucination": 1, "Refusal": 1}, 0, None)

    code, stats, stderr = judgebot_json(tmp_path, "stats", "--channel", "C0SLACK", "--days", "0", "--model",
                                        "CAMPUS-BOT-V2")
    assert code == 0 and (stats["channel"], stats["days"], stats["since"]) == ("C0SLACK", 0, None), stderr
    assert [model_figures(f) for f in stats["figures"]] == [
        ("campus-bot-v2", "eth", 1, 0, 100.0, 1.0, {"Correct": 1}, 0, None)]
    code, found, stderr = judgebot_json(tmp_path, "history", "--channel", "C0SLACK")
    assert code == 0 and found["channel"] == "C0SLACK", stderr
    assert [(j["rubric"], j["model"], j["status"]) for j in found["judgments"]] == [("eth", "campus-bot-v2", "scored")]
    code, found, stderr = judgebot_json(tmp_path, "history", "-n", "3")
    assert code == 0 and len(found["judgments"]) == 3 and found["channel"] is None, stderr
    ids = [j["id"] for j in found["judgments"]]
    assert ids == sorted(ids, reverse=True)  # newest first
    assert judgebot(tmp_path, "history", "-n", "0")[0] == 2


def model_figures(found: dict) -> tuple:
    """A model's row of `stats --json` as the terminal's table shows it: model, rubric, cases, judgments replaced,
    mean headline, pass rate, tags, judge errors, people's agreement."""
    return (found["model"], found["rubric"], found["cases"], found["replaced_judgments"], found["mean_headline"],
            found["pass_rate"], found["tag_cases"], found["error_cases"], found["people"]["agreement"])


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


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_stats_count_each_case_once_however_often_its_file_is_judged(tmp_path, judge_server):
    judge_server.responder = eth_responder
    rows = [[f"How do I register for exam {i}?", "In myStudies.", f"Use myStudies, step {i}."] for i in range(4)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)
    for _ in range(3):  # the same file judged three times: billed once
        assert judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", "bot-a",
                        server=judge_server)[0] == 0
    assert len(judge_server.bodies()) == 4

    code, stats, stderr = judgebot_json(tmp_path, "stats")

    assert code == 0, stderr
    assert [model_figures(f) for f in stats["figures"]] == [("bot-a", "eth", 4, 8, 100.0, 1.0, {"Correct": 4}, 0, None)]
    code, out = judgebot(tmp_path, "stats")  # the terminal names what it counts
    assert code == 0 and "model under test rubric cases judged again mean headline" in flat(out), out


@pytest.mark.slow
def test_digest_of_a_channel_in_the_terminal_and_posted_once(tmp_path, judge_server, slack_server):
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    assert judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)[0] == 0
    rewrite_history(tmp_path, "UPDATE judgment SET channel_id = 'C0GENERAL', "  # as if judged on Wednesday of W46
                              "judged_at = '2026-11-11 12:00:00.000000'")

    code, found, stderr = judgebot_json(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46")
    assert code == 0, stderr
    assert (found["channel"], found["week"], found["timezone"]) == ("C0GENERAL", "2026-W46", "UTC")
    assert (found["start"], found["end"]) == ("2026-11-09T00:00:00Z", "2026-11-16T00:00:00Z")  # 9–15 Nov 2026
    v1, v2 = sorted(found["figures"], key=lambda line: line["model"])
    assert week_figures(v2) == ("campus-bot-v2", "eth", 4, 100.0, None, 1.0, None, {"Correct": 4}, 0.0, 0)  # new
    assert week_figures(v1)[:7] == ("campus-bot-v1", "eth", 4, 12.5, None, 0.0, None)
    assert found["cases"] == 8 and found["error_cases"] == 0
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46")  # as a person reads it
    text = flat(out)
    assert code == 0 and "Digest of C0GENERAL, 9–15 Nov 2026 (2026-W46, UTC)" in text, out
    assert "campus-bot-v2 eth 4 100.0 new 100% new Correct 100% 0% (0)" in text, out
    code, found, stderr = judgebot_json(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W45")
    assert code == 0 and (found["cases"], found["figures"], found["pairwise"]) == (0, [], []), stderr
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


def week_figures(line: dict) -> tuple:
    """A line of `digest --json` as the terminal's table shows it: model, rubric, cases, mean headline and its
    change, pass rate and its change (points), tags, the judge error rate and count."""
    return (line["model"], line["rubric"], line["cases"], line["mean_headline"], line["mean_headline_change"],
            line["pass_rate"], line["pass_rate_change_points"], line["tag_cases"], line["error_rate"],
            line["error_cases"])


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
    run = create_run(store, **fields)
    padding = "lorem ipsum dolor sit amet " * 20
    add_rows(store, ({**fields, "run_id": run.id, "row_number": n, "status": "pending", "question": f"q{n} {padding}",
                     "reference": "r", "answer": "a", "cells": {"n": n}} for n in range(1, 3_001)))
    update_run(store, run.id, status="pending", total_rows=3_000)
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

    for command in ("stats", "history", "runs"):  # the documents give the texts as they are, escaped
        code, stdout, stderr = forkserver.run([command, "--json"], cwd=tmp_path, env=base_env(tmp_path))
        assert code == 0 and not any(char in stdout for char in "\x1b\x07\x9b"), (command, stdout, stderr)
        assert "\\u001b]0;pwned\\u0007" in stdout and "\\u009b31m" in stdout or command == "runs", stdout
    code, found, _ = judgebot_json(tmp_path, "history")
    assert {row["model"] for row in found["judgments"]} == {evil, "plain-bot"}
    assert "How do I register?\x1b[31m" in {row["question"] for row in found["judgments"]}
    code, found, _ = judgebot_json(tmp_path, "runs")
    assert found["runs"][0]["source_name"] == name


def test_the_terminals_own_digest(tmp_path, judge_server):
    judge_server.responder = eth_responder
    assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", server=judge_server)[0] == 0
    week = "{}-W{:02d}".format(*datetime.now(UTC).isocalendar())
    code, found, stderr = judgebot_json(tmp_path, "digest", "--week", week, "--timezone", "UTC")
    assert code == 0 and found["channel"] is None and found["week"] == week, stderr
    assert {line["rubric"] for line in found["figures"]} == {"eth"} and found["cases"] == 8
    code, out = judgebot(tmp_path, "digest", "--week", week, "--timezone", "UTC")
    assert code == 0 and "Digest of the terminal" in flat(out), out
    code, out = judgebot(tmp_path, "digest", "--post")
    assert code == 2 and "--post posts a Slack channel's digest: give --channel ID" in flat(out), out


def test_a_run_whose_process_is_gone_is_listed_as_interrupted(tmp_path, judge_server):
    import socket
    import subprocess
    import sys

    judge_server.responder = eth_responder
    assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", server=judge_server)[0] == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])  # a pid that has just ended
    dead.wait()
    with sqlite3.connect(tmp_path / "h.db") as db:  # as a process killed while judging leaves its run
        db.execute("UPDATE run SET status = 'running', stop_reason = NULL, owner = ?",
                   (f"{socket.gethostname()}:{dead.pid}:x",))
    code, out = judgebot(tmp_path, "runs", "-n", "5")
    text = flat(out)
    assert code == 0 and " interrupted " in text, out
    assert "run 1 interrupted (its process is gone); `judgebot resume 1` finishes it" in text
    assert judgebot(tmp_path, "runs", "-n", "0")[0] == 2


def test_a_digest_post_that_cannot_reach_slack_says_so_rather_than_blame_the_token(tmp_path, slack_server):
    import socket

    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46", "--post",
                         SLACK_BOT_TOKEN=slack_server.bot_token, SLACK_API_URL=f"http://127.0.0.1:{port}/api/")
    text = flat(out)
    assert code == 2 and f"Cannot reach Slack at http://127.0.0.1:{port}/api/" in text, out
    assert "did not accept" not in text and "does not accept" not in text
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46", "--post",
                         SLACK_BOT_TOKEN="xoxb-revoked", SLACK_API_URL=slack_server.api_url)
    assert code == 2 and "Slack does not accept SLACK_BOT_TOKEN" in flat(out), out


def test_stats_of_a_model_never_judged_says_so(tmp_path, judge_server):
    judge_server.responder = eth_responder
    assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", server=judge_server)[0] == 0
    code, out = judgebot(tmp_path, "stats", "--model", "nosuch")
    assert code == 0 and "No judgments in the terminal, last 30 days, model nosuch" in flat(out), out
    assert "mean headline" not in out  # no empty table
    code, stats, stderr = judgebot_json(tmp_path, "stats", "--model", "nosuch")
    assert code == 0 and (stats["model"], stats["figures"]) == ("nosuch", []) and stderr == "", stderr
