"""A file run's progress streamed into its thread as tasks, and the edited message wherever Slack refuses a stream."""

from __future__ import annotations

import json

import pytest

from tests.support.openai_server import Reply
from tests.support.slack_files import (
    eth_csv,
    finished_thread,
    grade_by_answer,
    posted,
    share,
    streams,
    summaries,
    task_details,
)


def slowly(body: dict) -> Reply:
    return Reply(content=grade_by_answer(body).content, delay=0.5)  # 80 rows, 16 at a time: about 2.5 s, whatever the machine


def head_edits(slack_server, head_ts: str) -> list[dict]:
    return [c.params for c in slack_server.calls_to("chat.update") if c.params.get("ts") == head_ts]


@pytest.mark.slow  # a file judged while its progress streams: 5 s beside other tests
async def test_the_progress_is_a_stream_of_tasks_that_ends_with_the_summary(bot_with, slack_server, judge_server):
    judge_server.responder = slowly
    slack = await bot_with()
    hostile = "<!channel> *a*.csv"
    event = await share(slack, slack_server, eth_csv(80), name=hostile, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)

    [stream] = streams(slack_server, "C0GENERAL", event["ts"])
    [start] = slack_server.calls_to("chat.startStream")
    assert start.params["thread_ts"] == event["ts"] and start.params["recipient_user_id"] == event["user"]
    assert start.params["recipient_team_id"] == "T0TEST" and start.params["task_display_mode"] == "plan"
    assert stream["stream"] == "stopped" and stream["plan"].startswith("Judging ") and " with ETH " in stream["plan"]
    tasks = stream["tasks"]
    assert tasks["rows"]["status"] == tasks["estimate"]["status"] == "complete"
    assert tasks["rows"]["details"] == "80 rows saved" and "80 rows" in tasks["estimate"]["details"]
    assert tasks["judge"]["status"] == "complete" and tasks["judge"]["details"].startswith("80 / 80 rows in ")
    assert tasks["errors"]["status"] == "complete" and tasks["errors"]["details"] == "none"
    assert tasks["summary"]["status"] == "complete" and "unsure" not in tasks  # one judge, one sample

    moving = task_details(stream, "judge")
    assert len(moving) >= 3 and any("/ 80 rows" in d and "rows/s" in d for d in moving[:-1]), moving
    appends = slack_server.calls_to("chat.appendStream")
    assert appends and all(b.at - a.at >= 0.95 for a, b in zip(appends, appends[1:]))  # a second apart at the least
    # only what changed is sent again: the rows and estimate tasks were said once
    assert not any(c["id"] in ("rows", "estimate") for call in appends for c in call.params["chunks"])

    head, summary, results = posted(slack_server, "C0GENERAL", event["ts"])
    edits = head_edits(slack_server, head["ts"])
    assert len(edits) == 2  # the stream's head, with Cancel; then the end: never the moving figures
    assert "judgebot_run_cancel" in json.dumps(edits[0]["blocks"]) and "streamed below" in json.dumps(edits[0])
    assert edits[1]["text"].startswith("Finished") and summaries(slack_server, "C0GENERAL", event["ts"]) == [summary]
    assert results.get("files")
    assert "<!channel>" not in json.dumps(edits[0]["blocks"])  # escaped in the mrkdwn of the head


@pytest.mark.slow
async def test_where_slack_refuses_a_stream_the_progress_message_is_edited(bot_with, slack_server, judge_server):
    judge_server.responder = slowly
    slack_server.refuse_streams = "channel_type_not_supported"
    slack = await bot_with(progress_edit_seconds=0.5)
    event = await share(slack, slack_server, eth_csv(160), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)

    assert streams(slack_server, "C0GENERAL", event["ts"]) == [] and len(slack_server.calls_to("chat.startStream")) == 1
    head, _, _ = posted(slack_server, "C0GENERAL", event["ts"])
    edits = head_edits(slack_server, head["ts"])
    assert any("rows/s" in json.dumps(e["blocks"]) for e in edits) and edits[-1]["text"].startswith("Finished")
    assert not slack_server.calls_to("chat.appendStream")


@pytest.mark.slow
async def test_a_stream_dropped_part_way_hands_the_progress_back_to_the_message(bot_with, slack_server, judge_server):
    judge_server.responder = slowly
    slack_server.fail("chat.appendStream", "message_not_in_streaming_state", times=50)
    slack = await bot_with(progress_edit_seconds=0.5)
    event = await share(slack, slack_server, eth_csv(160), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)

    [stream] = streams(slack_server, "C0GENERAL", event["ts"])
    assert len(slack_server.calls_to("chat.appendStream")) == 1  # refused once: never tried again
    assert stream["stream"] == "stopped" and "message above" in stream["tasks"]["judge"]["details"]
    head, _, _ = posted(slack_server, "C0GENERAL", event["ts"])
    edits = head_edits(slack_server, head["ts"])
    assert any("rows/s" in json.dumps(e["blocks"]) for e in edits) and edits[-1]["text"].startswith("Finished")
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1


async def test_off_by_setting_the_message_is_edited_as_before(bot_with, slack_server, judge_server):
    judge_server.responder = slowly
    slack = await bot_with(stream_progress=False, progress_edit_seconds=0.5)
    event = await share(slack, slack_server, eth_csv(20), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
    assert not slack_server.calls_to("chat.startStream") and len(posted(slack_server, "C0GENERAL", event["ts"])) == 3
