"""A pairwise rubric in Slack: it judges pairs of answers, never one triple typed after /judge."""

from __future__ import annotations

import asyncio

from tests.support.slack_files import blocks_text, share, wait_until


async def test_judge_with_a_pairwise_rubric_asks_for_a_file_of_pairs(slack, slack_server, judge_server):
    await slack.command("pairwise How do I register? || In myStudies. || Use myStudies.")
    told = (await slack_server.await_for("response_url"))[0]
    text = told.params["text"]
    assert "*pairwise* compares two answers to each question" in text and "answer_a and answer_b" in text
    assert "Use myStudies." in text  # what was typed is not lost
    await asyncio.sleep(0.2)
    assert judge_server.bodies() == [] and slack_server.calls_to("chat.postMessage") == []


async def test_a_file_shared_for_the_pairwise_rubric_is_refused_with_the_terminal_command(slack, slack_server,
                                                                                       judge_server):
    data = b"question,reference,answer_a,answer_b\nq,r,one,two\n"
    event = await share(slack, slack_server, data, name="pairs.csv", text="rubric: pairwise")
    reply = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="a reply"))[0]
    assert "judgebot judge FILE --rubric pairwise" in reply["text"] + blocks_text(reply)
    assert judge_server.bodies() == []
