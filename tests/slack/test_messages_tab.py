"""The Messages tab as an AI app, end to end: the real bolt app over HTTP, the local Slack and judge servers."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from bot.slack.listeners.clicks import OTHER_WORKSPACE
from bot.slack.listeners.messages_tab import FORMAT, PROMPTS
from bot.store import Store, recent_in_channel
from tests.support.replies import eth_reply, triple_of
from tests.support.slack_files import eth_csv, grade_by_answer, share, summaries, wait_until
from tests.support.slack_messages import INLINE, card_of, said
from tests.support.slack_server import BOT_USER_ID

QUESTION, REFERENCE, ANSWER = "How do I register for exams?", "In myStudies (ETHIS).", "Ask someone."
LINE = f"eth: {QUESTION} || {REFERENCE} || {ANSWER}"


def said_in(slack_server, channel: str, thread_ts: str) -> list[dict]:
    """The bot's messages in a thread of a direct conversation, oldest first."""
    return [m for m in slack_server.thread(channel, thread_ts) if m["user"] == BOT_USER_ID]


def text_of(message: dict) -> str:
    return message["text"] + json.dumps(message.get("blocks") or [], ensure_ascii=False)


async def replies(slack_server, channel: str, thread_ts: str, count: int = 1) -> list[dict]:
    return await wait_until(lambda: (found := said_in(slack_server, channel, thread_ts)) and len(found) >= count
                            and found, 10, f"{count} repl(ies) in {channel}")


async def new_thread(slack, slack_server, user: str = "U0USER") -> tuple[str, str]:
    """Open the app's Messages tab as `user` and start a thread: (the conversation, the thread)."""
    dm = slack_server.open_im(user)
    event = slack_server.thread_started_event(dm, user=user)
    assert (await slack.event(event)).status == 200
    await slack_server.await_for("assistant.threads.setSuggestedPrompts")
    return dm, event["assistant_thread"]["thread_ts"]


async def test_a_new_thread_offers_the_common_actions(slack, slack_server):
    dm, thread = await new_thread(slack, slack_server)
    [call] = slack_server.calls_to("assistant.threads.setSuggestedPrompts")
    assert (call.params["channel_id"], call.params["thread_ts"]) == (dm, thread)
    manifest = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())
    assert call.params["prompts"] == list(PROMPTS) == manifest["features"]["agent_view"]["suggested_prompts"]
    assert call.params["title"]
    # nothing is posted, and the thread's history is not read (Slack limits conversations.replies)
    assert slack_server.calls_to("chat.postMessage") == [] and slack_server.calls_to("conversations.replies") == []


