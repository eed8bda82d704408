"""A shared file's background windows in Slack through the real bolt app: the cost question offers 2 h and 8 h (with
what each takes off) when the judge asks through the Responses API and not otherwise; a click judges every row in the
background once, priced at its window; Cancel while the responses wait cancels them at the endpoint; a channel's
monthly budget weighs a window's click at that window's price."""

from __future__ import annotations

import re

import pytest

from bot.llm.prices import builtin_prices
from bot.slack.flows.file_run import OVER_BUDGET
from bot.slack.server import start_bot
from bot.slack.views.file_run import BACKGROUND_RUN, BATCH_RUN, CANCEL_RUN, RESUME_RUN
from bot.store import get_run, set_cost_limits
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.responses_server import ResponsesJudgeServer
from tests.support.slack_files import blocks_text, finished_thread, share, summaries, wait_until
from tests.support.slack_messages import buttons, said
from tests.support.slack_side import SIGNING_SECRET, TEAM, SlackSide

WINDOWS = {BACKGROUND_RUN + "2h", BACKGROUND_RUN + "8h"}


def rows(count: int, tag: str) -> bytes:
    return ("question,reference,answer\n" + "".join(f"Q {tag}{n}?,Register in myStudies.,Use myStudies ({tag}{n}).\n"
                                                   for n in range(count))).encode()


@pytest.fixture
def server():
    server = ResponsesJudgeServer().start()
    server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    yield server
    server.stop()


async def bot_with(bot_settings, slack_server, server, api: str):
    settings = {"judge_model": "gpt-4o", "openai_base_url": server.base_url, "confirm_above_usd": 0.01,
                "batch_poll_seconds": 0.05, "judge_api": api}
    running = await start_bot(bot_settings.model_copy(update=settings), host="127.0.0.1")
    return running, SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)


def question_of(slack_server, event: dict) -> dict:
    thread = slack_server.thread(event["channel"], event["ts"])
    return thread[0] if thread and RESUME_RUN in buttons(thread[0]) else {}


