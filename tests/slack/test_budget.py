"""Cost in Slack through the real bolt app: a shared file whose estimate is above the channel's threshold asks with
Start and Cancel, `/judge budget` (admins set it), a file that would go over the budget waits for an admin, a run
that reaches it pauses, and the summary and digest say what was spent."""

from __future__ import annotations

import json

import pytest

from bot.llm.prices import builtin_prices
from bot.slack.server import start_bot
from bot.slack.views.file_run import BATCH_RUN, CANCEL_RUN, RESUME_RUN
from bot.store import get_run
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.slack_files import blocks_text, finished_thread, share, summaries, wait_until
from tests.support.slack_messages import buttons, said, table_rows
from tests.support.slack_side import SIGNING_SECRET, SlackSide

PRICED = {"judge_model": "gpt-4o"}
ROW_COST = builtin_prices().cost("gpt-4o", 1_000, 100) or 0.0  # $0.0035: what the judge server bills a row


def rows(count: int, tag: str) -> bytes:
    """A CSV of `count` rows no other file of the test shares (so none is reused from the history)."""
    return ("question,reference,answer\n" + "".join(f"Q {tag}{n}?,Register in myStudies.,Use myStudies ({tag}{n}).\n"
                                                   for n in range(count))).encode()


def billed(body: dict) -> Reply:
    return Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)


async def priced_bot(bot_settings, slack_server, **settings):
    running = await start_bot(bot_settings.model_copy(update={**PRICED, **settings}), host="127.0.0.1")
    return running, SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)


def question_of(slack_server, event: dict) -> dict:
    thread = slack_server.thread(event["channel"], event["ts"])
    return thread[0] if thread and RESUME_RUN in buttons(thread[0]) else {}


