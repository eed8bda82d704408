"""CSV files shared in Slack, end to end: the real bolt app, slack_sdk and openai clients, local Slack and judge servers."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.store import Store, get_run, iter_judgments, recent_runs, status_counts
from tests.support.replies import triple_of
from tests.support.slack_files import (
    HEADER,
    blocks_text,
    eth_csv,
    finished_thread,
    grade_by_answer,
    posted,
    reply_to,
    results_rows,
    share,
    streams,
    summaries,
    wait_until,
)
from tests.support.slack_messages import table_dicts


async def test_a_shared_csv_is_judged_with_progress_summary_results_and_chart(slack, slack_server, judge_server,
                                                                             bot_settings):
    judge_server.responder = grade_by_answer
    event = await share(slack, slack_server, eth_csv(6, generic_every=3), text="Our export, rubric: eth")
    thread = await finished_thread(slack_server, "C0GENERAL", event["ts"])

    progress, summary = thread[0], summaries(slack_server, "C0GENERAL", event["ts"])
    assert "Judged" in blocks_text(progress) and "6 rows" in blocks_text(progress)
    assert len(summary) == 1
    card = blocks_text(summary[0])
    assert "Results · answers.csv · ETH institutional knowledge audit" in card
    assert "*Scored*\\n6" in card and "*Pass rate*\\n67% (4/6)" in card
    assert "Correct 4 (67%) · Generic 2 (33%)" in card
    assert "bot-a" in card and "bot-b" in card and "row 4: 25/100" in card

    uploads = slack_server.uploads("C0GENERAL", event["ts"])
    names = [u["name"] for u in uploads]
    assert names[0].startswith("answers-results-run") and names[1].endswith(".png")
    assert uploads[1]["content"].startswith(b"\x89PNG\r\n\x1a\n")
    rows = results_rows(uploads[0])
    with Store.open(bot_settings.db_url).session() as session:
        from sqlmodel import select

        from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
        saved = {j.row_number: j for j in session.exec(select(JudgmentTable).where(JudgmentTable.channel_id == "C0GENERAL"))}
    assert [int(r["row"]) for r in rows] == list(range(2, 8))
    for row in rows:
        judged = saved[int(row["row"])]
        assert row["question"] == judged.question and row["answer"] == judged.answer
        assert row["result_tag"] == judged.tag and row["status"] == "scored"
        assert float(row["headline"]) == judged.headline and judged.thread_ts == event["ts"]
    assert len(judge_server.bodies()) == 6

    downloads = slack_server.calls_to("file_download")
    assert len(downloads) == 1 and downloads[0].headers["Authorization"] == f"Bearer {slack_server.bot_token}"


@pytest.mark.slow
async def test_progress_is_edited_at_most_every_three_seconds_with_a_cancel_button(bot_settings, slack_server,
                                                                                   judge_server):
    """Where the progress is not streamed (STREAM_PROGRESS off, or refused by Slack), its message is edited."""
    from bot.slack.server import start_bot
    from tests.support.openai_server import Reply
    from tests.support.slack_side import SIGNING_SECRET, SlackSide

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.6)
    settings = bot_settings.model_copy(update={"progress_edit_seconds": 3.0, "stream_progress": False})
    running = await start_bot(settings, host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        event = await share(slack, slack_server, eth_csv(160), text="eth")  # 10 rounds of 16
        await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
    finally:
        await running.stop()
    progress_ts = slack_server.thread("C0GENERAL", event["ts"])[0]["ts"]
    edits = [c for c in slack_server.calls_to("chat.update") if c.params.get("ts") == progress_ts]
    assert len(edits) >= 3
    gaps = [b.at - a.at for a, b in zip(edits, edits[1:])]
    assert min(gaps) >= 3.0, gaps
    moving = [e for e in edits if "Cancel" in json.dumps(e.params.get("blocks"))]
    assert moving and "rows/s" in json.dumps(moving[-1].params["blocks"])
    assert not slack_server.calls_to("chat.startStream")


# -- which rubric ---------------------------------------------------------------------------------------------

BENCHMARK = {"Factual Accuracy": 4, "Relevance": 5, "Clarity": 4, "Language Consistency": 5, "Conciseness": 3,
             "Overall": 4}


def by_rubric(body: dict):
    """An eth verdict to the eth rubric, a benchmark one to any other; the rubric shows in the system message."""
    from tests.support.openai_server import Reply

    system = next(m["content"] for m in body["messages"] if m["role"] == "system")
    return grade_by_answer(body) if "You audit answers" in system else Reply.json(BENCHMARK)


def rubric_of_run(settings, thread_ts: str) -> str:
    from sqlmodel import select

    from bot.store.tables.core import RUN

    with Store.open(settings.db_url).session() as session:
        return session.exec(select(RUN.c.rubric_name).where(RUN.c.thread_ts == thread_ts)).one()


async def test_the_rubric_comes_from_the_card_the_file_is_dropped_under(slack, slack_server, judge_server,
                                                                       bot_settings):
    from tests.support.slack_messages import INLINE, card_of

    judge_server.responder = by_rubric
    await slack.command(INLINE)  # an eth card
    card = await card_of(slack_server)
    await share(slack, slack_server, eth_csv(2), text="the whole set", thread_ts=card["ts"])
    await finished_thread(slack_server, "C0GENERAL", card["ts"])
    assert rubric_of_run(bot_settings, card["ts"]) == "eth"


async def test_the_rubric_comes_from_the_channel_default(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = by_rubric
    shown = await slack.command("default")
    assert shown.status == 200
    none_yet = (await slack_server.await_for("response_url"))[-1]
    assert "has no default rubric" in json.dumps(none_yet.params)

    await slack.command("default five")  # an alias of benchmark
    said = (await slack_server.await_for("response_url", count=2))[-1].params
    assert said["response_type"] == "in_channel" and "Benchmark answer quality" in json.dumps(said)
    event = await share(slack, slack_server, eth_csv(2), text="weekly export")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert rubric_of_run(bot_settings, event["ts"]) == "benchmark"

    other = await share(slack, slack_server, eth_csv(2), text="weekly export", channel="C0OTHER")
    question = await wait_until(lambda: slack_server.thread("C0OTHER", other["ts"]), what="the rubric question")
    assert "Which rubric" in question[0]["text"]  # another channel's default is not this one's


async def test_a_file_without_a_rubric_asks_with_buttons_and_starts_on_a_click(slack, slack_server, judge_server,
                                                                               bot_settings):
    judge_server.responder = by_rubric
    event = await share(slack, slack_server, eth_csv(3), text="")
    question = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="the question"))[0]
    buttons = {e["action_id"]: e["value"] for b in question["blocks"] if b["type"] == "actions" for e in b["elements"]}
    assert {"judgebot_file_rubric_academic", "judgebot_file_rubric_benchmark", "judgebot_file_rubric_eth"} <= set(buttons)
    assert judge_server.bodies() == []

    wrong = await slack.click("judgebot_file_rubric_eth", buttons["judgebot_file_rubric_eth"], channel="C0OTHER",
                              message_ts=question["ts"])
    assert wrong.status == 200
    refused = (await slack_server.await_for("response_url"))[-1]
    assert "cannot find" in json.dumps(refused.params)  # a click from another channel is refused

    await slack.click("judgebot_file_rubric_eth", buttons["judgebot_file_rubric_eth"], channel="C0GENERAL",
                      message_ts=question["ts"])
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert rubric_of_run(bot_settings, event["ts"]) == "eth"
    answered = slack_server.messages[("C0GENERAL", question["ts"])]
    assert "<@U0USER> chose *ETH institutional knowledge audit*" in answered["text"]
    await slack.click("judgebot_file_rubric_benchmark", buttons["judgebot_file_rubric_benchmark"],
                      channel="C0GENERAL", message_ts=question["ts"])
    late = (await slack_server.await_for("response_url", count=2))[-1]
    assert "answered already" in json.dumps(late.params)
    assert len(judge_server.bodies()) == 3


async def test_a_rubric_clicked_before_slack_has_answered_the_question_post_starts_the_run(slack, slack_server,
                                                                                           judge_server, bot_settings):
    # The question is in the thread (and clickable) the moment Slack has it, before the bot hears back.
    judge_server.responder = by_rubric
    slack_server.answer_late("chat.postMessage", 1.0)
    event = await share(slack, slack_server, eth_csv(2), text="")
    question = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="the question"))[0]
    buttons = {e["action_id"]: e["value"] for b in question["blocks"] if b["type"] == "actions" for e in b["elements"]}
    await slack.click("judgebot_file_rubric_eth", buttons["judgebot_file_rubric_eth"], channel="C0GENERAL",
                      message_ts=question["ts"])
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert rubric_of_run(bot_settings, event["ts"]) == "eth"
    assert "chose *ETH institutional knowledge audit*" in slack_server.messages[("C0GENERAL", question["ts"])]["text"]


async def test_an_unknown_rubric_in_the_message_gets_did_you_mean(slack, slack_server, judge_server):
    event = await share(slack, slack_server, eth_csv(2), text="rubric: etj")
    reply = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="a reply"))[0]
    assert "Did you mean 'eth'" in reply["text"] + blocks_text(reply) and judge_server.bodies() == []


# -- what is not judged -----------------------------------------------------------------------------------------


async def test_other_files_are_ignored_unless_the_bot_is_mentioned(slack, slack_server, judge_server):
    quiet = await share(slack, slack_server, b"\x89PNG\r\n\x1a\nxxxx", name="photo.png", text="look at this")
    asked = await share(slack, slack_server, b"%PDF-1.4", name="report.pdf", text="<@U0BOT> can you grade this?")
    reply = (await wait_until(lambda: slack_server.thread("C0GENERAL", asked["ts"]), what="a reply"))[0]
    assert "I judge CSV and TSV files" in blocks_text(reply)
    await asyncio.sleep(0.3)
    assert slack_server.thread("C0GENERAL", quiet["ts"]) == [] and slack_server.calls_to("file_download") == []


async def test_a_csv_without_the_expected_header_names_what_was_found_and_expected(slack, slack_server, judge_server):
    event = await share(slack, slack_server, b"prompt_text,gold,bot_output\nq,r,a\n", text="eth")
    reply = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="a reply"))[0]
    text = blocks_text(reply)
    assert '\\"prompt_text\\", \\"gold\\", \\"bot_output\\"' in text and "reference: reference" in text
    assert "/tmp" not in text and "answers.csv" in text and judge_server.bodies() == []


async def test_a_file_with_a_header_and_no_rows_is_refused(slack, slack_server, judge_server):
    event = await share(slack, slack_server, HEADER.encode(), text="eth")
    reply = (await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="a reply"))[0]
    assert "no data rows" in blocks_text(reply)


# -- limits and safe downloads -----------------------------------------------------------------------------------


async def test_files_over_the_size_or_row_limit_are_refused_naming_the_limit(bot_with, slack_server, judge_server):
    slack = await bot_with(csv_max_mb=0.001, csv_max_rows=5)  # 1,000 bytes
    declared = await share(slack, slack_server, eth_csv(2), text="eth", size=5_000_000)
    assert "it has 5.0 MB, more than the limit of 1 kB" in await reply_to(slack_server, declared)
    assert slack_server.calls_to("file_download") == []  # refused before any byte was fetched

    lying = await share(slack, slack_server, eth_csv(40), text="eth", size=100)  # bigger than it says
    assert "it has 2 kB, more than the limit of 1 kB" in await reply_to(slack_server, lying)

    rows = await share(slack, slack_server, eth_csv(6), text="eth")  # 6 rows, under 1,000 bytes
    assert "more than 5 rows, the limit" in await reply_to(slack_server, rows)
    assert judge_server.bodies() == []


async def test_a_sign_in_page_instead_of_the_file_is_a_permission_problem(slack, slack_server, judge_server):
    event = await share(slack, slack_server, eth_csv(2), text="eth", serve="html")
    text = await reply_to(slack_server, event)
    assert "files:read" in text and "reinstalls the app" in text and judge_server.bodies() == []


async def test_a_redirect_to_another_host_is_not_followed_and_the_token_stays_home(slack, slack_server, judge_server):
    from tests.support.recording_server import RecordingServer

    foreign = RecordingServer().start()
    try:
        redirected = await share(slack, slack_server, eth_csv(2), text="eth", serve="redirect",
                                 redirect_to=f"{foreign.base_url}/steal")
        assert "do not follow redirects" in await reply_to(slack_server, redirected)

        elsewhere = slack_server.add_file(eth_csv(2), "elsewhere.csv")
        slack_server.files[elsewhere["id"]]["url_private_download"] = f"{foreign.base_url}/elsewhere.csv"
        event = slack_server.file_share_event(elsewhere, text="eth")
        await slack.event(event)
        assert "not on Slack's file servers" in await reply_to(slack_server, event)
        assert foreign.requests == []  # neither the redirect nor the foreign address was fetched
    finally:
        foreign.stop()
    assert judge_server.bodies() == []


# -- exactly once ------------------------------------------------------------------------------------------------


async def test_one_share_delivered_many_times_starts_one_run(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = grade_by_answer
    file = slack_server.add_file(eth_csv(4), "answers.csv")
    event = slack_server.file_share_event(file, text="eth")
    payload = slack.event_payload(event)
    answers = await asyncio.gather(slack.send_event(payload), slack.send_event(payload, retry_num=1),
                                   slack.event(slack_server.file_shared_event(file)),
                                   slack.send_event(payload, retry_num=2),
                                   slack.event(event))  # the same message under another event id
    assert [a.status for a in answers] == [200] * 5
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    await asyncio.sleep(0.5)
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    assert len(slack_server.uploads("C0GENERAL", event["ts"])) == 2  # the results and the chart, once
    assert len(judge_server.bodies()) == 4 and len(slack_server.calls_to("file_download")) == 1


async def test_the_same_file_shared_again_in_the_thread_asks_and_bills_nothing_twice(slack, slack_server,
                                                                                     judge_server):
    judge_server.responder = grade_by_answer
    first = await share(slack, slack_server, eth_csv(4), text="eth")
    await finished_thread(slack_server, "C0GENERAL", first["ts"])
    again = await share(slack, slack_server, eth_csv(4), text="eth", thread_ts=first["ts"])
    question = await wait_until(lambda: [m for m in slack_server.thread("C0GENERAL", first["ts"])
                                         if "judged in this thread already" in m["text"]], what="the question")
    await slack.click("judgebot_file_again", next(e["value"] for b in question[0]["blocks"] if b["type"] == "actions"
                                                  for e in b["elements"]),
                      channel="C0GENERAL", message_ts=question[0]["ts"])
    await wait_until(lambda: len(summaries(slack_server, "C0GENERAL", first["ts"])) == 2, what="a second summary")
    assert len(judge_server.bodies()) == 4  # every verdict of the second run came from the history
    second = summaries(slack_server, "C0GENERAL", first["ts"])[1]
    assert "4 rows reused from the history (not billed)" in blocks_text(second)
    assert again["thread_ts"] == first["ts"]


async def test_identical_rows_of_a_first_share_are_said_judged_once_not_reused_from_the_history(slack, slack_server,
                                                                                                 judge_server):
    judge_server.responder = grade_by_answer
    rows = "".join(f"Question {n % 2}?,Register in myStudies.,Use myStudies.,bot-a\n" for n in range(5))
    event = await share(slack, slack_server, (HEADER + rows).encode(), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    text = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert len(judge_server.bodies()) == 2  # one request a text
    assert "5 identical rows judged once a text (2 texts)" in text and "reused from the history" not in text


async def test_dont_leaves_a_file_shared_again_alone(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    first = await share(slack, slack_server, eth_csv(2), text="eth")
    await finished_thread(slack_server, "C0GENERAL", first["ts"])
    await share(slack, slack_server, eth_csv(2), text="eth", thread_ts=first["ts"])
    question = await wait_until(lambda: [m for m in slack_server.thread("C0GENERAL", first["ts"])
                                         if "judged in this thread already" in m["text"]], what="the question")
    await slack.click("judgebot_file_skip", "0", channel="C0GENERAL", message_ts=question[0]["ts"])  # a bad value
    share_id = next(e["value"] for b in question[0]["blocks"] if b["type"] == "actions" for e in b["elements"])
    await slack.click("judgebot_file_skip", share_id, channel="C0GENERAL", message_ts=question[0]["ts"])
    await wait_until(lambda: "Not judged again" in slack_server.messages[("C0GENERAL", question[0]["ts"])]["text"])
    assert len(summaries(slack_server, "C0GENERAL", first["ts"])) == 1 and len(judge_server.bodies()) == 2


# -- cancel, pause and resume ------------------------------------------------------------------------------------


def run_buttons(message: dict) -> dict[str, str]:
    return {e["action_id"]: e["value"] for b in message.get("blocks") or [] if b["type"] == "actions"
            for e in b["elements"]}


def progress_of(slack_server, event: dict) -> dict:
    """The first message of the file's thread: the progress message (empty before it is posted)."""
    thread = slack_server.thread(event["channel"], event["ts"])
    return thread[0] if thread else {}