async def test_the_8h_window_judges_each_row_once_in_the_background_at_its_price(bot_settings, slack_server,
                                                                                 server) -> None:
    server.background_seconds = 0.1
    running, slack = await bot_with(bot_settings, slack_server, server, "responses")
    try:
        event = await share(slack, slack_server, rows(6, "w"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        assert set(buttons(asked)) == {RESUME_RUN, *WINDOWS, BATCH_RUN, CANCEL_RUN}
        assert "Within 2 h, 30% off" in blocks_text(asked) and "Within 8 h, 40% off" in blocks_text(asked)
        await slack.click(BACKGROUND_RUN + "8h", buttons(asked)[BACKGROUND_RUN + "8h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
    finally:
        await running.stop()
    creates = [body for body in server.response_requests if body.get("background")]
    assert len(creates) == 6 and {body["background_options"]["completion_window"] for body in creates} == {"8h"}
    assert sorted(server.creates.values()) == [1] * 6 and server.refused == []
    gpt4o = builtin_prices().models["gpt-4o"]
    summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"${server.billed_usd(gpt4o.input, gpt4o.output):.4f}" in summary  # billed at 60% of live


async def test_cancel_while_the_responses_wait_cancels_them_at_the_endpoint(bot_settings, slack_server,
                                                                             server) -> None:
    server.hold = True  # the responses never end on their own
    running, slack = await bot_with(bot_settings, slack_server, server, "responses")
    try:
        event = await share(slack, slack_server, rows(4, "c"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        await slack.click(BACKGROUND_RUN + "2h", buttons(asked)[BACKGROUND_RUN + "2h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        await wait_until(lambda: len(server.backgrounds) == 4 or None, what="four background responses")
        progress = await wait_until(lambda: (m := slack_server.thread("C0GENERAL", event["ts"])[0]) and
                                    CANCEL_RUN in buttons(m) and m, what="the progress with Cancel")
        await slack.click(CANCEL_RUN, buttons(progress)[CANCEL_RUN], channel="C0GENERAL", message_ts=progress["ts"])
        await wait_until(lambda: summaries(slack_server, "C0GENERAL", event["ts"]), what="the cancelled summary")
    finally:
        await running.stop()
    assert sorted(server.cancels) == sorted(server.backgrounds)  # each open response cancelled, none left to bill


async def test_a_judge_on_chat_completions_is_offered_no_window(bot_settings, slack_server, server) -> None:
    running, slack = await bot_with(bot_settings, slack_server, server, "chat")
    try:
        event = await share(slack, slack_server, rows(6, "n"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
    finally:
        await running.stop()
    assert set(buttons(asked)) == {RESUME_RUN, BATCH_RUN, CANCEL_RUN}


async def test_an_endpoint_gone_while_polling_pauses_in_the_thread_and_resume_polls_the_same_responses(
        bot_settings, slack_server, server) -> None:
    server.hold = True  # the responses wait until the endpoint is back
    running, slack = await bot_with(bot_settings, slack_server, server, "responses")
    try:
        event = await share(slack, slack_server, rows(4, "o"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        await slack.click(BACKGROUND_RUN + "8h", buttons(asked)[BACKGROUND_RUN + "8h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        await wait_until(lambda: len(server.backgrounds) == 4 and server.polls >= 4 or None,
                         what="four background responses looked at")
        server.stop()  # every look is refused from here on
        paused = await wait_until(lambda: next((m for m in slack_server.thread("C0GENERAL", event["ts"])
                                                if m["text"].startswith("Paused") and RESUME_RUN in buttons(m)), None),
                                  what="the paused message")
        said = blocks_text(paused)
        assert "cannot reach the judge endpoint" in said and "to poll its background responses" in said
        assert "the responses are polled again, never sent again" in said and "Traceback" not in said
        assert summaries(slack_server, "C0GENERAL", event["ts"]) == []

        server.hold = False
        server.start()  # back on the same port, with its responses
        await slack.click(RESUME_RUN, buttons(paused)[RESUME_RUN], channel="C0GENERAL", message_ts=paused["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
    finally:
        await running.stop()
    assert sorted(server.creates.values()) == [1] * 4 and len(server.backgrounds) == 4  # nothing created again
    assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"8h"}
    gpt4o = builtin_prices().models["gpt-4o"]
    summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"${server.billed_usd(gpt4o.input, gpt4o.output):.4f}" in summary  # each response billed once, at 8 h


async def test_a_window_is_weighed_against_the_budget_at_its_own_price(bot_settings, slack_server, server) -> None:
    server.background_seconds = 0.1
    running, slack = await bot_with(bot_settings, slack_server, server, "responses")
    store = running.context.store

    def budget(fraction: float) -> None:
        # The budget set as `/judge budget` sets it, to a fraction of a cent (the command rounds to cents, and these
        # four rows cost about one)
        set_cost_limits(store, team_id=TEAM, channel_id="C0GENERAL", user_id="U0ADMIN", monthly_budget=live * fraction)

    try:
        event = await share(slack, slack_server, rows(4, "m"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, event), what="the cost question")
        run = get_run(store, int(buttons(asked)[RESUME_RUN]))
        assert run is not None and run.estimate is not None
        live = run.estimate["cost_usd"]  # the live estimate; 2 h is 70% of it, 8 h 60%

        budget(0.55)  # fits neither the live price nor 8 h's
        await slack.click(BACKGROUND_RUN + "8h", buttons(asked)[BACKGROUND_RUN + "8h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        refused = await said(slack_server)
        over = f"$0.0000 of ${live * 0.55:.4f} spent this month"
        assert OVER_BUDGET.format(over=over).split("(")[0] in refused and over in refused, refused

        budget(0.65)  # fits 8 h's price, not 2 h's nor the live one
        await slack.click(BACKGROUND_RUN + "2h", buttons(asked)[BACKGROUND_RUN + "2h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        assert f"$0.0000 of ${live * 0.65:.4f} spent this month" in await said(slack_server, count=2)
        assert server.response_requests == []  # nothing asked by either refusal

        await slack.click(BACKGROUND_RUN + "8h", buttons(asked)[BACKGROUND_RUN + "8h"], channel="C0GENERAL",
                          message_ts=asked["ts"])
        await finished_thread(slack_server, "C0GENERAL", event["ts"])
    finally:
        await running.stop()
    assert len(await slack_server.await_for("response_url", count=2)) == 2  # the 8 h click was not refused
    assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"8h"}
    assert sorted(server.creates.values()) == [1] * 4  # every row created, none held back by the budget
    gpt4o = builtin_prices().models["gpt-4o"]
    summary = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert f"${server.billed_usd(gpt4o.input, gpt4o.output):.4f}" in summary


async def test_over_the_budget_live_the_question_names_the_cheaper_tiers_that_fit(bot_settings, slack_server,
                                                                                  server) -> None:
    running, slack = await bot_with(bot_settings, slack_server, server, "responses")
    store = running.context.store
    try:
        first = await share(slack, slack_server, rows(4, "p"), text="eth")
        asked = await wait_until(lambda: question_of(slack_server, first), what="the first cost question")
        run = get_run(store, int(buttons(asked)[RESUME_RUN]))
        assert run is not None and run.estimate is not None
        assert "over its monthly budget" not in blocks_text(asked)
        # What is left fits 8 h's price (60% of the live one) and batch's (50%), not 2 h's (70%) nor the live one.
        set_cost_limits(store, team_id=TEAM, channel_id="C0GENERAL", user_id="U0ADMIN",
                        monthly_budget=run.estimate["cost_usd"] * 0.65)
        second = await share(slack, slack_server, rows(4, "q"), text="eth")
        text = blocks_text(await wait_until(lambda: question_of(slack_server, second), what="the second question"))
    finally:
        await running.stop()
    assert "over its monthly budget" in text
    assert re.search(r"Within 8 h \(\$[0-9.]+\) and Half price via Batch \(\$[0-9.]+\) fit what is left of the "
                     r"budget: anyone can start it so\.", text), text
    assert "Within 2 h (" not in text