async def test_a_file_above_the_threshold_asks_then_starts_or_is_cancelled(bot_settings, slack_server, judge_server):
    judge_server.responder = billed
    running, slack = await priced_bot(bot_settings, slack_server, confirm_above_usd=0.01)
    try:
        event = await share(slack, slack_server, rows(12, "a"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        text = blocks_text(asked)
        saved = get_run(running.context.store, int(buttons(asked)[RESUME_RUN]))
        assert saved is not None and saved.estimate is not None
        cost = saved.estimate["cost_usd"]
        assert f"About ${cost:.4f} for 12 rows with gpt-4o" in text and "answers.csv" in text
        assert "That is more than this channel judges without asking." in text
        assert set(buttons(asked)) == {RESUME_RUN, BATCH_RUN, CANCEL_RUN} and judge_server.bodies() == []

        await slack.click(RESUME_RUN, buttons(asked)[RESUME_RUN], channel="C0GENERAL", message_ts=asked["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
        assert len(judge_server.bodies()) == 12
        summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
        assert f"${12 * ROW_COST:.4f}" in summary  # what it cost, beside the estimate
        assert f"estimated ${cost:.4f} (" in summary and "the run took" in summary

        other = await share(slack, slack_server, rows(12, "b"), text="eth")
        second = await wait_until(lambda: question_of(slack_server, other), what="the second question")
        await slack.click(CANCEL_RUN, buttons(second)[CANCEL_RUN], channel="C0GENERAL", message_ts=second["ts"])
        await wait_until(lambda: summaries(slack_server, "C0GENERAL", other["ts"]), what="the cancelled summary")
        assert len(judge_server.bodies()) == 12  # nothing of the cancelled file was judged or billed
    finally:
        await running.stop()


async def test_the_budget_is_set_by_admins_asks_an_admin_and_pauses_a_run_that_reaches_it(bot_settings, slack_server,
                                                                                        judge_server):
    judge_server.responder = billed
    running, slack = await priced_bot(bot_settings, slack_server, confirm_above_usd=100.0, concurrency=1)
    try:
        await slack.command("budget 0.05", user="U0USER")
        assert "Only the workspace's admins and owners" in await said(slack_server)
        await slack.command("budget 0.05", user="U0ADMIN")
        await wait_until(lambda: [m for m in slack_server.messages.values() if "monthly budget to $0.0500" in
                                  m.get("text", "") + blocks_text(m)], what="the budget said in the channel")

        # 10 rows ($0.035) fit the budget of $0.05
        first = await share(slack, slack_server, rows(10, "c"), text="eth")
        await finished_thread(slack_server, "C0GENERAL", first["ts"])
        assert len(judge_server.bodies()) == 10

        # 10 more would go over: asked, and only an admin may start it
        more = await share(slack, slack_server, rows(10, "d"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, more), what="the budget question")
        assert f"${10 * ROW_COST:.4f} of $0.0500 spent this month" in blocks_text(asked)
        assert "An admin can start it anyway." in blocks_text(asked)
        await slack.click(RESUME_RUN, buttons(asked)[RESUME_RUN], channel="C0GENERAL", message_ts=asked["ts"],
                          user="U0USER")
        assert "only the workspace's admins" in await said(slack_server, count=2)
        assert len(judge_server.bodies()) == 10
        await slack.click(RESUME_RUN, buttons(asked)[RESUME_RUN], channel="C0GENERAL", message_ts=asked["ts"],
                          user="U0ADMIN")
        await finished_thread(slack_server, "C0GENERAL", more["ts"])
        assert len(judge_server.bodies()) == 20  # an admin's start judges past the budget

        # a new month's worth: raised to $0.09, a file estimated within it, billed dearer, pauses at the budget
        await slack.command("budget 0.09", user="U0ADMIN")
        judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=4_000,
                                                    tokens_out=100)
        dear = await share(slack, slack_server, rows(3, "e"), text="eth")
        paused = await wait_until(lambda: [m for m in slack_server.thread("C0GENERAL", dear["ts"])
                                           if "monthly budget is reached" in blocks_text(m)], what="the budget pause")
        # $0.02 was left: the first row ($0.011) leaves $0.009, the second spends past it and the third waits
        assert RESUME_RUN in buttons(paused[0]) and len(judge_server.bodies()) == 22
        assert "Paused answers.csv at 2 / 3 rows" in paused[0]["text"]

        await slack.command("budget")
        await said(slack_server, count=3)
        reply = (await slack_server.await_for("response_url", count=3))[-1].params
        spent = 20 * ROW_COST + 2 * (builtin_prices().cost("gpt-4o", 4_000, 100) or 0)
        shown = json.dumps(reply["blocks"], ensure_ascii=False)
        assert f"(UTC)*: ${spent:.4f}." in shown and "Monthly budget $0.0900" in shown
        assert table_rows(reply) == [["Rubric", "Judge", "Spent"], ["eth", "gpt-4o", f"${spent:.4f}"]]
        await slack.command("digest preview")
        assert f"Spent on judging these 7 days* ${spent:.4f}" in json.dumps(
            [c.params for c in await slack_server.await_for("response_url", count=4)], ensure_ascii=False)
    finally:
        await running.stop()


@pytest.mark.slow
async def test_half_price_via_batch_waits_through_a_restart_and_summarises(bot_settings, slack_server) -> None:
    from tests.support.batch_server import BatchJudgeServer

    server = BatchJudgeServer().start()
    server.responder = billed
    server.plan = ["in_progress"]  # waits until the test ends it
    settings = {"openai_base_url": server.base_url, "confirm_above_usd": 0.01, "batch_poll_seconds": 0.05}
    running, slack = await priced_bot(bot_settings, slack_server, **settings)
    try:
        event = await share(slack, slack_server, rows(12, "f"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        live = (get_run(running.context.store, int(buttons(asked)[BATCH_RUN])) or pytest.fail()).estimate or {}
        assert f"Through the Batch API: about ${live['cost_usd'] / 2:.4f}, results within 24 hours." in blocks_text(asked)
        await slack.click(BATCH_RUN, buttons(asked)[BATCH_RUN], channel="C0GENERAL", message_ts=asked["ts"])
        await wait_until(lambda: server.created, what="the batch")
        await wait_until(lambda: "through the Batch API at half price" in json.dumps(
            slack_server.thread("C0GENERAL", event["ts"])[0]), what="the batch progress")
        await running.stop()  # the bot restarts while the batch runs
        server.batches["batch_1"].steps = ["completed"]
        running, slack = await priced_bot(bot_settings, slack_server, **settings)
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
    finally:
        await running.stop()
        server.stop()
    assert server.created == ["batch_1"] and len(server.batch_requests()) == 12  # sent once, through the restart
    assert not [body for body in server.bodies() if len(body["messages"]) != 2]  # nothing asked live
    summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"${12 * ROW_COST / 2:.4f}" in summary  # billed at half price


async def test_half_price_via_batch_takes_samples_each_a_line_of_the_batch(bot_settings, slack_server) -> None:
    from tests.support.batch_server import BatchJudgeServer

    server = BatchJudgeServer().start()
    server.responder = billed
    settings = {"openai_base_url": server.base_url, "confirm_above_usd": 0.01, "batch_poll_seconds": 0.05}
    running, slack = await priced_bot(bot_settings, slack_server, **settings)
    try:
        event = await share(slack, slack_server, rows(4, "s"), text="eth samples: 3")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        assert set(buttons(asked)) == {RESUME_RUN, BATCH_RUN, CANCEL_RUN}
        assert "4 rows x 3 samples" in blocks_text(asked)
        await slack.click(BATCH_RUN, buttons(asked)[BATCH_RUN], channel="C0GENERAL", message_ts=asked["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
    finally:
        await running.stop()
        server.stop()
    lines = server.batch_requests()
    assert server.created == ["batch_1"] and len(lines) == 12 and {line["body"]["temperature"] for line in lines} == {0.7}
    assert not [body for body in server.bodies() if len(body["messages"]) != 2]  # nothing asked live
    summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"${12 * ROW_COST / 2:.4f}" in summary  # every sample billed at half price


async def test_a_card_in_a_channel_whose_budget_is_spent_is_not_judged(bot_settings, slack_server, judge_server):
    from bot.store import set_cost_limits
    from tests.support.slack_side import TEAM

    judge_server.responder = billed
    running, slack = await priced_bot(bot_settings, slack_server)
    try:
        await slack.command("eth Where do I register? || In myStudies. || In myStudies.")
        await wait_until(lambda: len(judge_server.bodies()) == 1, what="the first card judged")
        set_cost_limits(running.context.store, team_id=TEAM, channel_id="C0GENERAL", user_id="U0ADMIN",
                        monthly_budget=ROW_COST / 2)  # spent already by the card before
        await slack.command("eth Where do I print? || With Web Print. || With Web Print.")
        refused = await said(slack_server)
        assert "This channel's monthly budget is spent ($0.0035 of $0.0018 this month)" in refused, refused
        assert "`/judge budget USD`" in refused and "Where do I print?" in refused  # what was asked is not lost
        assert len(judge_server.bodies()) == 1
    finally:
        await running.stop()


async def test_a_card_that_would_take_the_channel_over_its_budget_is_not_judged(bot_settings, slack_server,
                                                                              judge_server):
    from bot.store import set_cost_limits
    from tests.support.slack_side import TEAM

    judge_server.responder = billed
    running, slack = await priced_bot(bot_settings, slack_server)
    try:
        await slack.command("eth Where do I register? || In myStudies. || In myStudies.")
        await wait_until(lambda: len(judge_server.bodies()) == 1, what="the first card judged")
        set_cost_limits(running.context.store, team_id=TEAM, channel_id="C0GENERAL", user_id="U0ADMIN",
                        monthly_budget=ROW_COST + 0.000001)  # not spent, but less is left than a card costs
        await slack.command("eth Where do I print? || With Web Print. || With Web Print.")
        refused = await said(slack_server)
        assert "would take this channel over its monthly budget ($0.0035 of $0.0035 spent this month)" in refused, \
            refused
        assert "`/judge budget USD`" in refused and "Where do I print?" in refused  # what was asked is not lost
        assert len(judge_server.bodies()) == 1
    finally:
        await running.stop()


async def test_a_file_paused_for_an_unknown_model_goes_on_with_the_bots_judge_after_a_restart(bot_settings,
                                                                                            slack_server, judge_server):
    def served(body: dict) -> Reply:
        if body["model"] == "gone-model":
            return Reply(status=404, error={"message": "The model `gone-model` does not exist",
                                            "type": "invalid_request_error", "code": "model_not_found"})
        return eth_reply("Correct")

    judge_server.responder = served
    running, slack = await priced_bot(bot_settings, slack_server, judge_model="gone-model")
    try:
        event = await share(slack, slack_server, rows(3, "u"), text="eth")
        paused = await wait_until(lambda: [m for m in slack_server.thread("C0GENERAL", event["ts"])
                                           if RESUME_RUN in buttons(m)], what="the pause")
    finally:
        await running.stop()
    assert "does not know model 'gone-model'" in blocks_text(paused[0])

    running, slack = await priced_bot(bot_settings, slack_server, judge_model="new-model")  # JUDGE_MODEL corrected
    try:
        await slack.click(RESUME_RUN, buttons(paused[0])[RESUME_RUN], channel="C0GENERAL", message_ts=paused[0]["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
        said_in_thread = " ".join(blocks_text(m) for m in slack_server.thread("C0GENERAL", event["ts"]))
        assert "did not know `gone-model`, so this run goes on with `new-model`" in said_in_thread
        assert {body["model"] for body in judge_server.bodies()[-3:]} == {"new-model"}
    finally:
        await running.stop()


async def test_a_file_for_a_rubric_without_a_reference_needs_no_reference_column(bot_settings, slack_server,
                                                                                judge_server, tmp_path):
    from tests.support.rubric_files import mini, write

    team = tmp_path / "team"
    team.mkdir()
    write(team, mini("plain", user_template="Q: $question\nA: $answer\n"))
    judge_server.responder = lambda body: Reply.json({"score": 2, "verdict": "good", "why": "fine"})
    running, slack = await priced_bot(bot_settings, slack_server, rubrics_dir=team)
    try:
        event = await share(slack, slack_server, b"question,answer\nWhere?,Here.\nWhen?,Now.\n", text="plain")
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
        summary = summaries(slack_server, "C0GENERAL", event["ts"])[0]
        assert len(judge_server.bodies()) == 2 and "2 of 2 rows scored" in summary["text"]
        other = await share(slack, slack_server, b"question,answer\nWhere?,Here.\n", text="eth")
        refused = await wait_until(lambda: slack_server.thread("C0GENERAL", other["ts"]), what="a refusal")
        assert "no reference column" in blocks_text(refused[0]) and len(judge_server.bodies()) == 2
    finally:
        await running.stop()