async def test_cancel_keeps_the_graded_rows_and_says_so(slack, slack_server, judge_server, bot_settings):
    from tests.support.openai_server import Reply

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.2)
    event = await share(slack, slack_server, eth_csv(200), text="eth")
    moving = await wait_until(lambda: "judgebot_run_cancel" in run_buttons(progress_of(slack_server, event))
                              and len(judge_server.bodies()) > 40 and progress_of(slack_server, event),
                              what="the Cancel button")
    run_id = int(run_buttons(moving)["judgebot_run_cancel"])  # read now: the message changes under us
    await slack.click("judgebot_run_cancel", str(run_id), channel="C0GENERAL", message_ts=moving["ts"])
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    told = json.dumps([c.params for c in slack_server.calls_to("response_url")])
    assert "the rows graded so far are kept" in told
    end = progress_of(slack_server, event)
    assert "Cancelled by <@U0USER>" in end["text"] + blocks_text(end) and "graded rows are kept" in blocks_text(end)
    store = Store.open(bot_settings.db_url)
    run = get_run(store, run_id)
    counts = status_counts(store, run.id)
    assert run.status == "cancelled" and 0 < counts["scored"] < 200 and counts["scored"] + counts["pending"] == 200
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"*Scored*\\n{counts['scored']}" in card and f"*Not judged*\\n{counts['pending']}" in card
    rows = results_rows(slack_server.uploads("C0GENERAL", event["ts"])[0])
    assert len(rows) == 200 and sum(r["status"] == "scored" for r in rows) == counts["scored"]


