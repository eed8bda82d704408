"""What each command loads: `--help`, `rubrics` and one triple judged import only what they use (start-up time).

Each command runs as a real process under `python -X importtime`, which names every module it imports; a module a
command does not use, loaded at start-up, is time a person waits for every time (see docs/performance.md). No
timing here: a regression shows as a module that should not be there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import base_env
from tests.support.replies import eth_reply

# Loaded by no command below: the Slack bot, the digest and its chart, rich's live display (the progress bar of a
# file's run), Alembic (a history already at the latest version), the PostgreSQL dialect (on SQLite).
NEVER = ("slack_bolt", "slack_sdk", "bot.slack", "matplotlib", "bot.digest", "rich.live", "rich.progress", "alembic",
         "sqlalchemy.dialects.postgresql")
# What a judged triple needs and the listings do not: the judge's client and the history.
JUDGING = ("openai", "aiohttp", "sqlalchemy", "sqlmodel", "bot.store", "bot.llm.client", "bot.runs")


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
def test_one_triple_loads_the_judge_and_the_history_and_nothing_of_slack_or_the_digest(tmp_path, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    assert imported(tmp_path, "judge", "--rubric", "eth", "-q", "Where?", "-r", "Here.", "-a", "Here.",
                    server=judge_server)  # creates the history: a first run may migrate
    modules = imported(tmp_path, "judge", "--rubric", "eth", "-q", "When?", "-r", "Now.", "-a", "Now.",
                       server=judge_server)
    assert loaded(modules, JUDGING) == set(JUDGING)
    assert loaded(modules, NEVER) == set()
