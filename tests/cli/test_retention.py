"""`judgebot retention` and `judgebot forget` on SQLite and PostgreSQL: what they say, and forget's confirmation."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import time

import pytest
from rich.console import Console

from bot.cli.context import Context
from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.cli.retention import forget
from bot.config import Settings
from bot.rubric import RubricSet
from bot.store import REMOVED, Store, get_judgment, team_rows
from tests.support.cli import judgebot
from tests.support.retention_rows import NEW, OLD, make_run


def test_retention_removes_old_texts_says_what_and_then_finds_nothing(tmp_path, db_url: str, store: Store,
                                                                       rubrics: RubricSet) -> None:
    ids = make_run(store, rubrics.get("eth"), [*OLD, *NEW], errors=1)
    code, out = judgebot(tmp_path, "retention", DATABASE_URL=db_url)
    assert code == EXIT_USAGE and "RETENTION_DAYS" in out and "--days" in out

    code, out = judgebot(tmp_path, "retention", DATABASE_URL=db_url, RETENTION_DAYS="8")
    assert code == EXIT_OK, out
    assert f"Removed the texts older than 8 days: {len(OLD) + 1} judgments, 0 samples" in out
    assert [get_judgment(store, i).answer == REMOVED for i in ids] == (  # type: ignore[union-attr]
        [True] * len(OLD) + [False] * len(NEW) + [True])

    code, out = judgebot(tmp_path, "retention", "--days", "2", DATABASE_URL=db_url, RETENTION_DAYS="8")
    assert code == EXIT_OK and "Removed the texts older than 2 days: 2 judgments" in out  # --days wins: 2, 3 days
    code, out = judgebot(tmp_path, "retention", "--days", "2", DATABASE_URL=db_url)
    assert code == EXIT_OK and "nothing removed" in out


def test_retention_deletes_the_temporary_folders_a_killed_bot_left_behind(tmp_path, db_url: str) -> None:
    temp = tmp_path / "tmp"
    old, new, other = temp / "judgebot-abc123", temp / "judgebot-def456", temp / "other-ghi789"
    for folder in (old, new, other):
        folder.mkdir(parents=True)
        (folder / "pairs-results-run1.csv").write_text("question\nWhere does Aisha book room 3?\n", encoding="utf-8")
    ten_days = time.time() - 10 * 86400
    for folder in (old, other):
        os.utime(folder, (ten_days, ten_days))

    code, out = judgebot(tmp_path, "retention", "--days", "8", DATABASE_URL=db_url, TMPDIR=str(temp))

    assert code == EXIT_OK, out
    said = " ".join(out.split())
    assert "Deleted 1 temporary folder older than 8 days that a stopped bot left behind on this machine" in said
    assert "nothing removed" not in said
    assert not old.exists() and new.exists() and other.exists()  # one of its own, older than 8 days


@pytest.mark.slow
def test_forget_asks_for_the_id_again_and_refuses_without_it(tmp_path, db_url: str, store: Store,
                                                            rubrics: RubricSet, monkeypatch) -> None:
    rubric = rubrics.get("eth")
    make_run(store, rubric, [1, 2, 30], team="T1", channel="C1")
    make_run(store, rubric, [1, 2, 30], team="T2", channel="C2")
    t1, t2 = team_rows(store, "T1"), team_rows(store, "T2")
    assert t1["judgment"] == 3 and t1["run"] == 1

    code, out = judgebot(tmp_path, "forget", "--team", "T1", DATABASE_URL=db_url)  # no terminal to confirm on
    assert code == EXIT_USAGE and "--yes" in out and "judgment: 3" in out
    assert team_rows(store, "T1") == t1

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    for typed, code, left in (("T2", EXIT_USAGE, t1), ("", EXIT_USAGE, t1), ("T1", EXIT_OK, {})):
        monkeypatch.setattr("builtins.input", lambda *_, answer=typed: answer)
        console = Console(file=io.StringIO(), width=200)
        ctx = _context(db_url, console, team="T1")
        assert asyncio.run(forget(ctx)) == code
        assert team_rows(store, "T1") == left and team_rows(store, "T2") == t2
        said = console.file.getvalue()  # type: ignore[attr-defined]
        assert ("Deleted" in said) == (code == EXIT_OK) and ("nothing deleted" in said) == (code != EXIT_OK)

    code, out = judgebot(tmp_path, "forget", "--team", "T2", "--yes", DATABASE_URL=db_url)
    assert code == EXIT_OK and "Deleted" in out and "judgment: 3" in out and "run: 1" in out
    assert team_rows(store, "T2") == {}
    code, out = judgebot(tmp_path, "forget", "--team", "T2", "--yes", DATABASE_URL=db_url)
    assert code == EXIT_OK and "nothing to remove" in out


def _context(db_url: str, console: Console, *, team: str) -> Context:
    return Context(argparse.Namespace(team=team, yes=False), Settings(database_url=db_url), console)
