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

def user_text(body: dict[str, Any]) -> str:
    """The user message a request sends."""
    return next(message["content"] for message in body["messages"] if message["role"] == "user")


def system_text(body: dict[str, Any]) -> str:
    """The system prompt a request sends: it tells the designs' calls apart."""
    return next(message["content"] for message in body["messages"] if message["role"] == "system")


def scripted(one_call: dict[str, Any], claims: dict[str, Any], verdicts: dict[str, Any]) -> Any:
    """A responder giving each call of each design its scripted reply for the case its question names (a verdicts
    entry that is a list of lists gives them in turn), with tokens that tell the calls apart."""
    asked: dict[str, int] = {}

    def reply(body: dict[str, Any]) -> Reply:
        question = next(q for q in one_call if q in user_text(body))
        if "You split an assistant's answer into its claims" in system_text(body):
            found = claims[question]
            return Reply(content=found, tokens_in=100, tokens_out=30) if isinstance(found, str) else \
                Reply.json({"claims": found}, tokens_in=100, tokens_out=30)
        if "You check claims against the passages" in system_text(body):
            turn = asked[question] = asked.get(question, -1) + 1
            given = verdicts[question]
            given = given[min(turn, len(given) - 1)] if given and isinstance(given[0], list) else given
            return Reply.json({"verdicts": [{"claim": number, "verdict": verdict, "passage": passage}
                                            for number, verdict, passage in given]}, tokens_in=250, tokens_out=40)
        return Reply.json(one_call[question], tokens_in=300, tokens_out=60)

    return reply


def numbered(pairs: list[tuple[str, int | None]]) -> list[tuple[int, str, int | None]]:
    """Verdicts numbered 1, 2, 3 in order."""
    return [(number, verdict, passage) for number, (verdict, passage) in enumerate(pairs, 1)]


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
VERDICTS: dict[str, Any] = {
    "How long are deleted notes kept?": numbered([("supported", 1), ("supported", 1)]),
    "Does the Android app work offline?": numbered([("contradicted", 1), ("not_in_context", None)]),
    "How do I export my notes?": numbered([("supported", 1), ("supported", 1), ("supported", 1),
                                           ("not_in_context", None)]),
    "How many devices can a free account sync?": numbered([("supported", 1)]),  # one verdict for two claims, twice
}


