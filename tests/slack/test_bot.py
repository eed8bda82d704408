"""End to end: the real bolt app over HTTP, the real Slack and OpenAI clients, local Slack and judge servers."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from bot.slack.server import start_bot
from bot.slack.views.card import AGREE, CORRECT, DETAILS, REJUDGE, RETRY
from bot.store import Store, feedback_tally, first_judgment, iter_judgments, latest_unfinished_run, recent_runs, spend, utcnow
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.slack_files import wait_until
from tests.support.slack_messages import INLINE, buttons, card_of, feedback, table_dicts
from tests.support.slack_side import SIGNING_SECRET, SlackSide


def blocks_text(message: dict) -> str:
    return json.dumps(message.get("blocks") or [], ensure_ascii=False)


def store_of(settings) -> Store:
    return Store.open(settings.db_url)


async def test_help_lists_usage_and_every_rubric(slack, rubrics):
    for text in ("", "help"):
        answer = await slack.command(text)
        assert answer.status == 200 and answer.body["response_type"] == "ephemeral"
        shown = answer.text()
        assert "/judge stats" in shown and "||" in shown
        for rubric in rubrics:
            assert f"`{rubric.name}`" in shown and rubric.description[:30] in shown


async def test_unknown_rubric_gets_did_you_mean(slack, slack_server):
    answer = await slack.command("etj")
    assert answer.status == 200 and "Did you mean 'eth'" in answer.text()
    assert slack_server.calls_to("views.open") == [] and slack_server.calls_to("chat.postMessage") == []


async def test_rubrics_subcommand(slack, rubrics):
    answer = await slack.command("rubrics")
    assert all(rubric.name in answer.text() for rubric in rubrics)


async def test_inline_judging_posts_a_placeholder_then_the_card(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(eth_reply("Correct"))
    answer = await slack.command(INLINE)
    assert answer.status == 200 and not answer.body  # an empty ack: the card comes as a message
    post = (await slack_server.await_for("chat.postMessage"))[0]
    assert "Judging with" in post.params["text"] and post.params["channel"] == "C0GENERAL"
    card = await card_of(slack_server)
    assert len(slack_server.messages) == 1  # the placeholder became the card
    text = blocks_text(card)
    assert "✅ *Correct · correctness 2/2 · completeness 2/2*" in text
    assert "graded as Correct" in text and "judge-test" in text and "<@U0USER>" in text
    assert triple_of(judge_server.bodies()[0]) == ("How do I register for exams?", "In myStudies (ETHIS).",
                                                    "Use myStudies.")
    [row] = [j for j in iter_judgments(store_of(bot_settings), 1)]
    assert (row.status, row.channel_id, row.user_id, row.message_ts) == ("scored", "C0GENERAL", "U0USER", card["ts"])
    assert set(buttons(card)) == {CORRECT, REJUDGE, DETAILS} and set(feedback(card)) == {"agree", "disagree"}


async def test_ack_comes_before_the_judge_answers(slack, slack_server, judge_server):
    judge_server.enqueue(Reply(content=eth_reply("Correct").content, delay=2.0))
    answer = await slack.command(INLINE)
    assert answer.status == 200
    assert slack_server.calls_to("chat.update") == []  # the judge has not answered yet, the ack is back
    await card_of(slack_server)


async def test_form_opens_with_rubric_and_remembered_model_then_judges(slack, slack_server, judge_server,
                                                                       bot_settings):
    judge_server.enqueue(eth_reply("Generic"), eth_reply("Correct"))
    answer = await slack.command("auditor")
    assert answer.status == 200
    opened = (await slack_server.await_for("views.open"))[0]
    view = opened.params["view"]
    assert view["callback_id"] == "judgebot_form"
    rubric_select = view["blocks"][0]["element"]
    assert rubric_select["initial_option"]["value"] == "eth"
    assert all(block["element"].get("multiline") for block in view["blocks"][2:])
    assert "initial_value" not in view["blocks"][1]["element"]  # nothing remembered yet

    submitted = await slack.submit(view, rubric="eth", model="campus-bot-v2", question="Where do I print?",
                                   reference="Web Print at webprint.ethz.ch", answer="Ask IT.")
    assert submitted.status == 200 and not submitted.body
    card = await card_of(slack_server)
    assert "Generic" in blocks_text(card) and "campus-bot-v2" in blocks_text(card) and "❌" in blocks_text(card)

    await slack.command("eth")  # the second form remembers the model
    view2 = (await slack_server.await_for("views.open", count=2))[1].params["view"]
    assert view2["blocks"][1]["element"]["initial_value"] == "campus-bot-v2"
    await slack.command("eth Q2? || R2 || A2")  # inline judging uses the remembered model too
    card2 = await card_of(slack_server, count=2)
    assert "campus-bot-v2" in blocks_text(card2)


async def test_form_with_empty_fields_points_at_them(slack, slack_server):
    await slack.command("eth")
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    answer = await slack.submit(view, rubric="eth", question="Q?", reference="", answer=" ")
    assert answer.body["response_action"] == "errors"
    assert set(answer.body["errors"]) == {"reference", "answer"}
    await asyncio.sleep(0.2)
    assert slack_server.calls_to("chat.postMessage") == []


async def test_agree_disagree_are_stored_and_replace_the_vote(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    value = buttons(card)[CORRECT]  # the judgment's id
    await slack.vote(card, agree=True, user="U0USER")
    first = (await slack_server.await_for("response_url", lambda c: "agree" in json.dumps(c.params)))[0]
    assert "Thanks: you agree" in first.params["text"] and first.params["response_type"] == "ephemeral"
    await slack.vote(card, agree=False, user="U0USER")
    await slack_server.await_for("response_url", lambda c: "Changed: you now disagree" in c.params.get("text", ""))
    await slack.click(AGREE, value, channel="C0GENERAL", message_ts=card["ts"], user="U0ADMIN")  # an older card's
    await slack_server.await_for("response_url", lambda c: "Thanks: you agree" in c.params.get("text", ""), count=2)
    store = store_of(bot_settings)
    assert feedback_tally(store, judgment_id=int(value)) == (1, 1)  # U0USER changed to disagree, U0ADMIN agrees
    await slack_server.await_for("chat.update", lambda c: ":+1: 1 agree" in json.dumps(c.params.get("blocks")))
    assert ":-1: 1 disagree" in blocks_text(slack_server.messages[("C0GENERAL", card["ts"])])


async def test_rejudge_skips_the_cache_and_posts_a_new_card_in_the_thread(slack, slack_server, judge_server,
                                                                          bot_settings):
    judge_server.enqueue(eth_reply("Correct"), eth_reply("Generic"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    await slack.click(REJUDGE, buttons(card)[REJUDGE], channel="C0GENERAL", message_ts=card["ts"])
    second = await card_of(slack_server, count=2)
    assert second["thread_ts"] == card["ts"] and "Generic" in blocks_text(second)
    assert len(judge_server.bodies()) == 2  # fresh: the identical triple was judged again, not reused
    assert "Correct" in blocks_text(slack_server.messages[("C0GENERAL", card["ts"])])  # the first card stays


async def test_details_opens_the_judges_reply(slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    await slack.click(DETAILS, buttons(card)[DETAILS], channel="C0GENERAL", message_ts=card["ts"])
    opened = (await slack_server.await_for("views.open"))[0]
    shown = json.dumps(opened.params["view"], ensure_ascii=False)
    assert '\\"result_tag\\": \\"Correct\\"' in shown and "graded as Correct" in shown


async def test_judge_error_card_has_no_score_and_retry_judges_again_in_place(slack, slack_server, judge_server,
                                                                             bot_settings):
    judge_server.enqueue(Reply.server_error(500), Reply.server_error(500), Reply.server_error(500))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    text = blocks_text(card)
    assert "could not grade" in text and "/100" not in text and "✅" not in text and "❌" not in text
    assert set(buttons(card)) == {RETRY}
    judge_server.enqueue(eth_reply("Correct"))
    await slack.click(RETRY, buttons(card)[RETRY], channel="C0GENERAL", message_ts=card["ts"])
    await slack_server.await_for("chat.update", lambda c: c.params["ts"] == card["ts"] and "Correct · correctness"
                                 in json.dumps(c.params.get("blocks"), ensure_ascii=False))
    rows = recent_runs(store_of(bot_settings))
    assert len(rows) == 2  # the error stays in the history as an error; the retry is a judgment of its own


async def test_quota_is_an_error_with_the_reason_never_a_score(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(Reply.quota())
    await slack.command(INLINE)
    card = await card_of(slack_server)
    text = blocks_text(card)
    assert "quota" in text.lower() and "/100" not in text
    assert "resume" not in text and "try again" in text  # a card has Retry, not a run to resume
    store = store_of(bot_settings)
    [run] = recent_runs(store)
    assert run.status == "done" and latest_unfinished_run(store, source="slack") is None
    [row] = list(iter_judgments(store, run.id))
    assert row.status == "error" and row.headline is None


async def test_buttons_and_history_never_cross_channels(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = lambda body: eth_reply("Correct")
    await slack.command("eth General Q? || R || A", channel="C0GENERAL")
    general = await card_of(slack_server, "C0GENERAL")
    await slack.command("eth Other Q? || R || A", channel="C0OTHER")
    await card_of(slack_server, "C0OTHER")

    history = await slack.command("history", channel="C0GENERAL")
    await asyncio.sleep(0)
    reply = (await slack_server.await_for("response_url", lambda c: "Latest" in c.params.get("text", "")))[0]
    shown = json.dumps(reply.params)
    assert history.status == 200 and "General Q?" in shown and "Other Q?" not in shown
    assert f"archives/C0GENERAL/p{general['ts'].replace('.', '')}" in shown

    await slack.command("stats", channel="C0OTHER")
    stats = (await slack_server.await_for("response_url", lambda c: "stats" in c.params.get("text", "")))[0]
    assert [row["Cases"] for row in table_dicts(stats.params)] == ["1"] and "C0OTHER" in json.dumps(stats.params)

    # A button naming a judgment of #general, clicked in #other, is refused and shows nothing of it.
    await slack.click(DETAILS, buttons(general)[DETAILS], channel="C0OTHER", message_ts="1.000000")
    refusal = (await slack_server.await_for("response_url", lambda c: "cannot find" in c.params.get("text", "")))[0]
    assert "General Q?" not in json.dumps(refusal.params)
    assert slack_server.calls_to("views.open") == []


async def test_not_in_channel_tells_the_person_how_to_invite_the_bot(slack, slack_server, judge_server):
    await slack.command(INLINE, channel="C0NOBOT")
    told = (await slack_server.await_for("response_url"))[0]
    assert "/invite @judgebot" in told.params["text"] and told.params["response_type"] == "ephemeral"
    assert judge_server.bodies() == []  # nothing was judged, so nothing was billed


async def test_rate_limited_update_is_retried(slack, slack_server, judge_server):
    slack_server.fail("chat.update", "ratelimited", status=429, headers={"Retry-After": "1"})
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    assert "Correct" in blocks_text(card)
    assert len(slack_server.calls_to("chat.update")) == 2


async def test_long_and_right_to_left_texts(slack, slack_server, judge_server):
    arabic = "كم عدد الساعات المعتمدة المطلوبة لنيل درجة الماجستير؟"
    long_answer = " ".join(["word"] * 3000)
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(f"eth {arabic} || 36 ساعة معتمدة. || {long_answer}")
    card = await card_of(slack_server)
    text = blocks_text(card)
    assert f"\u2067{arabic}\u2069" in text
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in card["blocks"])
    assert "full text is in the thread" in text
    await slack_server.await_for("chat.postMessage", lambda c: c.params.get("thread_ts") == card["ts"], count=2)
    details = slack_server.thread("C0GENERAL", card["ts"])
    assert len(details) == 2  # 15,000 characters take two messages of at most ~11,500
    assert all(len(json.dumps(d["blocks"], ensure_ascii=False)) <= 11_500 for d in details)
    assert long_answer in "".join(b["text"]["text"].split("\n", 1)[1] for d in details for b in d["blocks"])


async def test_app_home_shows_the_persons_judgments(slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command("eth Home Q? || R || A", user="U0ADMIN")
    await card_of(slack_server)
    await slack.event({"type": "app_home_opened", "user": "U0ADMIN", "channel": "D0HOME", "tab": "home"})
    published = (await slack_server.await_for("views.publish"))[0]
    assert published.params["user_id"] == "U0ADMIN" and published.params["view"]["type"] == "home"
    assert "Home Q?" in json.dumps(published.params["view"])
    await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME2", "tab": "home"})
    other = (await slack_server.await_for("views.publish", count=2))[1]
    assert "Home Q?" not in json.dumps(other.params["view"])


@pytest.mark.parametrize("tamper", ["wrong secret", "old timestamp", "one byte changed", "no headers",
                                    "no signature", "a signature that is not ASCII"])
async def test_http_mode_refuses_unsigned_or_forged_requests(slack, slack_server, tamper):
    import time
    from urllib.parse import urlencode

    body = urlencode(slack.command_payload("help"))
    form = "application/x-www-form-urlencoded"
    good = await slack.post(body, form)
    assert good.status == 200 and "/judge stats" in good.text()
    if tamper == "wrong secret":
        answer = await slack.post(body, form, secret="not-the-secret")
    elif tamper == "old timestamp":
        answer = await slack.post(body, form, timestamp=int(time.time()) - 301)
    elif tamper == "one byte changed":
        from slack_sdk.signature import SignatureVerifier
        stamp = str(int(time.time()))
        signature = SignatureVerifier(slack.secret).generate_signature(timestamp=stamp, body=body)
        answer = await slack.post(body.replace("help", "helq"), form, signed=False,
                                  headers={"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature})
    elif tamper == "no headers":
        answer = await slack.post(body, form, signed=False)
    elif tamper == "a signature that is not ASCII":  # refused as unsigned, not answered with a server error
        answer = await slack.post(body, form, signed=False, headers={"X-Slack-Request-Timestamp": str(int(time.time())),
                                                                     "X-Slack-Signature": "v0=\u00ff\u00fe"})
    else:
        answer = await slack.post(body, form, signed=False,
                                  headers={"X-Slack-Request-Timestamp": str(int(time.time()))})
    assert answer.status == 401


async def test_health_endpoint(http_bot):
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{http_bot.port}/health") as response:
        assert response.status == 200 and (await response.json()) == {"ok": True}


async def test_a_double_click_on_retry_judges_once(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(Reply.server_error(500), Reply.server_error(500), Reply.server_error(500))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    retry = buttons(card)[RETRY]  # the message itself changes once judged again
    judge_server.enqueue(Reply(content=eth_reply("Correct").content, delay=1.0))
    await asyncio.gather(*(slack.click(RETRY, retry, channel="C0GENERAL", message_ts=card["ts"]) for _ in range(2)))
    await slack_server.await_for("response_url", lambda c: "being judged again already" in c.params.get("text", ""))
    await slack_server.await_for("chat.update", lambda c: "Correct · correctness" in
                                 json.dumps(c.params.get("blocks"), ensure_ascii=False))
    await asyncio.sleep(0.3)
    assert len(recent_runs(store_of(bot_settings))) == 2 and len(judge_server.bodies()) == 4
    # A late click on the old card's Retry, after the card was judged again, changes nothing.
    await slack.click(RETRY, retry, channel="C0GENERAL", message_ts=card["ts"])
    await slack_server.await_for("response_url", lambda c: "judged again already (#2)" in c.params.get("text", ""))
    assert len(recent_runs(store_of(bot_settings))) == 2
    assert "Correct · correctness" in json.dumps(slack_server.messages[("C0GENERAL", card["ts"])]["blocks"],
                                                 ensure_ascii=False)


@pytest.mark.slow
async def test_re_judge_clicked_by_fifty_people_on_two_bots_at_once_judges_once(db_url, bot_settings, slack_server,
                                                                                judge_server):
    settings = bot_settings.model_copy(update={"database_url": db_url})  # SQLite, then PostgreSQL
    one, two = await start_bot(settings, host="127.0.0.1"), await start_bot(settings, host="127.0.0.1")
    try:
        sides = [SlackSide(slack_server, url=f"http://127.0.0.1:{bot.port}/slack/events", secret=SIGNING_SECRET)
                 for bot in (one, two)]
        judge_server.enqueue(eth_reply("Correct"), Reply(content=eth_reply("Generic").content, delay=2.0))
        await sides[0].command(INLINE)
        card = await card_of(slack_server)
        store = Store.open(db_url)
        once = spend(store, channel_id="C0GENERAL", since=utcnow() - timedelta(hours=1))

        def told(call) -> bool:
            return "judged again already" in call.params.get("text", "")

        answers = await asyncio.gather(*(  # each click another person's, every other one on the other bot
            sides[n % 2].click(REJUDGE, buttons(card)[REJUDGE], channel="C0GENERAL", message_ts=card["ts"],
                               user=f"U0P{n:03d}") for n in range(50)))
        assert {answer.status for answer in answers} == {200}
        second = await card_of(slack_server, count=2)
        assert second["thread_ts"] == card["ts"] and "Generic" in blocks_text(second)
        others = await slack_server.await_for("response_url", told, count=49, timeout=30)
        assert any("is being judged again already; its card follows shortly" in c.params["text"] for c in others)
        await asyncio.sleep(1.0)  # a second judgment would have been asked for by now
        assert len(judge_server.bodies()) == 2 and len(recent_runs(store)) == 2
        assert len(slack_server.calls_to("chat.postMessage")) == 2  # the first card, and one new card
        twice = spend(store, channel_id="C0GENERAL", since=utcnow() - timedelta(hours=1))
        assert (twice.usd, twice.unpriced) == (2 * once.usd, 2 * once.unpriced) and twice.unpriced + twice.usd > 0

        # A click after the card was judged again points at the new card; Re-judge on that one judges once more.
        await sides[1].click(REJUDGE, buttons(card)[REJUDGE], channel="C0GENERAL", message_ts=card["ts"])
        late = (await slack_server.await_for("response_url", told, count=50))[-1].params["text"]
        assert late == ("This card was judged again already (#2): its card is in the thread, and its buttons judge it "
                        "again."), late
        judge_server.enqueue(eth_reply("Correct"))
        await sides[1].click(REJUDGE, buttons(second)[REJUDGE], channel="C0GENERAL", message_ts=second["ts"])
        third = await card_of(slack_server, count=3)
        assert third["thread_ts"] == card["ts"] and len(judge_server.bodies()) == 3
    finally:
        await two.stop()
        await one.stop()


async def test_http_mode_answers_slacks_url_verification(slack):
    answer = await slack.post(json.dumps({"token": "legacy", "challenge": "c-123", "type": "url_verification"}),
                              "application/json")
    assert answer.status == 200 and answer.body == {"challenge": "c-123"}
    forged = await slack.post(json.dumps({"token": "legacy", "challenge": "c-123", "type": "url_verification"}),
                              "application/json", secret="not-the-secret")
    assert forged.status == 401


async def test_a_form_that_cannot_be_posted_gives_back_what_was_typed(slack, slack_server, judge_server,
                                                                      bot_settings):
    await slack.command("eth", channel="C0NOBOT")
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    long_question = "Is a < b & c > d? " * 160  # 2,880 characters that escaping makes longer still
    await slack.submit(view, rubric="eth", question=long_question, reference="R & <b>", answer="A")
    told = (await slack_server.await_for("response_url"))[0]
    text = told.params["blocks"][0]["text"]["text"]
    assert "/invite @judgebot" in text and "What you sent" in text and "Is a &lt; b &amp; c &gt; d?" in text
    assert len(text) <= 3000 and "R &amp; &lt;b&gt;" in text
    assert judge_server.bodies() == []
    # the person is told first; the run is settled as cancelled right after
    store = store_of(bot_settings)
    [run] = await wait_until(lambda: [run for run in recent_runs(store) if run.status != "pending"],
                             what="the refused card's run settled")
    assert run.status == "cancelled" and "not_in_channel" in run.stop_reason


@pytest.mark.slow
async def test_many_people_judging_at_once_are_all_acked_before_any_card(slack, slack_server, judge_server):
    judge_server.responder = lambda body: eth_reply("Correct")
    judge_server.latency = 0.5
    answers = await asyncio.gather(*(slack.command(f"eth Question {n}? || R || A", user=f"U{n:04d}")
                                     for n in range(20)))
    assert all(a.status == 200 for a in answers)
    assert slack_server.calls_to("chat.update") == []  # every ack came back while the judge was still busy
    await card_of(slack_server, count=20)
    questions = {triple_of(body)[0] for body in judge_server.bodies()}
    assert questions == {f"Question {n}?" for n in range(20)}


async def test_a_slack_server_error_is_retried(slack, slack_server, judge_server):
    slack_server.fail("chat.postMessage", "internal_error", status=503)
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    card = await card_of(slack_server)
    assert "Correct" in blocks_text(card) and len(slack_server.calls_to("chat.postMessage")) == 2


async def test_a_card_slack_refuses_is_saved_and_the_person_told(slack, slack_server, judge_server, bot_settings):
    judge_server.enqueue(eth_reply("Correct"))
    slack_server.fail("chat.update", "invalid_blocks")
    await slack.command(INLINE)
    told = (await slack_server.await_for("response_url"))[0]
    assert "Judgment #1 is saved" in told.params["text"] and "invalid_blocks" in told.params["text"]
    [run] = recent_runs(store_of(bot_settings))
    assert first_judgment(store_of(bot_settings), run.id).status == "scored"


async def test_full_texts_slack_refuses_leave_the_card_and_tell_the_person(slack, slack_server, judge_server):
    judge_server.enqueue(Reply(content=eth_reply("Correct").content, delay=0.5))
    await slack.command(INLINE.replace("Use myStudies.", "Use myStudies. " * 200))
    await slack_server.await_for("chat.postMessage")  # the placeholder is up: the next post is the thread's
    slack_server.fail("chat.postMessage", "msg_blocks_too_long")
    told = (await slack_server.await_for("response_url"))[0]
    assert "full texts could not be posted" in told.params["text"] and "msg_blocks_too_long" in told.params["text"]
    card = await card_of(slack_server)
    assert "Correct · correctness" in blocks_text(card) and "full text is in the thread" in blocks_text(card)


async def test_a_failing_listener_is_logged_with_where_and_for_whom(slack, slack_server, caplog):
    slack_server.fail("views.publish", "internal_error")
    await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
    await slack_server.await_for("views.publish")
    for _ in range(100):
        if any("failed for user U0USER" in r.getMessage() for r in caplog.records):
            break
        await asyncio.sleep(0.02)
    [record] = [r for r in caplog.records if "failed for user U0USER" in r.getMessage()]
    assert "event_callback" in record.getMessage() and record.exc_info is not None
