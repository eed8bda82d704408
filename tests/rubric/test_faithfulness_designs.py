"""bench/faithfulness_designs.py against a local judge: both designs asked over real HTTP on the faithfulness goldens,
the two-call design's claims and verdicts put together and scored by the shipped rubric, and the agreement figures
counted as the replies make them."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.cli import base_env
from tests.support.openai_server import FakeJudgeServer, Reply

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "faithfulness_designs.py"

# Per golden (found by its question): the one-call reply, the claims of the first call, the verdicts of the second.
ONE_CALL: dict[str, dict[str, Any]] = {
    "How long are deleted notes kept?": {"claims": [
        {"claim": "Deleted notes stay in Trash for 30 days, then are removed.", "verdict": "supported", "passage": 1}],
        "result_tag": "Faithful"},
    "Does the Android app work offline?": {"claims": [
        {"claim": "The Android app works fully offline.", "verdict": "contradicted", "passage": 1}],
        "result_tag": "Contradicted"},
    "How do I export my notes?": {"claims": [
        {"claim": "Export is in Settings > Export as Markdown or PDF.", "verdict": "supported", "passage": 1},
        {"claim": "Notes can be exported to Word.", "verdict": "not_in_context", "passage": None},
        {"claim": "Exports are backed up to Dropbox every night.", "verdict": "not_in_context", "passage": None}],
        "result_tag": "Unsupported"},
    "What does the business plan cost per seat?": {"claims": [], "result_tag": "No claims"},
    "How many devices can a free account sync?": {"claims": [
        {"claim": "A free account syncs up to two devices.", "verdict": "supported", "passage": 1}],
        "result_tag": "Faithful"},
}
CLAIMS: dict[str, list[str]] = {
    "How long are deleted notes kept?": ["Deleted notes stay in the Trash for 30 days.",
                                         "After 30 days deleted notes are removed permanently."],
    "Does the Android app work offline?": ["The Android app works fully offline.", "You can open notes anywhere."],
    "How do I export my notes?": ["Export is in Settings > Export.", "Exports can be Markdown or PDF.",
                                  "Notes can be exported to Word.", "Exports are backed up to Dropbox every night."],
    "What does the business plan cost per seat?": [],
    "How many devices can a free account sync?": ["A free account syncs up to two devices.", "Paid plans sync more."],
}
VERDICTS: dict[str, list[tuple[str, int | None]]] = {
    "How long are deleted notes kept?": [("supported", 1), ("supported", 1)],
    "Does the Android app work offline?": [("contradicted", 1), ("not_in_context", None)],
    "How do I export my notes?": [("supported", 1), ("supported", 1), ("supported", 1), ("not_in_context", None)],
    "How many devices can a free account sync?": [("supported", 1)],  # one verdict for two claims
}


def user_text(body: dict[str, Any]) -> str:
    return next(message["content"] for message in body["messages"] if message["role"] == "user")


def design_reply(body: dict[str, Any]) -> Reply:
    """The reply of the call a request makes, told apart by its system prompt, for the golden its question names."""
    system = next(message["content"] for message in body["messages"] if message["role"] == "system")
    question = next(q for q in ONE_CALL if q in user_text(body))
    if "You split an assistant's answer into its claims" in system:
        return Reply.json({"claims": CLAIMS[question]})
    if "You check claims against the passages" in system:
        return Reply.json({"verdicts": [{"claim": number, "verdict": verdict, "passage": passage}
                                        for number, (verdict, passage) in enumerate(VERDICTS[question], 1)]})
    return Reply.json(ONE_CALL[question])


def test_both_designs_on_the_goldens_and_their_agreement(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = design_reply
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=tmp_path, env=base_env(tmp_path, judge_server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    # 5 goldens asked, 4 failed by the content-free screen before any judge; one without a two-call verdict.
    assert ("cases           9: 4 scored by both designs, 4 failed by the content-free screen (left out), 1 without a "
            "verdict from one design or both (left out)") in out
    assert "no verdict (why: below)" in lines["one-passage-string"]
    assert "one-passage-string: two calls: no verdict: verdicts call: 1 verdicts for 2 claims" in out
    assert "Faithful 100 pass, 1 claim " in lines["grounded"] and "Faithful 100 pass, 2 claims" in lines["grounded"]
    assert "Unsupported 33 fail, 3 claims" in lines["adds-facts"] and "Unsupported 75 fail, 4 claims" in lines["adds-facts"]
    assert "No claims 100 pass, 0 claims" in lines["says-nothing"]
    assert lines["content-free-punctuation"].endswith("failed by the content-free screen in both, no judge asked")
    assert "pass/fail       the same in 4 of 4 cases" in out
    assert "tag             the same in 4 of 4 cases" in out
    # |100-100| + |0-0| + |33.3-75| + |100-100|, over 4 cases
    assert "supported share mean absolute difference 10.4 points over 4 cases (largest 42)" in out
    assert "claims          one call 5, two calls 8 in all; the same number in 1 of 4 cases" in out
    # The two-call adds-facts verdict (75) is above the golden's range [25, 70].
    assert "goldens met     one call 4 of 4, two calls 3 of 4" in out
    # A case without claims asks no second call: 4 one-call requests, 2 + 2 + 2 + 1 two-call ones.
    assert "one call 280 in 4 requests, two calls 490 in 7" in out

    asked = [body for body in judge_server.requests if "You check claims against the passages" in
             next(m["content"] for m in body["messages"] if m["role"] == "system")]
    second = next(body for body in asked if "How do I export my notes?" in user_text(body))
    assert "1. Export is in Settings > Export.\n2. Exports can be Markdown or PDF." in user_text(second)
    assert "The export holds every notebook." in user_text(second)  # the passages, with the claims
    first = [body for body in judge_server.requests if "You split an assistant's answer" in
             next(m["content"] for m in body["messages"] if m["role"] == "system")]
    assert len(first) == 5 and not any("The export holds every notebook." in user_text(body) for body in first)
    assert json.loads(json.dumps(judge_server.requests[0]))  # the bodies are JSON as sent


def test_rows_of_a_file_each_named_by_its_line(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = design_reply
    rows = tmp_path / "rag.csv"
    with rows.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "contexts", "answer"])
        writer.writerow(["Does the Android app work offline?", json.dumps(["The Android app needs a connection."]),
                         "Yes, it works fully offline."])
        writer.writerow(["How long are deleted notes kept?", '["Notes stay in Trash', "30 days."])
    done = subprocess.run([sys.executable, str(SCRIPT), "--rows", str(rows)], cwd=tmp_path,
                          env=base_env(tmp_path, judge_server), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {line.split()[0] + " " + line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("line")}
    assert "Contradicted 0 fail, 1 claim " in lines["line 2"] and "Contradicted 0 fail, 2 claims" in lines["line 2"]
    assert lines["line 3:"].startswith("line 3: left out: ") and "context" in lines["line 3:"]
    assert "cases           1: 1 scored by both designs" in done.stdout
    assert "goldens met" not in done.stdout  # rows of a file expect nothing
