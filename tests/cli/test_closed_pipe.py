"""A reader of judgebot's output that goes away (`judgebot judge ... | head -1`) loses nothing: the run still writes
its results file and ends with the exit code it would have had, and nothing is said about the pipe.

Each command is a real process whose standard output is a pipe closed before it writes its first line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import EXAMPLE, base_env, eth_responder, history, read_results, write_rows
from tests.support.openai_server import FakeJudgeServer


def closed_pipe(tmp_path: Path, *args: str, server: FakeJudgeServer | None = None) -> tuple[int, str]:
    """`judgebot ARGS` with its standard output a pipe nobody reads (closed at once): (exit code, standard error)."""
    proc = subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=tmp_path, env=base_env(tmp_path, server),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    errors = proc.stderr.read().decode("utf-8")
    return proc.wait(timeout=60), errors


@pytest.mark.slow
def test_a_run_whose_output_nobody_reads_still_writes_its_results(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = eth_responder
    code, errors = closed_pipe(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", "--out", "x.csv", "--yes",
                               server=judge_server)
    assert code == 0 and errors == f"History: {tmp_path / 'h.db'} (new)\n", errors  # said once, on the first run
    _, rows = read_results(tmp_path / "x.csv")
    assert len(rows) == 8 and {row["status"] for row in rows} == {"scored"}
    assert history(tmp_path, "SELECT status FROM run") == [("done",)]


@pytest.mark.slow
def test_an_export_whose_reader_went_away_ends_quietly(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = eth_responder
    labeled = write_rows(tmp_path / "labeled.csv", ["question", "reference", "answer", "human_pass"],
                         [[f"Where is form {i}?", "In myStudies.", "In myStudies.", "yes"] for i in range(300)])
    code, errors = closed_pipe(tmp_path, "judge", str(labeled), "--rubric", "eth", "--yes", server=judge_server)
    assert code == 0, errors

    code, errors = closed_pipe(tmp_path, "labels", "export", "--rubric", "eth")
    assert code == 0, errors
    assert errors.strip() == "300 labels of eth." and "error" not in errors
