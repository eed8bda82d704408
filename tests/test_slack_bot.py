"""End to end: the real bolt app over HTTP, the real Slack and OpenAI clients, local Slack and judge servers."""

from __future__ import annotations

import asyncio
import json

from bot.store import Store
from bot.slack.cards import AGREE, DETAILS, DISAGREE, REJUDGE, RETRY
from tests.replies import eth_reply, triple_of
from tests.servers.openai_server import Reply


def card_texts(message: dict) -> str:
    return json.dumps(message["blocks"], ensure_ascii=False)


async def test_inline_judging_posts_a_placeholder_then_the_card(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(eth_reply("Correct"))
    answer = await slack.command("eth How do I register? || In myStudies (ETHIS). || Use myStudies.")
    assert answer.status == 200
    post = (await slack_server.await_for("chat.postMessage"))[0]
    assert "Judging with" in post.params["text"]
    update = (await slack_server.await_for("chat.update"))[0]
    message = slack_server.messages[("C0GENERAL", update.params["ts"])]
    text = card_texts(message)
    assert "Correct · correctness 2/2 · completeness 2/2" in text
    assert triple_of(judge_server.bodies()[0]) == ("How do I register?", "In myStudies (ETHIS).", "Use myStudies.")
