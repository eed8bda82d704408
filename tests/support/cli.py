"""Running `judgebot` commands in processes of their own, and reading the results files and history they leave."""

from __future__ import annotations

import codecs
import csv
import os
import re
import sqlite3
import threading
from collections import Counter
from pathlib import Path

from tests.support import forkserver
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of

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


def judgebot(tmp_path: Path, *args: str, server=None, timeout: float = 60, **extra: str | None):
    """Run `python -m bot ARGS` in a process of its own (see tests/support/forkserver.py); (exit code, stdout + stderr)."""
    code, stdout, stderr = forkserver.run([str(arg) for arg in args], cwd=tmp_path,
                                          env=base_env(tmp_path, server, **extra), timeout=timeout)
    out = stdout + stderr
    assert "Traceback" not in out, out
    return code, out


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


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    return path
