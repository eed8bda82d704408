"""A channel's own judge at its own reasoning effort: set by `/judge default judge MODEL EFFORT`, refused at once when
the model does not accept it, sent with every card and file judged there, and named with the judge on the card, the
file's summary and `/judge default judge`."""

from __future__ import annotations

import json

from bot.store import channel_judge, set_channel_judge
from tests.support.replies import eth_reply
from tests.support.slack_files import finished_thread, share
from tests.support.slack_messages import card_of


async def test_an_admin_sets_the_channels_judge_at_an_effort_and_cards_there_are_judged_at_it(
        slack, slack_server, judge_server, http_bot) -> None:
    store = http_bot.context.store
    await slack.command("default judge gpt-6-luna medium", user="U0ADMIN")
    said = (await slack_server.await_for("chat.postMessage"))[-1].params
    assert "set this channel's judge to `gpt-6-luna` at reasoning effort medium" in said["text"]
    choice = channel_judge(store, team_id="T0TEST", channel_id="C0GENERAL")
    assert choice is not None and (choice.judge_model, choice.reasoning_effort) == ("gpt-6-luna", "medium")
    await slack.command("default judge")
    shown = (await slack_server.await_for("response_url"))[-1].params["text"]
    assert "judged by its own judge, `gpt-6-luna` at reasoning effort medium, set by <@U0ADMIN>" in shown

    judge_server.enforce_gpt6 = True
    judge_server.responder = lambda body: eth_reply("Correct")
    await slack.command("eth Where is my payslip? || In Staffnet. || Staffnet ESS.")
    card = await card_of(slack_server)
    [body] = judge_server.bodies()
    assert (body["model"], body["reasoning_effort"]) == ("gpt-6-luna", "medium") and "temperature" not in body
    assert judge_server.refused == []
    assert "judge `gpt-6-luna` · effort medium" in json.dumps(card["blocks"], ensure_ascii=False)


async def test_an_effort_the_model_refuses_or_no_effort_at_all_is_refused_and_nothing_changes(
        slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    await slack.command("default judge gpt-6.2-sol none", user="U0ADMIN")
    refused = (await slack_server.await_for("response_url"))[-1].params["text"]
    assert "does not accept reasoning effort 'none'" in refused and "The judge stays as it was." in refused
    answer = await slack.command("default judge gpt-6-luna thoroughly", user="U0ADMIN")  # refused as it is typed
    assert "'thoroughly' is not a reasoning effort" in answer.text()
    assert "/judge default judge gpt-6-luna low" in answer.text()
    assert channel_judge(store, team_id="T0TEST", channel_id="C0GENERAL") is None


async def test_a_file_in_the_channel_is_judged_at_its_judges_effort_and_its_summary_says_so(
        slack, slack_server, http_bot, judge_server) -> None:
    judge_server.enforce_gpt6 = True
    judge_server.responder = lambda body: eth_reply("Correct")
    set_channel_judge(http_bot.context.store, team_id="T0TEST", channel_id="C0GENERAL", judge_model="gpt-6-luna",
                      user_id="U0ADMIN", effort="high")
    rows = b"question,reference,answer\nWhere?,In myStudies.,Use myStudies.\nWhen?,In May.,In May.\n"
    event = await share(slack, slack_server, rows, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert {(body["model"], body["reasoning_effort"]) for body in judge_server.bodies()} == {("gpt-6-luna", "high")}
    summaries = [json.dumps(m.get("blocks", []), ensure_ascii=False) for (c, _), m in slack_server.messages.items()
                 if c == "C0GENERAL"]
    assert any("judge `gpt-6-luna` · effort high" in text and "of them reasoning" in text for text in summaries)
