"""Bot replicas as real `judgebot serve` processes on one database: started with their own environment and log, and
stopped with SIGTERM (each must exit 0) or killed with SIGKILL."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Settings
from tests.support import forkserver
from tests.support.serve_process import serve_env


@dataclass
class Replicas:
    """The processes started, their logs, and which of them were killed."""

    settings: Settings
    db_url: str
    folder: Path
    started: list[forkserver.Forked] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    killed: set[int] = field(default_factory=set)

    def start(self, *args: str, **env: str) -> int:
        """Start `judgebot serve ARGS` with `env` added; its index."""
        folder = self.folder / f"replica{len(self.started)}"
        folder.mkdir()
        self.logs.append(folder / "log")
        self.started.append(forkserver.start(["serve", *args], cwd=folder, out=self.logs[-1], env=serve_env(
            self.settings, DATABASE_URL=self.db_url, JUDGEBOT_LOG_LEVEL="INFO", **env)))
        return len(self.started) - 1

    def kill(self, index: int) -> None:
        """kill -9 one replica, and reap it."""
        self.started[index].send_signal(signal.SIGKILL)
        self.started[index].wait(30)
        self.killed.add(index)

    def log(self, index: int) -> str:
        return self.logs[index].read_text(errors="replace")


@contextmanager
def replicas(settings: Settings, db_url: str, folder: Path) -> Iterator[Replicas]:
    """Replicas on the database `db_url`; those still running at the end are stopped with SIGTERM and must exit 0."""
    running = Replicas(settings, db_url, folder)
    try:
        yield running
    finally:
        alive = [i for i in range(len(running.started)) if i not in running.killed]
        for index in alive:
            running.started[index].send_signal(signal.SIGTERM)
        codes = [running.started[index].wait(timeout=60) for index in alive]
    assert codes == [0] * len(alive), [running.log(index)[-3000:] for index in alive]