@pytest.mark.slow
async def test_a_run_out_of_quota_pauses_with_resume_and_finishes_every_row_once(slack, slack_server, judge_server,
                                                                                bot_settings):
    from tests.support.openai_server import Reply

    state = {"answered": 0, "quota": True}

    def responder(body):
        state["answered"] += 1
        if state["answered"] > 10 and state["quota"]:
            return Reply.quota()
        return grade_by_answer(body)

    judge_server.responder = responder
    event = await share(slack, slack_server, eth_csv(30), text="eth")
    paused = await wait_until(lambda: "judgebot_run_resume" in run_buttons(progress_of(slack_server, event))
                              and progress_of(slack_server, event), what="the paused message")
    assert "Paused" in paused["text"] and "quota" in blocks_text(paused).lower()
    assert summaries(slack_server, "C0GENERAL", event["ts"]) == []
    store = Store.open(bot_settings.db_url)
    run_id, paused_ts = int(run_buttons(paused)["judgebot_run_resume"]), paused["ts"]
    assert get_run(store, run_id).status == "paused" and status_counts(store, run_id)["pending"] >= 20

    state["quota"] = False
    await slack.click("judgebot_run_resume", str(run_id), channel="C0GENERAL", message_ts=paused_ts)
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert status_counts(store, run_id) == {"scored": 30}
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    assert len(posted(slack_server, "C0GENERAL", event["ts"])) == 3  # progress, summary, results: one each
    before, after = streams(slack_server, "C0GENERAL", event["ts"])  # the progress before the pause, and after
    assert before["stream"] == after["stream"] == "stopped"
    assert before["tasks"]["judge"]["status"] == "error" and "paused at" in before["tasks"]["judge"]["details"]
    assert after["tasks"]["judge"]["status"] == "complete" and after["tasks"]["summary"]["status"] == "complete"
    scored_questions = [j.question for j in iter_judgments(store, run_id)]
    assert sorted(scored_questions) == sorted(f"Question {n}?" for n in range(1, 31))
    await slack.click("judgebot_run_resume", str(run_id), channel="C0GENERAL", message_ts=paused_ts)
    late = (await slack_server.await_for("response_url"))[-1]
    assert "is not paused" in json.dumps(late.params)


