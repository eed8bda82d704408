"""A judgebot command started in a process of its own and killed with SIGKILL once the history shows a given point,
for the tests that prove a kill -9 loses nothing and bills nothing twice."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import base_env, history


def count(tmp_path: Path, query: str) -> int:
    """One number from the history, 0 while the history or its tables do not exist yet."""
    if not (tmp_path / "h.db").exists():
        return 0
    try:
        [(found,)] = history(tmp_path, query)
    except sqlite3.Error:
        return 0
    return int(found or 0)


def kill_when(tmp_path: Path, args: list[str], ready: Callable[[], bool], *, server, what: str, timeout: float = 30,
              **env: str) -> None:
    """Run `judgebot ARGS`, wait until `ready()` holds while it still runs, then kill -9 it and reap it."""
    log = tmp_path / "killed.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=tmp_path,
                                env=base_env(tmp_path, server, **env), stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                assert proc.poll() is None, f"it ended before {what}: {log.read_text(errors='replace')}"
                assert time.monotonic() < deadline, f"{what} did not happen in {timeout:.0f} s"
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
