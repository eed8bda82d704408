"""The terminal names a judge near its announced shutdown, with the date and the command to compare a successor:
after a run's summary, in the digest and when `judgebot serve` starts; never a judge far from it or with no date."""

from __future__ import annotations

import asyncio
import shutil
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support import forkserver
from tests.support.cli import EXAMPLE, JUDGE_MODEL, eth_responder, judgebot, judgebot_json
from tests.support.serve_process import free_port, serve_env, wait_healthy

COMPARE = "judgebot judges compare --rubric NAME --to MODEL"


def shutdowns_file(tmp_path: Path, model: str, days: int) -> Path:
    """A JUDGE_SHUTDOWNS file giving `model` a shutdown `days` from today (the process's today, which tests do not
    move)."""
    when = datetime.now(UTC).date() + timedelta(days=days)
    path = tmp_path / "shutdowns.yaml"
    path.write_text(f"models:\n  {model}: {{shutdown: {when.isoformat()}, source: our provider's notice, "
                    "read: 2026-11-20}\n")
    return path


def test_a_run_near_its_judges_shutdown_says_so_after_the_summary(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    when = (datetime.now(UTC).date() + timedelta(days=20)).isoformat()
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server,
                         JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 20)))
    assert code == 0, out
    summary_at = out.index(f"judge {JUDGE_MODEL}")
    warning_at = out.index(f"The judge {JUDGE_MODEL} shuts down on {when}, in 20 days")
    assert summary_at < warning_at
    assert "our provider's notice, read 2026-11-20" in out and COMPARE in " ".join(out.split())


def test_a_run_far_from_its_judges_shutdown_or_with_no_date_says_nothing(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, far = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server,
                         JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 61)))
    assert code == 0, far
    code, none = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--fresh", server=judge_server)
    assert code == 0, none
    assert "shuts down" not in far and "shuts down" not in none
    assert "judges compare" not in far + none


def test_the_digest_names_the_judges_shutdown(tmp_path) -> None:
    code, out = judgebot(tmp_path, "digest", JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 3)))
    assert code == 0, out
    assert f"The judge {JUDGE_MODEL} shuts down on" in out and "in 3 days" in out
    code, out = judgebot(tmp_path, "digest", JUDGE_MODEL="gpt-4.1-nano")
    assert code == 0 and "shuts down" not in out
    code, found, _ = judgebot_json(tmp_path, "digest", JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 3)))
    [warning] = found["warnings"]  # in the document, beside the figures
    assert code == 0 and f"The judge {JUDGE_MODEL} shuts down on" in warning and "in 3 days" in warning


def test_serve_names_the_judges_shutdown_when_it_starts(bot_settings, slack_server, judge_server, tmp_path) -> None:
    port = free_port()
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    env = serve_env(bot_settings, PORT=str(port), JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, "judge-test", 30)))
    process = forkserver.start(["serve"], cwd=tmp_path, env=env, out=stdout, err=stderr)
    try:
        asyncio.run(wait_healthy(f"http://127.0.0.1:{port}"))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    out = " ".join(stdout.read_text().split())
    assert process.returncode == 0, stderr.read_text()
    assert "The judge judge-test shuts down on" in out and "in 30 days" in out and COMPARE in out


def test_one_triple_judged_by_a_judge_near_its_shutdown_says_so_as_a_file_does(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    triple = ["-q", "How do I register for exams?", "-r", "In myStudies.", "-a", "Use myStudies."]
    when = (datetime.now(UTC).date() + timedelta(days=39)).isoformat()
    code, out = judgebot(tmp_path, "judge", *triple, "--rubric", "eth", server=judge_server,
                         JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 39)))
    assert code == 0, out
    verdict_at = out.index("Correct")
    warning_at = out.index(f"warning: The judge {JUDGE_MODEL} shuts down on {when}, in 39 days")
    assert verdict_at < warning_at  # after the verdict, in the words of a file's summary
    assert "our provider's notice, read 2026-11-20" in out and COMPARE in " ".join(out.split())

    code, far = judgebot(tmp_path, "judge", *triple, "--rubric", "eth", "--fresh", server=judge_server,
                         JUDGE_SHUTDOWNS=str(shutdowns_file(tmp_path, JUDGE_MODEL, 61)))
    assert code == 0 and "Correct" in far and "shuts down" not in far and "judges compare" not in far
