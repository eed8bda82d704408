"""Ctrl-C in the first seconds of `judgebot judge FILE`, sent to the real process as SIGINT: after the estimate and
before any verdict, the run is left paused as interrupted with the command that finishes it, and judging the same file
again points at that run rather than starting another."""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import forkserver
from tests.support.cli import EXAMPLE, base_env, eth_responder, flat, history, judgebot, read_results

JUDGE = ["judge", "answers.csv", "--rubric", "eth"]


def interrupt_when(tmp_path: Path, server, ready: Callable[[str], bool], what: str) -> tuple[int, str]:
    """Start `judgebot judge answers.csv`, send it SIGINT once `ready(output so far)` holds; (exit code, output)."""
    out = tmp_path / "interrupted.log"
    process = forkserver.start(JUDGE, cwd=tmp_path, env=base_env(tmp_path, server), out=out)
    try:
        deadline = time.monotonic() + 60
        while not ready(out.read_text(encoding="utf-8") if out.exists() else ""):
            assert process.poll() is None, f"it ended before {what}: {out.read_text(encoding='utf-8')}"
            assert time.monotonic() < deadline, f"{what} did not happen in 60 s"
            time.sleep(0.005)
        process.send_signal(signal.SIGINT)
        code = process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    return code, out.read_text(encoding="utf-8")


@pytest.mark.parametrize("moment", ["estimate", pytest.param("first request", marks=pytest.mark.slow)])
def test_an_interrupt_before_any_verdict_says_how_to_resume_and_the_file_again_points_at_the_run(tmp_path,
                                                                                              judge_server, moment):
    judge_server.responder = eth_responder
    judge_server.latency = 5  # no verdict comes back before the interrupt
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    if moment == "estimate":
        code, out = interrupt_when(tmp_path, judge_server, lambda text: "Estimate: 8 rows" in text, "the estimate")
    else:
        code, out = interrupt_when(tmp_path, judge_server, lambda text: bool(judge_server.requests), "a request")

    assert code == 130, out
    assert "Traceback" not in out
    assert "Run 1 interrupted: 8 rows still pending; `judgebot resume 1` finishes them." in flat(out)
    assert history(tmp_path, "SELECT status, stop_reason, owner FROM run") == [("paused", "interrupted", None)]
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("pending", 8)]

    judge_server.latency = 0
    code, again = judgebot(tmp_path, *JUDGE, server=judge_server)
    assert code == 2, again
    assert ("error: run 1 judges these same rows of answers.csv with the same rubric and judge, and is unfinished (8 of "
            "8 rows pending): `judgebot resume 1` finishes it, without judging again the rows it has; `--new-run` "
            "starts another run anyway") in flat(again)
    assert history(tmp_path, "SELECT count(*) FROM run") == [(1,)]

    code, resumed = judgebot(tmp_path, "resume", "1", server=judge_server)
    assert code == 0, resumed
    _, results = read_results(tmp_path / "answers.results.csv")
    assert len(results) == 8 and {row["status"] for row in results} == {"scored"}
    assert history(tmp_path, "SELECT status, stop_reason FROM run") == [("done", None)]


def test_other_rows_or_new_run_start_another_run_beside_an_unfinished_one(tmp_path, judge_server):
    judge_server.responder = eth_responder
    judge_server.latency = 5
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = interrupt_when(tmp_path, judge_server, lambda text: "Estimate: 8 rows" in text, "the estimate")
    assert code == 130, out

    judge_server.latency = 0
    code, out = judgebot(tmp_path, *JUDGE, "--new-run", server=judge_server)
    assert code == 0, out
    text = (tmp_path / "answers.csv").read_text(encoding="utf-8")
    (tmp_path / "answers.csv").write_text(text.replace("myStudies", "my studies", 1), encoding="utf-8")
    code, out = judgebot(tmp_path, *JUDGE, server=judge_server)  # one cell differs: not the same rows
    assert code == 0, out
    assert history(tmp_path, "SELECT id, status FROM run ORDER BY id") == [(1, "paused"), (2, "done"), (3, "done")]
