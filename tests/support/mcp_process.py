"""`judgebot mcp` in a process of its own (forked from the tests' fork server): over HTTP, with the clients that call
it (an agent with a bearer token, and Slackbot, which signs each request with the app's signing secret), and over
its standard input and output, started by the `mcp` SDK's stdio client as an agent starts it."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from slack_sdk.signature import SignatureVerifier

from tests.support import forkserver
from tests.support.cli import base_env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def mcp_server(tmp_path: Path, judge_server, *, secrets: tuple[str, ...] = (), args: tuple[str, ...] = (),
               **env: str | None) -> Iterator[str]:
    """`judgebot mcp --http ARGS` with `env`, until the block ends; its URL (on 127.0.0.1). Its output must hold no
    traceback and none of `secrets`."""
    port = free_port()
    env = {"JUDGEBOT_LOG_LEVEL": "DEBUG", **env}  # everything it logs is checked for secrets
    log = tmp_path / f"mcp-{port}.log"  # a file, not a pipe: a full pipe would stop a server that logs a lot
    process = forkserver.start(["mcp", "--http", "--port", str(port), *args], cwd=tmp_path,
                               env=base_env(tmp_path, judge_server, **env), out=log)
    deadline = time.monotonic() + 30
    try:
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, log.read_text() if log.exists() else "the MCP server ended"
            assert time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    said = log.read_text(errors="replace")
    assert "Traceback" not in said, said
    for secret in secrets:
        assert secret not in said, said


@contextmanager
def stdio_servers(tmp_path: Path, judge_server) -> Iterator[Callable[..., StdioServerParameters]]:
    """Make the parameters the SDK's stdio client starts `judgebot mcp` with, its environment `base_env` and the
    extra variables given; each server must end when its client closes, with no traceback in what it logged.

    The SDK starts the command and talks over its standard input and output. The command here is a shell joining
    those to two FIFOs, the standard input and output of `judgebot mcp` forked from the fork server: a new
    interpreter importing judgebot and the SDK would cost two seconds of CPU a test.
    """
    started: list[tuple[forkserver.Forked, Path]] = []

    def parameters(**env: str) -> StdioServerParameters:
        folder = Path(tempfile.mkdtemp(prefix="mcp-stdio-", dir=tmp_path))
        to_server, from_server, log = folder / "stdin", folder / "stdout", folder / "stderr"
        os.mkfifo(to_server)
        os.mkfifo(from_server)
        process = forkserver.start(["mcp"], cwd=tmp_path, env=base_env(tmp_path, judge_server, **env),
                                   out=from_server, err=log, stdin=to_server)
        started.append((process, log))
        # (the shell's input goes to the command in the foreground: one in the background reads /dev/null)
        joined = f"cat < {shlex.quote(str(from_server))} & exec cat > {shlex.quote(str(to_server))}"
        return StdioServerParameters(command="sh", args=["-c", joined], cwd=str(tmp_path))

    try:
        yield parameters
    finally:
        ended = []
        for process, log in started:
            try:
                ended.append((process.wait(timeout=20), log))  # its input closed with the client's: it ends by itself
            except subprocess.TimeoutExpired:
                ended.append((None, log))
            finally:
                process.kill()  # nothing left behind, whatever happened to the others
    for code, log in ended:
        said = log.read_text(errors="replace")
        assert code == 0 and "Traceback" not in said, f"judgebot mcp ended with {code}: {said}"


def with_token(url: str, token: str | None):
    """The SDK's transport to `url`, presenting `token` as a bearer token (None: none)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=30))


class SlackSigns(httpx2.Auth):
    """What Slackbot adds to each request to an app's MCP server: Slack's signature over the raw body (`age`
    seconds old)."""

    requires_request_body = True

    def __init__(self, secret: str, *, age: int = 0) -> None:
        self.verifier, self.age = SignatureVerifier(secret), age

    def auth_flow(self, request: httpx2.Request):
        stamp = str(int(time.time()) - self.age)
        request.headers["X-Slack-Request-Timestamp"] = stamp
        request.headers["X-Slack-Signature"] = self.verifier.generate_signature(timestamp=stamp, body=request.content)
        yield request


def as_slackbot(url: str, secret: str, *, age: int = 0):
    """The SDK's transport to `url`, every request signed as Slackbot's are."""
    return streamable_http_client(url, http_client=httpx2.AsyncClient(auth=SlackSigns(secret, age=age), timeout=30))