# -- what people export ------------------------------------------------------------------------------------------

VARIANTS = {
    "utf16-tsv": ("answers.tsv", "question\treference\tanswer\nWo?\tIn myStudies.\tUse myStudies.\n"
                                 "Wann?\tBis Mai.\tUse myStudies.\n".encode("utf-16"), 2),
    "cp1252-semicolons": ("answers.csv", "sep=;\nQuestion;Ground Truth;Model Response\nCafé?;Près du myStudies;"
                                         "Use myStudies.\n".encode("cp1252"), 1),
    "bom-multiline": ("answers.csv", "\ufeffquery,expected,output\n\"Two\nlines?\",r,\"Use myStudies,\nreally.\"\n"
                                     .encode("utf-8"), 1),
    "tsv-arabic-model": ("answers.tsv", "Question\tReference Answer\tGenerated Answer\tModel Name\n"
                                        "كيف أسجل؟\tفي myStudies\tUse myStudies.\tbot-ar\n".encode(), 1),
    "huge-cell": ("answers.csv", ("question,reference,answer\nLong?,r,\"Use myStudies. " + "x" * 200_000 + "\"\n")
                  .encode("utf-8"), 1),
}


@pytest.mark.parametrize("variant", [pytest.param(name, marks=pytest.mark.slow) if name == "huge-cell" else name
                                     for name in VARIANTS])  # a 200,000-character cell takes seconds to read
