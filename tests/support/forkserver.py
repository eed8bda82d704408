"""`judgebot` commands in processes of their own, forked from an interpreter that imported judgebot once.

A CLI test runs each command in a separate process: its own pid, environment, working directory, output and
exit code, killed with a real signal. Starting an interpreter and importing the judge's client costs about two
seconds of CPU per command, most of a CLI test's time; this fork server pays it once per test worker. It is a
process of its own, single-threaded, that imports judgebot and then forks one child per command; the child takes
the command's directory and environment, points its output at a file, and runs `bot.__main__.main(argv)` as
`python -m bot` would. Nothing is shared but the imported modules (judgebot does no work at import time).

Run as `python -m tests.support.forkserver` it is the server; imported, `run` and `start` talk to it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

PRELOAD = ("bot.cli.main", "bot.cli.judging", "bot.cli.history", "bot.cli.calibration", "bot.cli.check", "bot.cli.labels",
           "bot.cli.rubrics", "bot.cli.views.progress_bar", "bot.runs", "bot.llm.client", "bot.judge.judgment", "bot.store",
           "bot.digest", "bot.csvfiles.reading", "bot.rubric", "bot.slack.server", "bot.slack.flows.digest_post",
           "bot.mcp.server", "bot.cli.json_output.reference", "bot.store.tables.background", "bot.view",
           "sqlalchemy.dialects.sqlite", "sqlalchemy.dialects.postgresql", "openai.resources.responses", "rich.progress",
           "rich.table")
# What the judge client's transport imports when the first client is made and the PostgreSQL driver, when installed
PRELOAD_IF_PRESENT = ("httpcore2", "psycopg")


# -- the server -----------------------------------------------------------------------------------------------


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the command, run it, and exit with its code. Never returns."""
    code = 1
    try:
        import random
        import signal

        random.seed()  # a child of its own, not a copy of the server's random state
        # Ctrl-C as a new process meets it: Python's own handler, nothing blocked (whatever the server inherited from
        # the test worker that started it)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # as a new process would, it finds its temporary directory in this environment
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        out = os.open(request["out"] or os.devnull, flags, 0o644)
        os.dup2(out, 1)
        os.dup2(os.open(request["err"], flags, 0o644) if request["err"] else out, 2)
        os.dup2(os.open(request.get("in") or os.devnull, os.O_RDONLY), 0)
        from bot.cli.main import main

        code = main(request["argv"])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    """Import judgebot, then fork a child per request line on stdin; report pids and exit codes on stdout."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    for name in PRELOAD_IF_PRESENT:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    children: set[int] = set()

    def say(message: dict[str, Any]) -> None:
        os.write(1, (json.dumps(message) + "\n").encode())  # unbuffered: nothing is left to a child's buffers

    requests = os.fdopen(0, "rb", buffering=0)
    pending = b""
    while True:
        readable, _, _ = select.select([requests], [], [], 0.02)
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                say({"exited": pid, "code": os.waitstatus_to_exitcode(status)})
        if not readable:
            continue
        chunk = requests.read(65536)
        if not chunk:
            return  # the test worker is gone
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(request)
            children.add(pid)
            say({"started": pid, "id": request["id"]})


# -- the client -----------------------------------------------------------------------------------------------


class Forked:
    """A command running in a forked process: the parts of Popen the tests use."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exited = threading.Event()

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the process to end; subprocess.TimeoutExpired if it does not within `timeout`."""
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        """Send `signum` while it runs."""
        if self.returncode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        """SIGKILL."""
        import signal

        self.send_signal(signal.SIGKILL)


class _Server:
    """The fork server of this test worker, started on first use."""

    def __init__(self) -> None:
        root = Path(__file__).resolve().parents[2]
        self.process = subprocess.Popen([sys.executable, "-m", "tests.support.forkserver"], cwd=root, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        self.lock = threading.Lock()
        self.started: dict[int, tuple[threading.Event, list[int]]] = {}
        self.running: dict[int, Forked] = {}
        self.exits: dict[int, int] = {}
        self.next_id = 0
        threading.Thread(target=self._read, name="forkserver", daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            with self.lock:
                if "started" in message:
                    event, found = self.started.pop(message["id"])
                    found.append(message["started"])
                    event.set()
                else:
                    forked = self.running.pop(message["exited"], None)
                    if forked is None:
                        self.exits[message["exited"]] = message["code"]
                    else:
                        forked.returncode = message["code"]
                        forked._exited.set()

    def start(self, argv: list[str], *, cwd: Path, env: dict[str, str], out: Path | None, err: Path | None,
              stdin: Path | None = None) -> Forked:
        with self.lock:
            self.next_id += 1
            ident, event, found = self.next_id, threading.Event(), []
            self.started[ident] = (event, found)
            request = {"id": ident, "argv": argv, "cwd": str(cwd), "env": env, "out": str(out) if out else None,
                       "err": str(err) if err else None, "in": str(stdin) if stdin else None}
            assert self.process.stdin is not None
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        assert event.wait(60), "the fork server did not start the command"
        forked = Forked(found[0])
        with self.lock:
            if forked.pid in self.exits:  # it ended before we looked
                forked.returncode = self.exits.pop(forked.pid)
                forked._exited.set()
            else:
                self.running[forked.pid] = forked
        return forked


_server: _Server | None = None
_server_lock = threading.Lock()


def warm() -> None:
    """Start this worker's fork server now, without waiting for it: it imports judgebot while other tests run."""
    global _server
    with _server_lock:
        if _server is None or _server.process.poll() is not None:
            _server = _Server()


def start(argv: list[str], *, cwd: Path, env: dict[str, str], out: Path | None = None,
          err: Path | None = None, stdin: Path | None = None) -> Forked:
    """Start `python -m bot ARGV` as a forked process; stdout goes to `out` (or nowhere), stderr to `err` (or out),
    and standard input reads `stdin` (a file or a FIFO; else nothing)."""
    warm()
    assert _server is not None
    return _server.start(argv, cwd=cwd, env=env, out=out, err=err, stdin=stdin)


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60,
        input: str | None = None) -> tuple[int, str, str]:
    """Run `python -m bot ARGV` to its end, reading `input` on standard input (else nothing); (exit code, stdout,
    stderr)."""
    with tempfile.TemporaryDirectory(prefix="judgebot-cli-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        stdin = None
        if input is not None:
            stdin = Path(folder) / "stdin"
            stdin.write_text(input, encoding="utf-8")
        forked = start(argv, cwd=cwd, env=env, out=out, err=err, stdin=stdin)
        try:
            code = forked.wait(timeout)
        except subprocess.TimeoutExpired:
            forked.kill()
            forked.wait(10)
            raise
        return code, out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8")


if __name__ == "__main__":
    serve()
