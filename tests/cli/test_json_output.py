"""`--json` on the reading commands, through the real command line: one document on stdout and nothing else, whatever
else is said on stderr, times in UTC, and the actions that send or judge refused with it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.cli import EXAMPLE, eth_responder, judgebot, judgebot_json

READING = [["runs"], ["history"], ["stats"], ["digest"], ["budget"], ["review"], ["rubrics"],
           ["calibration", "--rubric", "eth"], ["compare", "--model", "campus-bot-v1", "--model", "campus-bot-v2"]]
TIMES = ("created_at", "judged_at", "queued_at", "oldest_queued_at", "since", "start", "end", "month_start")


def times(document: Any) -> list[str]:
    """Every time a document holds, at any depth."""
    if isinstance(document, list):
        return [found for item in document for found in times(item)]
    if isinstance(document, dict):
        return [found for key, value in document.items()
                for found in ([value] if key in TIMES and value is not None else times(value))]
    return []


@pytest.mark.slow
def test_every_reading_command_prints_one_document_and_says_the_rest_on_stderr(tmp_path, judge_server) -> None:
    code, found, stderr = judgebot_json(tmp_path, "runs")
    assert code == 0 and found == {"runs": []}, stderr
    assert "History: " in stderr and "(new)" in stderr  # the history this command created, said on stderr

    judge_server.responder = eth_responder
    assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", server=judge_server)[0] == 0
    now = datetime.now(UTC)
    for command in READING:
        code, found, stderr = judgebot_json(tmp_path, *command)  # stdout parses as one document, or this fails
        assert code == 0 and isinstance(found, dict), (command, stderr)
        for moment in times(found):
            assert moment.endswith("Z"), (command, moment)  # ISO 8601, in UTC
            assert abs(datetime.fromisoformat(moment) - now) < timedelta(days=40), (command, moment)

    [run] = judgebot_json(tmp_path, "runs")[1]["runs"]
    judgments = judgebot_json(tmp_path, "history", "-n", "50")[1]["judgments"]
    stats = judgebot_json(tmp_path, "stats")[1]["figures"]
    assert (run["rows"], run["status"], run["source"]) == (len(judgments), "done", "cli")  # one document agrees with
    assert sum(figures["cases"] for figures in stats) == len(judgments)  # the others: each row a case, judged once
    assert abs(datetime.fromisoformat(run["created_at"]) - now) < timedelta(minutes=10)  # UTC, not local time


def test_json_is_refused_where_a_command_sends_or_judges(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    assert judgebot(tmp_path, "judge", str(EXAMPLE), "--rubric", "eth", server=judge_server)[0] == 0
    asked = len(judge_server.bodies())
    for command, words in (
            (["review", "--channel", "C0GENERAL", "--nudge"], "--json lists the queue's cases; --nudge sends"),
            (["compare", "--model", "campus-bot-v1", "--model", "campus-bot-v2", "--judge", "pairwise"],
             "--json prints the comparison; --judge then judges its pairs"),
            (["rubrics", "check"], "--json lists the rubrics; `rubrics check` judges their goldens")):
        code, found, stderr = judgebot_json(tmp_path, *command, server=judge_server)
        assert code == 2 and found is None and words in " ".join(stderr.split()), (command, stderr)
    assert len(judge_server.bodies()) == asked  # nothing was judged
