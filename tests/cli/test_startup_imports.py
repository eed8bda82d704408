"""What each command loads: the reading commands (`runs`, `stats`, `history`, `review`, `rubrics`, `--help`) and one
triple judged import only what they use (start-up time); neither loads the ORM nor the table models.

Each command runs as a real process under `python -X importtime`, which names every module it imports; a module a
command does not use, loaded at start-up, is time a person waits for every time (see docs/performance.md). No
timing here: a regression shows as a module that should not be there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.store import Store, recent_runs, record_feedback
from bot.trust.review import send_to_review
from tests.support.cli import base_env
from tests.support.history_rows import Row, add
from tests.support.replies import eth_reply

# Loaded by no command below: the Slack bot, the MCP server, the digest and its chart, the numeric libraries,
# rich's live display (the progress bar of a file's run), Alembic (a history already at the latest version), the
# PostgreSQL dialect (on SQLite).
NEVER = ("slack_bolt", "slack_sdk", "bot.slack", "mcp", "bot.mcp", "matplotlib", "numpy", "scipy", "bot.digest",
         "rich.live", "rich.progress", "alembic", "sqlalchemy.dialects.postgresql")
# What a judged triple needs and the listings do not: the judge's client and the history (over Core tables).
JUDGING = ("openai", "aiohttp", "sqlalchemy", "bot.store", "bot.llm.client", "bot.runs")
# What a command that reads the history has no use for: the judge (its client, the engine of runs, the SDK and its
# transport) and the rubric files' machinery (stats, history, runs and review show rubrics by name).
NOT_READING = ("openai", "aiohttp", "httpx", "bot.llm", "bot.runs", "bot.judge.panel", "bot.judge.judgment",
               "bot.rubric", "yaml")
# What the reading commands have no use for: the ORM and the table models (opening the history, the lists and the
# stats read the Core tables of bot.store.tables.core), and the migrations of a history already at the latest version.
NOT_LISTING = ("sqlalchemy.orm", "sqlmodel", "bot.store.tables.history", "bot.store.migrations.versions")
# What one triple has no use for: what Slack's side keeps in the history (its tables and queries, installations) and
# the review queue as people work it (a triple only sends to it). The store's door loads a module when its name is
# first used, so one query module importing one of these at its top would load it for every triple.
NOT_TRIPLE = ("bot.store.tables.chat", "bot.store.tables.oauth", "bot.store.chat", "bot.trust.review_queue")


def imported(tmp_path: Path, *args: str, server=None) -> set[str]:
    """The modules `judgebot ARGS` imports, as a process of its own."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "bot", *args], cwd=tmp_path,
                          env=base_env(tmp_path, server), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def loaded(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    """Those of `packages` that `modules` holds, the package itself or any module in it."""
    return {package for package in packages
            if any(name == package or name.startswith(f"{package}.") for name in modules)}


def test_help_and_the_rubric_list_load_neither_the_judge_nor_the_history(tmp_path):
    for command in (["--help"], ["rubrics"]):
        modules = imported(tmp_path, *command)
        assert "bot.config" in modules  # the command line's own modules are in the list
        assert loaded(modules, NEVER + JUDGING) == set(), command


@pytest.mark.slow
def test_the_reading_commands_load_neither_the_judge_nor_slack_nor_the_rubric_files(tmp_path, rubrics):
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")  # a history with something in each listing
    ids = add(store, rubrics.get("eth"), [Row("m1", "scored", 90, True, "Correct"), Row("m1", "scored", 10, False, "Generic"),
                                      Row("m2", "error")], channel="C1", user="U1")
    record_feedback(store, judgment_id=ids[0], user_id="U2", agree=False)  # the stats' "people agree"
    assert send_to_review(store, recent_runs(store, 1)[0], rate=1).total
    store.engine.dispose()
    for command in (["runs"], ["stats", "--channel", "C1"], ["history", "--channel", "C1"],
                    ["review", "--channel", "C1"]):
        modules = imported(tmp_path, *command)
        assert "bot.store" in modules  # it reads the history
        assert loaded(modules, NEVER + NOT_READING) == set(), command
        assert loaded(modules, NOT_LISTING) == set(), command


@pytest.mark.slow
def test_one_triple_loads_the_judge_and_the_history_and_nothing_of_slack_or_the_digest(tmp_path, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    assert imported(tmp_path, "judge", "--rubric", "eth", "-q", "Where?", "-r", "Here.", "-a", "Here.",
                    server=judge_server)  # creates the history: a first run may migrate
    modules = imported(tmp_path, "judge", "--rubric", "eth", "-q", "When?", "-r", "Now.", "-a", "Now.",
                       server=judge_server)
    assert loaded(modules, JUDGING) == set(JUDGING)
    assert loaded(modules, NEVER + NOT_TRIPLE) == set()
    assert loaded(modules, NOT_LISTING) == set()  # its run, row and verdict written and read back over Core tables
    rows = tmp_path / "rows.csv"
    rows.write_text("question,reference,answer,model\nWhen?,Now.,Now.,m1\nWhere?,Here.,There.,m2\n", encoding="utf-8")
    modules = imported(tmp_path, "judge", str(rows), "--rubric", "eth", "--yes", server=judge_server)
    assert loaded(modules, NOT_LISTING) == set()  # a file without labels: its rows, results and review queue too