def run(tmp_path: Path, server: FakeJudgeServer, *args: str) -> str:
    """The script's output, run in a process of its own against the local judge."""
    done = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path, env=base_env(tmp_path, server),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_both_designs_on_the_goldens_and_their_agreement(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = scripted(ONE_CALL, CLAIMS, VERDICTS)
    out = run(tmp_path, judge_server)
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    # 5 goldens asked, 4 failed by the content-free screen before any judge; one without a two-call verdict.
    assert ("cases           9: 4 scored by both designs, 4 failed by the content-free screen (left out), 1 without a "
            "verdict from one design or both (left out)") in out
    assert lines["one-passage-string"].endswith("Faithful 100 pass, 1 claim                 no verdict (why: below)")
    assert "one-passage-string: two calls: no verdict: verdicts call: 1 verdicts for 2 claims, twice" in out
    assert "Faithful 100 pass, 1 claim " in lines["grounded"] and "Faithful 100 pass, 2 claims" in lines["grounded"]
    assert "Unsupported 33 fail, 3 claims" in lines["adds-facts"] and "Unsupported 75 fail, 4 claims" in lines["adds-facts"]
    assert "No claims 100 pass, 0 claims" in lines["says-nothing"]
    assert lines["content-free-punctuation"].endswith("failed by the content-free screen in both, no judge asked")
    assert "pass/fail       the same in 4 of 4 cases" in out
    assert "tag             the same in 4 of 4 cases" in out
    # |100-100| + |0-0| + |33.3-75| + |100-100|, over 4 cases
    assert "supported share mean absolute difference 10.4 points over 4 cases (largest 42)" in out
    assert "claims          one call 5, two calls 8 in all; the same number in 1 of 4 cases" in out
    # The two-call adds-facts verdict (75) is above the golden's range [25, 70]; one-passage-string has none.
    assert "goldens met     one call 5 of 5, two calls 3 of 5" in out
    # One request a case for one call; for two: 2 + 2 + 2, 1 (no claims, no second call), 1 + 2 (asked once more).
    assert "one call        1500 input and 300 output tokens in 5 requests" in out
    assert "two calls       1750 input and 350 output tokens in 10 requests" in out

    second = [body for body in judge_server.requests if "You check claims against the passages" in system_text(body)]
    export = next(body for body in second if "How do I export my notes?" in user_text(body))
    assert "1. Export is in Settings > Export.\n2. Exports can be Markdown or PDF." in user_text(export)
    assert "The export holds every notebook." in user_text(export)  # the passages, with the claims
    first = [body for body in judge_server.requests if "You split an assistant's answer" in system_text(body)]
    assert len(first) == 5 and not any("The export holds every notebook." in user_text(body) for body in first)


# Rows of a file (found by their question): what each call replies, for the paths a design can take.
ROWS = {
    "Does the Android app work offline?": ("Yes, it works fully offline.", ["The Android app needs a connection."]),
    "Which formats can I export?": ("Markdown, PDF and Word.", ["Export as Markdown or PDF."]),
    "Can I share a notebook?": ("Yes, with anyone.", ["Notebooks can be shared with other accounts."]),
    "Where are backups kept?": ("In the cloud, every night.", ["Backups are kept on the device."]),
    "Is there a dark mode?": ("Yes, in Settings.", ["Dark mode is in Settings > Appearance."]),
    "How long are deleted notes kept?": ("30 days.", None),  # a context cell that cannot be read
}
ROW_ONE_CALL = {question: {"claims": [{"claim": answer, "verdict": "supported", "passage": 1}],
                           "result_tag": "Faithful"} for question, (answer, _) in ROWS.items()}
ROW_ONE_CALL["Does the Android app work offline?"] = ONE_CALL["Does the Android app work offline?"]
ROW_CLAIMS: dict[str, Any] = {
    "Does the Android app work offline?": ["The Android app works fully offline."],
    "Which formats can I export?": "not JSON at all",  # the claims call fails
    "Can I share a notebook?": ["Notebooks can be shared.", "Sharing works with anyone."],
    "Where are backups kept?": ["Backups are kept in the cloud.", "Backups run every night."],
    "Is there a dark mode?": ["There is a dark mode.", "It is in Settings."],
}
ROW_VERDICTS: dict[str, Any] = {
    "Does the Android app work offline?": numbered([("contradicted", 1)]),
    "Can I share a notebook?": [(1, "supported", 1), (1, "not_in_context", None)],  # claim 1 twice: a rule broken
    "Where are backups kept?": numbered([("contradicted", 5), ("not_in_context", None)]),  # passage 5 of 1
    # One verdict for two claims, then both: asked once more, then scored.
    "Is there a dark mode?": [numbered([("supported", 1)]), numbered([("supported", 1), ("supported", 1)])],
}


def test_rows_of_a_file_and_each_way_a_design_has_no_verdict(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = scripted(ROW_ONE_CALL, ROW_CLAIMS, ROW_VERDICTS)
    rows = tmp_path / "rag.csv"
    with rows.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "contexts", "answer"])
        for question, (answer, passages) in ROWS.items():
            writer.writerow([question, json.dumps(passages) if passages else '["Notes stay in Trash', answer])
    out = run(tmp_path, judge_server, "--rows", str(rows))
    lines = {" ".join(line.split()[:2]): line for line in out.splitlines() if line.startswith("line")}
    assert "Contradicted 0 fail, 1 claim " in lines["line 2"] and lines["line 2"].endswith("Contradicted 0 fail, 1 claim")
    assert lines["line 7:"].startswith("line 7: left out: ") and "context" in lines["line 7:"]
    assert "line 3: two calls: no verdict: claims call: " in out
    assert ("line 4: two calls: no verdict: verdicts call: the judge's reply broke the rubric after one repair: one "
            "entry a claim, numbered 1, 2, 3 without gaps or repeats") in out and "line 4: one call:" not in out
    assert "line 5: two calls: no verdict: verdicts call: " in out and "5 names no retrieved passage" in out
    assert lines["line 6"].endswith("Faithful 100 pass, 2 claims")  # asked once more, then scored
    assert "cases           5: 2 scored by both designs, 0 failed by the content-free screen (left out), 3 without" in out
    assert "pass/fail       the same in 2 of 2 cases" in out
    assert "goldens met" not in out  # rows of a file expect nothing
    # Row 6's verdicts call was asked twice; rows 3-5 each had a repair (two requests) in the call that failed.
    dark = [body for body in judge_server.requests if "Is there a dark mode?" in user_text(body)
            and "You check claims against the passages" in system_text(body)]
    assert len(dark) == 2


def test_a_judge_it_cannot_reach_is_said_in_a_sentence(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.stop()  # nothing listens there any more
    env = base_env(tmp_path, judge_server)
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("faithfulness_designs: cannot reach the judge endpoint ")
    missing = subprocess.run([sys.executable, str(SCRIPT), "--rows", str(tmp_path / "none.csv")], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and missing.stderr.startswith("faithfulness_designs: cannot read ")
