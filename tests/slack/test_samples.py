"""Samples and labels in Slack: `samples: N` with a shared file, the channel's default samples, unsure rows and the
judge against a file's human_ columns in the summary, through the real bolt app against the local servers."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

from tests.support.scripted_judge import Script
from tests.support.slack_files import blocks_text, finished_thread, results_rows, share, summaries
from tests.support.slack_messages import card_of

TORN = "Use myStudies, or maybe ask around."


def judge_script() -> Script:
    # the steady answer is Correct every time; the torn one Correct once then Generic twice
    return Script({"judge-test": {"Use myStudies.": ["Correct"], TORN: ["Correct", "Generic", "Generic"]}})


def two_rows(extra_header: str = "", extra: tuple[str, str] = ("", "")) -> bytes:
    return (f"question,reference,answer{extra_header}\n"
            f"Exams?,Register in myStudies.,Use myStudies.{extra[0]}\n"
            f"Exams again?,Register in myStudies.,\"{TORN}\"{extra[1]}\n").encode()


async def test_samples_named_with_a_file_mark_its_unsure_rows(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = judge_script()
    event = await share(slack, slack_server, two_rows(), text="eth samples: 3")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])

    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "*Samples* 6 · *Unsure rows* 1" in card and "rows 3;" in card
    # one judge's three samples a row, Correct x3 and Correct, Generic x2: krippendorff.alpha(reliability_data=...)
    # gives 0.375 on the tags (nominal) and on the headlines (interval), over the 2 rows
    assert "*Krippendorff's alpha* among the samples: tag 0.38 (2 rows), headline 0.38 (2 rows)" in card
    assert len(judge_server.bodies()) == 6 and {b["temperature"] for b in judge_server.bodies()} == {0.7}
    rows = results_rows(slack_server.uploads("C0GENERAL", event["ts"])[0])
    assert [(r["result_tag"], r["samples"], r["unsure"]) for r in rows] == [("Correct", "3", "false"),
                                                                           ("Generic", "3", "true")]


async def test_the_channels_default_samples_apply_to_files_shared_there(slack, slack_server, judge_server,
                                                                         bot_settings):
    judge_server.responder = judge_script()
    await slack.command("default samples 3", user="U0ADMIN")
    said = (await slack_server.await_for("response_url"))[-1].params
    assert said["response_type"] == "in_channel" and "judge each row 3 times" in json.dumps(said)
    await slack.command("default")
    assert "judged 3 times" in json.dumps((await slack_server.await_for("response_url", count=2))[-1].params)
    refused = await slack.command("default samples 12")
    assert "from 1 to 9" in refused.text()

    event = await share(slack, slack_server, two_rows(), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])

    assert len(judge_server.bodies()) == 6
    db = sqlite3.connect(bot_settings.judgebot_db)
    try:
        assert db.execute("SELECT samples, temperature FROM run").fetchall() == [(3, 0.7)]
    finally:
        db.close()


async def test_only_admins_set_the_channels_samples_and_the_reply_says_what_they_cost(bot_with, slack_server,
                                                                                      judge_server, bot_settings):
    slack = await bot_with()
    judge_server.responder = judge_script()
    await slack.command("default samples 9")  # Bob is no admin: nine times the cost of every judgment here
    refused = json.dumps((await slack_server.await_for("response_url"))[-1].params)
    assert "Only the workspace's admins" in refused and "multiplies what every judgment here costs" in refused
    assert "`samples=N`" in refused and "in_channel" not in refused
    await slack.command("default samples 9", user="U0GUEST", team="T0TEST")  # an admin of another organisation
    guest = json.dumps((await slack_server.await_for("response_url", count=2))[-1].params)
    assert "Only the workspace's admins" in guest
    await slack.command("default")
    shown = json.dumps((await slack_server.await_for("response_url", count=3))[-1].params)
    assert "judged 9 times" not in shown  # nothing changed

    await slack.command("eth Exams? || Register in myStudies. || Use myStudies.")
    await card_of(slack_server)
    assert len(judge_server.bodies()) == 1  # judged once, as before the refused commands

    await slack.command("default samples 3", user="U0ADMIN")
    said = (await slack_server.await_for("response_url", count=4))[-1].params
    text = json.dumps(said)
    assert said["response_type"] == "in_channel" and "<@U0ADMIN> set this channel to judge each row 3 times" in text
    assert "*Each judgment here now costs 3x* what one judged once does (3 requests to the judge a row)" in text

    jury = await bot_with(judges="judge-a,judge-b")  # the bot's jury: each sample asks both judges
    await jury.command("default samples 2", user="U0ADMIN")
    said = json.dumps((await slack_server.await_for("response_url", count=5))[-1].params)
    assert "*Each judgment here now costs 2x* what one judged once does (4 requests a row: 2 judges, 2 times each)" \
        in said


async def test_a_files_human_columns_are_labels_measured_in_the_summary(slack, slack_server, judge_server,
                                                                         bot_settings):
    judge_server.responder = judge_script()
    content = two_rows(",human_result_tag,human_colour", (",Correct,", ",Generic,"))
    event = await share(slack, slack_server, content, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])

    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    # one sample each: the torn answer's first reply is Correct, so the judge says Correct, Correct; the labels
    # Correct, Generic. eth passes on Correct with completeness at least 1: the Generic label fails by the person's
    # own tag, the Correct one says nothing of pass/fail (no completeness given), so pass/fail counts 0/1
    assert "The judge against the file's labels* (2 labels)" in card
    assert "*agreement on pass/fail* 0% (0/1), 95% CI 0%-79% (Wilson); few labeled cases (n = 1)" in card
    assert "1 1 0 0 2" in " ".join(card.replace("\\n", " ").split())  # the tag: both labels count
    assert "```" in card and "column human_colour names no field" in card
    db = sqlite3.connect(bot_settings.judgebot_db)
    try:
        # the labels are the uploader's
        assert db.execute("SELECT user_id, tag, passed, pass_from FROM label ORDER BY id").fetchall() == [
            ("U0USER", "Correct", None, None), ("U0USER", "Generic", 0, "rule")]
    finally:
        db.close()


async def test_an_inline_judgment_with_samples_shows_how_they_split(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = judge_script()
    answer = await slack.command(f"eth samples=3 Exams? || Register in myStudies. || {TORN}")
    assert answer.status == 200
    card = await card_of(slack_server)
    assert "⚠ split 2/1: Generic, Correct" in blocks_text(card)
    assert len(judge_server.bodies()) == 3

    refused = await slack.command("eth samples=0 a || b || c")
    assert "from 1 to 9" in refused.text() and len(judge_server.bodies()) == 3


def test_the_progress_message_counts_split_rows_only_when_rows_are_sampled() -> None:
    from bot.runs import Progress
    from bot.slack.views.file_run import progress
    from bot.store import Run

    event = Progress(run_id=7, done=40, total=100, errors=2, cached=0, judged_now=40, elapsed=10.0, unsure=3)
    sampled = Run(id=7, rubric_name="eth", rubric_version="1", rubric_hash="h", judge_model="judge-test", samples=3,
                  total_rows=100)
    shown = json.dumps(progress(sampled, "ETH audit", event, None)["blocks"])
    assert "40 / 100 rows" in shown and "2 errors" in shown and "3 unsure (samples split)" in shown
    jury = replace(sampled, samples=1, judges=[{"model": "a"}, {"model": "b"}])
    assert "3 unsure" in json.dumps(progress(jury, "ETH audit", event, None)["blocks"])
    single = replace(sampled, samples=1)
    assert "unsure" not in json.dumps(progress(single, "ETH audit", event, None)["blocks"])