async def test_a_line_is_judged_with_a_status_then_a_card_that_belongs_to_the_conversation(
        slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(eth_reply("Correct"), eth_reply("Generic"))
    assert (await slack.command(INLINE)).status == 200  # a judgment in a channel, for contrast
    await card_of(slack_server, "C0GENERAL")
    dm, thread = await new_thread(slack, slack_server)
    assert (await slack.event(slack_server.im_message_event(dm, LINE, thread_ts=thread))).status == 200
    card = await card_of(slack_server, dm)
    assert card["thread_ts"] == thread and "Generic" in text_of(card)
    assert triple_of(judge_server.bodies()[1]) == (QUESTION, REFERENCE, ANSWER)
    # the status shows while the judge works (set again after the placeholder, whose post clears it), then goes
    await slack_server.await_for("assistant.threads.setStatus", lambda call: call.params["status"] == "")
    calls = [c for c in slack_server.calls if c.params.get("channel") == dm or c.params.get("channel_id") == dm]
    kinds = [(c.method, c.params.get("status")) for c in calls if c.method != "assistant.threads.setSuggestedPrompts"]
    placeholder = kinds.index(("chat.postMessage", None))
    card_edit = kinds.index(("chat.update", None))
    assert ("assistant.threads.setStatus", "judging with eth...") in kinds[placeholder:card_edit]
    assert kinds[0] == ("assistant.threads.setStatus", "judging with eth...")
    assert kinds[-1] == ("assistant.threads.setStatus", "")
    titled = slack_server.calls_to("assistant.threads.setTitle")[0].params
    assert (titled["channel_id"], titled["thread_ts"], titled["title"]) == (dm, thread, "Grading with eth")
    store = Store.open(bot_settings.db_url)
    [row] = recent_in_channel(store, channel_id=dm)
    [elsewhere] = recent_in_channel(store, channel_id="C0GENERAL")
    assert (row.channel_id, row.team_id, row.user_id, row.thread_ts, row.message_ts) == (
        dm, "T0TEST", "U0USER", thread, card["ts"])
    assert (row.tag, elsewhere.tag) == ("Generic", "Correct")

    # `stats` here counts only this conversation; `/judge stats` in a channel never shows it
    await slack.event(slack_server.im_message_event(dm, "stats", thread_ts=thread))
    stats = text_of((await wait_until(lambda: [m for m in said_in(slack_server, dm, thread)
                                               if "Stats in" in text_of(m)], what="the stats"))[0])
    assert f"<#{dm}>" in stats and "Generic 1" in stats and "Correct 1" not in stats
    assert (await slack.command("stats")).status == 200
    in_channel = await said(slack_server)
    assert "Correct 1" in in_channel and "Generic 1" not in in_channel and dm not in in_channel


async def test_help_and_rubrics(slack, slack_server, judge_server, rubrics):
    dm, thread = await new_thread(slack, slack_server)
    await slack.event(slack_server.im_message_event(dm, "help", thread_ts=thread))
    [answer] = await replies(slack_server, dm, thread)
    shown = text_of(answer)
    assert "rubric: question || reference answer || answer" in shown and "`stats`" in shown and "CSV" in shown
    assert all(f"`{rubric.name}`" in shown for rubric in rubrics)
    await slack.event(slack_server.im_message_event(dm, "grade", thread_ts=thread))  # the suggested prompts' words
    await slack.event(slack_server.im_message_event(dm, "csv", thread_ts=thread))
    _, grade, csv = await replies(slack_server, dm, thread, 3)
    assert "eth: How do I register" in text_of(grade) and "`question`, `reference` and `answer`" in text_of(csv)
    assert judge_server.bodies() == []


async def test_a_malformed_line_gets_the_format(slack, slack_server, judge_server):
    dm, thread = await new_thread(slack, slack_server)
    for line in ("eth: only a question", "what is this?", "etj: a || b || c", "eth: a || <!channel> || "):
        await slack.event(slack_server.im_message_event(dm, line, thread_ts=thread))
    answers = [text_of(m) for m in await replies(slack_server, dm, thread, 4)]
    assert all("rubric, a colon" in text for text in answers), answers
    assert any("found 1 non-empty part(s)" in text for text in answers)
    assert any("Did you mean 'eth'" in text for text in answers)
    assert all("<!channel>" not in text and "Traceback" not in text for text in answers)
    assert judge_server.bodies() == [] and slack_server.calls_to("assistant.threads.setStatus") == []
    assert FORMAT.startswith("To grade an answer here")


async def test_a_line_outside_a_thread_is_answered_in_its_own_thread(slack, slack_server):
    dm = slack_server.open_im()
    event = slack_server.im_message_event(dm, "help", thread_ts=None)
    await slack.event(event)
    [answer] = await replies(slack_server, dm, event["ts"])
    assert "rubric: question" in text_of(answer)


async def test_the_apps_own_messages_are_never_answered(slack, slack_server, judge_server):
    dm, thread = await new_thread(slack, slack_server)
    for thread_ts in (thread, None):  # as Slack echoes the app's posts: in the thread, and at the top
        own = slack_server.im_message_event(dm, LINE, thread_ts=thread_ts, from_bot=True)
        assert (await slack.event(own)).status == 200
    await slack.event(slack_server.im_message_event(dm, "help", thread_ts=thread))  # a person's, after them
    await slack_server.await_for("chat.postMessage")
    assert len(slack_server.calls_to("chat.postMessage")) == 1 and judge_server.bodies() == []
    assert slack_server.calls_to("assistant.threads.setStatus") == []


async def test_another_workspaces_events_are_refused(slack, slack_server, judge_server, bot_settings):
    dm = slack_server.open_im("U0GUEST")
    started = slack.event_payload(slack_server.thread_started_event(dm, user="U0GUEST"))
    assert (await slack.send_event({**started, "team_id": "T0PARTNER"})).status == 200
    event = slack_server.im_message_event(dm, LINE, thread_ts=started["event"]["assistant_thread"]["thread_ts"],
                                          user="U0GUEST", team="T0PARTNER")
    assert (await slack.event(event)).status == 200
    [answer] = await replies(slack_server, dm, event["thread_ts"])
    assert OTHER_WORKSPACE in text_of(answer)
    assert slack_server.calls_to("assistant.threads.setSuggestedPrompts") == [] and judge_server.bodies() == []
    assert recent_in_channel(Store.open(bot_settings.db_url), channel_id=dm) == []


async def test_a_csv_dropped_in_the_conversation_is_graded_there(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = grade_by_answer
    dm, thread = await new_thread(slack, slack_server)
    await share(slack, slack_server, eth_csv(3), channel=dm, thread_ts=thread, text="eth")
    await wait_until(lambda: summaries(slack_server, dm, thread), 30, "the summary in the conversation")
    store = Store.open(bot_settings.db_url)
    rows = recent_in_channel(store, channel_id=dm)
    assert len(rows) == 3 and {row.team_id for row in rows} == {"T0TEST"}
    assert recent_in_channel(store, channel_id="C0GENERAL") == []


async def test_a_file_that_is_not_a_table_gets_what_is_accepted(slack, slack_server):
    dm, thread = await new_thread(slack, slack_server)
    await share(slack, slack_server, b"not a table", name="notes.pdf", channel=dm, thread_ts=thread, text="eth")
    [answer] = await replies(slack_server, dm, thread)
    assert "CSV and TSV files only" in text_of(answer)
