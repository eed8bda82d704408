"""Running `judgebot` commands in processes of their own, and reading the results files and history they leave."""

from __future__ import annotations

import codecs
import csv
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from tests.support import forkserver
from tests.support.openai_server import Reply
from tests.support.replies import VERDICTS, eth_reply, triple_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "answers.csv"
JUDGE_MODEL = "judge-cli"

csv.field_size_limit(2**31 - 1)


def tag_for(answer: str) -> str:
    text = answer.lower()
    if "don't know" in text or "don't have access" in text:
        return "Refusal"
    if "portal at" in text:
        return "Hallucination"
    if any(word in text for word in ("mystudies", "webprint", "asvz", "staffnet")):
        return "Correct"
    return "Generic"


def eth_responder(body: dict) -> Reply:
    return eth_reply(tag_for(triple_of(body)[2]))


class Billing:
    """A responder that counts the replies that cost something, per answer; `quota_after` fails the rest."""

    def __init__(self, quota_after: int | None = None) -> None:
        self.quota_after = quota_after
        self.billed: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        answer = triple_of(body)[2]
        with self.lock:
            if self.quota_after is not None and sum(self.billed.values()) >= self.quota_after:
                return Reply.quota()
            self.billed[answer] += 1
        return eth_reply(tag_for(answer))


def base_env(tmp_path: Path, server=None, **extra: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JUDGE", "DATABASE_URL", "CONCURRENCY", "RUBRICS_DIR"))}
    env.update(JUDGEBOT_DB=str(tmp_path / "h.db"), JUDGE_MODEL=JUDGE_MODEL, JUDGE_MAX_RETRIES="1",
               COLUMNS="250", PYTHONIOENCODING="utf-8")
    if server is not None:
        env["OPENAI_BASE_URL"] = server.base_url
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def judgebot(tmp_path: Path, *args: str, server=None, timeout: float = 60, input: str | None = None,
             **extra: str | None):
    """Run `python -m bot ARGS` in a process of its own (see tests/support/forkserver.py), reading `input` on its
    standard input (else nothing); (exit code, stdout + stderr)."""
    code, stdout, stderr = forkserver.run([str(arg) for arg in args], cwd=tmp_path,
                                          env=base_env(tmp_path, server, **extra), timeout=timeout, input=input)
    out = stdout + stderr
    assert "Traceback" not in out, out
    return code, out


def judgebot_json(tmp_path: Path, *args: str, server=None, timeout: float = 60, documented: tuple[int, ...] = (0,),
                  **extra: str | None):
    """Run `judgebot ARGS --json` in a process of its own; (exit code, the one JSON document its standard output
    holds, or None when it failed, and its standard error). Anything else on standard output fails the test. The exit
    codes that come with a document are `documented` (a check below its gate exits 1 with one)."""
    code, stdout, stderr = forkserver.run([*(str(arg) for arg in args), "--json"], cwd=tmp_path,
                                          env=base_env(tmp_path, server, **extra), timeout=timeout)
    assert "Traceback" not in stdout + stderr, stdout + stderr
    if code not in documented:
        assert stdout == "", stdout  # a refusal is a sentence on stderr, never half a document
        return code, None, stderr
    assert stdout.endswith("}\n"), stdout
    return code, json.loads(stdout), stderr  # one document, and nothing else, or it does not parse


def judgebot_many(tmp_path: Path, commands: list[list[str]], server=None, **extra: str | None):
    """Several independent commands at once (they only read); [(exit code, output)] in order."""
    env = base_env(tmp_path, server, **extra)
    procs = [subprocess.Popen([sys.executable, "-m", "bot", *map(str, args)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for args in commands]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        text = out.decode("utf-8")
        assert "Traceback" not in text, text
        results.append((proc.returncode, text))
    return results


def flat(text: str) -> str:
    """Output with rich's line wrapping and table borders undone."""
    return " ".join(re.sub(r"[│┃]", " ", text).split())


def read_results(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    raw = path.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)  # so Excel shows non-Latin text
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def history(tmp_path: Path, query: str, *params) -> list[tuple]:
    db = sqlite3.connect(tmp_path / "h.db", timeout=10)
    try:
        return db.execute(query, params).fetchall()
    finally:
        db.close()


def assert_scored(row: dict[str, str], tag: str) -> None:
    correctness, completeness = VERDICTS[tag]
    assert row["status"] == "scored" and row["error"] == "", row
    assert (row["correctness"], row["completeness"], row["result_tag"]) == (str(correctness), str(completeness), tag)
    assert row["reasoning"] == f"graded as {tag}"
    assert float(row["headline"]) == (correctness + completeness) / 4 * 100
    assert row["passed"] == ("true" if tag == "Correct" else "false")
    assert row["label"] == f"{tag} · correctness {correctness}/2 · completeness {completeness}/2"
    assert (row["judge_model"], row["rubric_version"], row["cached"]) == (JUDGE_MODEL, "1.0", "false")


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    return path
