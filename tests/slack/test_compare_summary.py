"""A shared file holding two models under test on the same questions gets the paired comparison in its summary."""

from __future__ import annotations

from tests.support.scripted_judge import Script
from tests.support.slack_files import blocks_text, finished_thread, share, summaries


async def test_a_files_summary_says_whether_b_is_better_than_a(slack, slack_server, judge_server) -> None:
    plan = {"v1 a": ["Generic"], "v1 b": ["Correct"], "v2 a": ["Correct"], "v2 b": ["Correct"]}
    judge_server.responder = Script({"judge-test": plan})
    content = (b"question,reference,answer,model\nQ1?,R.,v1 a,bot-<v1>\nQ2?,R.,v1 b,bot-<v1>\n"
               b"Q1?,R.,v2 a,bot-v2\nQ2?,R.,v2 b,bot-v2\n")
    event = await share(slack, slack_server, content, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    # Q1: 25 -> 100, Q2: 100 -> 100; the model name from the file is escaped
    assert "Is bot-v2 better than bot-&lt;v1&gt;?" in card
    assert "paired difference +37.5" in card and "higher on 1, equal on 1, lower on 0 (sign test p = 1.0)" in card