async def test_each_csv_variant_arrives_as_a_slack_file(variant, slack, slack_server, judge_server, bot_settings):
    judge_server.responder = grade_by_answer
    name, content, rows = VARIANTS[variant]
    event = await share(slack, slack_server, content, name=name, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    results = results_rows(slack_server.uploads("C0GENERAL", event["ts"])[0])
    assert len(results) == rows and all(r["status"] == "scored" for r in results)
    sent = sorted(triple_of(body)[0] for body in judge_server.bodies())
    assert len(sent) == rows and ("Two\nlines?" in sent if variant == "bom-multiline" else True)
    assert ("Café?" in sent) if variant == "cp1252-semicolons" else True


async def test_malformed_rows_are_counted_and_listed_in_the_summary(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    content = (HEADER + "Q1?,R,Use myStudies.,bot-a\nQ2?,R\n,R,Use myStudies.,bot-a\nQ4?,R,Use myStudies.,bot-b\n")
    event = await share(slack, slack_server, content.encode(), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "*Malformed*\\n2" in card and "*Scored*\\n2" in card
    assert "row 3 (malformed): it has 2 cells but the header has 4" in card
    assert "row 4 (malformed): the question cell is empty" in card
    assert len(judge_server.bodies()) == 2


@pytest.mark.slow
async def test_runs_in_two_channels_move_at_once_and_commands_are_still_answered(slack, slack_server, judge_server):
    from tests.support.openai_server import Reply
    from tests.support.slack_messages import INLINE, card_of

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.3)
    events = [await share(slack, slack_server, eth_csv(120), text="eth", channel=channel)
              for channel in ("C0GENERAL", "C0OTHER")]
    await wait_until(lambda: all("judgebot_run_cancel" in run_buttons(progress_of(slack_server, e)) for e in events),
                     what="both runs moving")
    answer = await slack.command(INLINE, channel="G0PRIVATE")
    assert answer.status == 200 and answer.seconds < 1.0
    card = await card_of(slack_server, "G0PRIVATE", timeout=20)
    assert "graded as" in blocks_text(card)
    for event in events:
        await finished_thread(slack_server, event["channel"], event["ts"], timeout=60)
        edits = [c for c in slack_server.calls_to("chat.update") if c.params["ts"] == progress_of(slack_server,
                                                                                                   event)["ts"]]
        assert len(edits) >= 2


async def test_socket_mode_retries_of_a_share_start_one_run(bot_settings, slack_server, judge_server):
    from bot.slack.server import start_bot
    from tests.support.slack_side import SlackSide

    judge_server.responder = grade_by_answer
    settings = bot_settings.model_copy(update={"slack_app_token": bot_settings.slack_bot_token.__class__(
        slack_server.app_token), "slack_signing_secret": None})
    running = await start_bot(settings)
    try:
        await asyncio.to_thread(slack_server.connected.wait, 5)
        slack = SlackSide(slack_server)
        file = slack_server.add_file(eth_csv(3), "answers.csv")
        event = slack_server.file_share_event(file, text="eth")
        payload = slack.event_payload(event)
        for attempt, reason in ((0, ""), (1, "timeout"), (2, "timeout")):
            assert (await slack.send_event(payload, retry_num=attempt or None, retry_reason=reason)).status == 200
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
        await asyncio.sleep(0.5)
        assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1 and len(judge_server.bodies()) == 3
    finally:
        await running.stop()


@pytest.mark.slow
async def test_a_run_stopped_with_the_bot_goes_on_in_the_same_message_after_a_restart(bot_settings, slack_server,
                                                                                       judge_server):
    from bot.slack.server import start_bot
    from tests.support.openai_server import Reply
    from tests.support.slack_side import SIGNING_SECRET, SlackSide

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.1)
    running = await start_bot(bot_settings, host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        event = await share(slack, slack_server, eth_csv(150), text="eth")
        await wait_until(lambda: len(judge_server.bodies()) > 30, what="some rows judged")
    finally:
        await running.stop()
    stopped = progress_of(slack_server, event)
    assert "the bot was stopped at" in blocks_text(stopped) and "goes on from here" in blocks_text(stopped)
    before = len(judge_server.bodies())
    assert before < 150

    again = await start_bot(bot_settings, host="127.0.0.1")
    try:
        await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
    finally:
        await again.stop()
    thread = posted(slack_server, "C0GENERAL", event["ts"])
    assert thread[0]["ts"] == stopped["ts"] and len(thread) == 3  # the same progress message, one summary, results
    first, second = streams(slack_server, "C0GENERAL", event["ts"])  # the progress goes on in a new stream
    assert first["stream"] == second["stream"] == "stopped" and first["tasks"]["judge"]["status"] == "pending"
    assert "the bot was stopped at" in first["tasks"]["judge"]["details"]
    assert second["tasks"]["summary"]["status"] == "complete"
    questions = [triple_of(body)[0] for body in judge_server.bodies()]
    assert sorted(set(questions)) == sorted(f"Question {n}?" for n in range(1, 151))
    assert len(questions) - 150 <= 16  # only requests in flight at the stop were sent twice
    store = Store.open(bot_settings.db_url)
    run_id = recent_runs(store, 1)[0].id
    assert status_counts(store, run_id) == {"scored": 150}


async def test_a_file_from_another_organisation_is_looked_up_before_it_is_judged(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    file = slack_server.add_file(eth_csv(2), "connect.csv")
    event = slack_server.file_share_event({"id": file["id"], "file_access": "check_file_info"}, text="eth")
    await slack.event(event)
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert len(judge_server.bodies()) == 2 and slack_server.calls_to("files.info")


async def test_finish_here_on_a_paused_run_summarises_the_graded_rows(slack, slack_server, judge_server, bot_settings):
    from tests.support.openai_server import Reply

    state = {"answered": 0, "quota": True}

    def responder(body):
        state["answered"] += 1
        return grade_by_answer(body) if state["answered"] <= 5 or not state["quota"] else Reply.quota()

    judge_server.responder = responder
    event = await share(slack, slack_server, eth_csv(20), text="eth")
    paused = await wait_until(lambda: "judgebot_run_resume" in run_buttons(progress_of(slack_server, event))
                              and progress_of(slack_server, event), what="the paused message")
    run_id, ts = int(run_buttons(paused)["judgebot_run_cancel"]), paused["ts"]
    state["quota"] = False  # whichever click wins, the run ends with one summary
    await asyncio.gather(slack.click("judgebot_run_cancel", str(run_id), channel="C0GENERAL", message_ts=ts),
                         slack.click("judgebot_run_resume", str(run_id), channel="C0GENERAL", message_ts=ts))
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    await asyncio.sleep(0.5)
    store = Store.open(bot_settings.db_url)
    counts = status_counts(store, run_id)
    summary = summaries(slack_server, "C0GENERAL", event["ts"])
    assert len(summary) == 1 and get_run(store, run_id).status in ("cancelled", "done")
    assert f"*Scored*\\n{counts['scored']}" in blocks_text(summary[0])
    assert counts.get("scored", 0) + counts.get("pending", 0) == 20


async def test_the_same_file_shared_twice_at_once_asks_before_the_second_run(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    first = await share(slack, slack_server, eth_csv(3), text="eth")
    file = slack_server.add_file(eth_csv(3), "answers.csv")
    await slack.event(slack_server.file_share_event(file, text="eth", thread_ts=first["ts"]))
    await finished_thread(slack_server, "C0GENERAL", first["ts"])
    await wait_until(lambda: [m for m in slack_server.thread("C0GENERAL", first["ts"])
                              if "judged in this thread already" in m["text"]], what="the question")
    assert len(summaries(slack_server, "C0GENERAL", first["ts"])) == 1 and len(judge_server.bodies()) == 3


@pytest.mark.parametrize("url", [
    "https://user:secret@files.slack.com/files-pri/T1-F1/download/a.csv", "https://files.slack.com:8443/a.csv",
    "https://files.slack.com:abc/a.csv", "http://files.slack.com/a.csv", "https://files.slack.com.evil.test/a.csv",
    "https://evil.test/files.slack.com/a.csv", "http://127.0.0.1:5001/a.csv",
])
def test_download_addresses_off_slacks_file_hosts_are_refused(url):
    from bot.errors import FileProblem
    from bot.slack.files import check_url

    check_url("https://files.slack.com/files-pri/T1-F1/download/a.csv", ("http", "127.0.0.1:5000"))
    check_url("http://127.0.0.1:5000/a.csv", ("http", "127.0.0.1:5000"))
    with pytest.raises(FileProblem, match="not on Slack's file servers"):
        check_url(url, ("http", "127.0.0.1:5000"))


async def test_a_header_of_ten_thousand_characters_is_refused_within_slacks_limits(slack, slack_server, judge_server,
                                                                                   bot_settings):
    from sqlmodel import select

    from bot.store import SharedFile

    header = "q" * 10_000
    event = await share(slack, slack_server, f"{header},reference,answer\nQ?,R.,A.\n".encode())
    said = await wait_until(lambda: slack_server.thread("C0GENERAL", event["ts"]), what="the refusal")
    [refusal] = said
    text = refusal["blocks"][0]["text"]["text"]
    assert refusal["text"] == "I cannot judge answers.csv"
    assert text.startswith(":warning: I cannot judge *answers.csv*:") and "no question column" in text
    assert len(text) <= 3000 and text.endswith("…")
    store = Store.open(bot_settings.db_url)

    def state() -> str:
        with store.session() as session:
            return session.exec(select(SharedFile).where(SharedFile.message_ts == event["ts"])).one().state

    # settled once the refusal is posted: a restart does not take it up again
    await wait_until(lambda: state() == "refused", what="the share marked refused")
    assert judge_server.bodies() == []


# -- which column is which --------------------------------------------------------------------------------------

TWO_ANSWERS = (b"question,reference,answer,model_response,engine\n"
               b"Q1?,R,Ask someone.,Use myStudies.,bot-a\nQ2?,R,Ask around.,Use myStudies too.,bot-b\n")


async def test_two_answer_columns_are_refused_until_the_message_names_one(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    event = await share(slack, slack_server, TWO_ANSWERS, text="eth")
    refusal = await reply_to(slack_server, event)
    assert 'both \\"answer\\" and \\"model_response\\" could be the answer column' in refusal
    assert "a line `answer: model_response` in the message you share the file with" in refusal
    event = await share(slack, slack_server, TWO_ANSWERS, text="eth\nanswer: model_reply")
    assert 'there is no column \\"model_reply\\" for the answer' in await reply_to(slack_server, event)
    assert judge_server.bodies() == []

    event = await share(slack, slack_server, TWO_ANSWERS, text="eth\nanswer: `model_response`\nmodel: engine")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])

    assert sorted(triple_of(body)[2] for body in judge_server.bodies()) == ["Use myStudies too.", "Use myStudies."]
    summary = summaries(slack_server, "C0GENERAL", event["ts"])[0]
    card = blocks_text(summary)
    assert "columns question=question, reference=reference, answer=model_response, model=engine" in card
    assert sorted(row["Model under test"] for row in table_dicts(summary)) == ["bot-a", "bot-b"]
    results = results_rows(slack_server.uploads("C0GENERAL", event["ts"])[0])
    assert [(r["answer"], r["model_response"], r["status"]) for r in results] == [
        ("Ask someone.", "Use myStudies.", "scored"), ("Ask around.", "Use myStudies too.", "scored")]


async def test_a_sentence_starting_like_a_column_line_is_read_as_a_sentence(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    content = b"question,reference,answer\nQ1?,R,Use myStudies.\n"
    event = await share(slack, slack_server, content,
                        text="eth\nQuestion: can you check these answers?\nAnswer: the new bot wrote them, please have a look.")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "columns question=question, reference=reference, answer=answer" in card


async def test_a_model_line_naming_no_column_names_the_model_under_test(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    content = b"question,reference,answer\nQ1?,R,Use myStudies.\n"
    event = await share(slack, slack_server, content, text="eth\nmodel: bot-v2")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    summary = summaries(slack_server, "C0GENERAL", event["ts"])[0]
    assert [row["Model under test"] for row in table_dicts(summary)] == ["bot-v2"]
    assert "columns question=question, reference=reference, answer=answer" in blocks_text(summary)


async def test_a_model_column_nearly_named_is_said_in_the_thread(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    content = b"question,reference,answer,modle\nExams?,Register in myStudies.,Use myStudies.,<!channel> bot-a\n"
    event = await share(slack, slack_server, content, text="eth")
    thread = await finished_thread(slack_server, "C0GENERAL", event["ts"])
    notes = [m["text"] for m in thread if "did you mean" in (m.get("text") or "")]
    assert notes == [":warning: No model column: did you mean *modle*? Its cells are not read as the model under test; "
                     "to read them, share the file again with a line `model: modle` in the message."], notes
    assert "<!channel>" not in json.dumps(thread)  # the cell was never read as a model, nor shown
