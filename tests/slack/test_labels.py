"""Samples on a card and in Details, and Correct it: the form, its checks, the saved label and the card that shows it.

The card tests build sampled rows in the history as a run saves them (samples, then the combined verdict); the rest
drive the real bolt app over HTTP against the local Slack and judge servers.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.judge.samples import Sampled
from bot.judge.verdicts import combine
from bot.records import Verdict
from bot.rubric import Rubric
from bot.slack.views.card import CORRECT, DETAILS, result_card
from bot.slack.views.commands import FormSeal
from bot.slack.views.correction import CORRECTION, CorrectionContext
from bot.slack.views.details import reply_view
from bot.store import (
    Judgment,
    JudgmentSample,
    Store,
    add_rows,
    create_run,
    first_judgment,
    get_judgment,
    labels_of,
    samples_of,
    save_sample,
    save_verdict,
    set_run_message,
)
from tests.support.forms import inputs, submit_form
from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import eth_reply
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, TEAM, SlackSide

CHANNEL = "C0GENERAL"
INLINE = "eth How do I register for exams? || In myStudies (ETHIS). || Use myStudies."
ETH = {"Correct": {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "names myStudies"},
       "Generic": {"correctness": 0, "completeness": 1, "result_tag": "Generic", "reasoning": "generic advice"}}
BENCHMARK = {"Factual Accuracy": 5, "Relevance": 4, "Clarity": 4, "Language Consistency": 4, "Conciseness": 4,
             "Overall": 4.5}
HOSTILE_TAG = "<!channel> ```x``` `y`"
HOSTILE_MODEL = "m2 <!here> <@U0BOSS> ```"


# --- rows with samples, saved as a run saves them -------------------------------------------------------------


def verdict_of(rubric: Rubric, judge_model: str, output: dict[str, Any] | None) -> Verdict:
    """A judge's verdict on a row: scored with `output`, or a judge error when there is none."""
    common = {"rubric_name": rubric.name, "rubric_version": rubric.version, "rubric_hash": rubric.content_hash,
              "judge_model": judge_model, "prompt_hash": "p" * 32, "tokens_in": 100, "tokens_out": 20, "attempts": 1}
    if output is None:
        return Verdict(status="error", error=f"{judge_model} timed out <!channel>", **common)
    scoring = rubric.score(output)
    return Verdict(status="scored", output=output, derived=scoring.derived, headline=scoring.headline,
                   passed=scoring.passed, label=scoring.label, tag=scoring.tag, raw_reply=json.dumps(output),
                   **common)


def sampled_row(store: Store, rubric: Rubric, judged: list[tuple[str, dict[str, Any] | None]], *,
                channel: str = CHANNEL, team: str = TEAM) -> Judgment:
    """A row of `channel` judged once per (judge model, output) in `judged`, its samples and its combined verdict."""
    jury = "+".join(dict.fromkeys(model for model, _ in judged))
    fields = {"rubric_name": rubric.name, "rubric_version": rubric.version, "rubric_hash": rubric.content_hash}
    run = create_run(store, **fields, judge_model=jury, source="slack", channel_id=channel, team_id=team,
                           samples=len(judged))
    add_rows(store, [{**fields, "judge_model": jury, "run_id": run.id, "row_number": 1, "status": "pending",
                     "question": "How do I register?", "reference": "myStudies", "answer": "Use myStudies.",
                     "channel_id": channel, "team_id": team, "user_id": "U0ASKER"}])
    row = first_judgment(store, run.id)
    assert row is not None
    numbers: Counter[str] = Counter()
    made = []
    for model, output in judged:
        numbers[model] += 1
        verdict = verdict_of(rubric, model, output)
        store_sample(store, row, run.id, model, numbers[model], verdict)
        made.append(Sampled(model, numbers[model], verdict))
    assert save_verdict(store, row.id, combine(made, judge_model=jury), cache_key=f"row{row.id}")
    saved = get_judgment(store, row.id)
    assert saved is not None and saved.samples == len(judged)
    return saved


def store_sample(store: Store, row: Judgment, run_id: int, model: str, number: int, verdict: Verdict) -> None:
    save_sample(store, judgment_id=row.id, run_id=run_id, judge_model=model, sample=number, verdict=verdict,
                cache_key=f"row{row.id}-{model}-{number}")


def headline_text(card_message: dict[str, Any]) -> str:
    """The text of the section under the title: the verdict, its score, and how the samples went."""
    return card_message["blocks"][1]["text"]["text"]


def card_message(judgment: Judgment, rubric: Rubric, samples: list[JudgmentSample]) -> dict[str, Any]:
    card = result_card(judgment, rubric, samples=samples)
    for block in card.blocks:
        block.to_dict()  # slack_sdk checks Block Kit's rules
    return card.as_message()


# --- the card line and Details ---------------------------------------------------------------------------------


def test_three_agreeing_samples_say_so_under_the_headline(store, rubrics):
    eth = rubrics.get("eth")
    row = sampled_row(store, eth, [("judge-a", ETH["Correct"])] * 3)
    samples = samples_of(store, row.id)
    assert [sample.sample for sample in samples] == [1, 2, 3]
    text = headline_text(card_message(row, eth, samples))
    assert text.splitlines() == ["✅ *Correct · correctness 2/2 · completeness 2/2*", "100/100 · passed",
                                 "3 samples · 3/3 agree"]


def test_split_samples_show_the_split_and_the_failed_ones(store, rubrics):
    eth = rubrics.get("eth")
    row = sampled_row(store, eth, [("judge-a", ETH["Correct"]), ("judge-a", ETH["Generic"]),
                                   ("judge-a", ETH["Correct"]), ("judge-a", None)])
    assert row.status == "scored" and row.unsure and row.tag == "Correct"
    text = headline_text(card_message(row, eth, samples_of(store, row.id)))
    assert text.splitlines()[-1] == "⚠ split 2/1: Correct, Generic · 1 failed"


def test_one_judgment_has_no_samples_line(store, rubrics):
    eth = rubrics.get("eth")
    row = sampled_row(store, eth, [("judge-a", ETH["Correct"])])  # samples == 1: nothing changes
    assert headline_text(card_message(row, eth, samples_of(store, row.id))) == (
        "✅ *Correct · correctness 2/2 · completeness 2/2*\n100/100 · passed")


def test_hostile_tags_and_model_names_make_no_live_mention_or_code_in_the_card_line(store, rubrics):
    eth = rubrics.get("eth")
    hostile = {**ETH["Generic"], "result_tag": HOSTILE_TAG}
    row = sampled_row(store, eth, [("m1", ETH["Correct"]), (HOSTILE_MODEL, hostile), ("m1", ETH["Correct"])])
    line = headline_text(card_message(row, eth, samples_of(store, row.id))).splitlines()[-1]
    assert line.startswith("⚠ split 2/1: Correct, ")
    assert "<!channel>" not in line and "<!here>" not in line and "<@U0BOSS>" not in line and "```" not in line
    assert "&lt;!channel&gt;" in line and "&lt;!here&gt;" in line and "&lt;@U0BOSS&gt;" in line
    assert "3 samples from m1, m2" in line


def test_details_lists_every_sample_with_its_judge_status_score_and_error(store, rubrics):
    eth = rubrics.get("eth")
    row = sampled_row(store, eth, [("judge-a", ETH["Correct"]), ("judge-b", ETH["Generic"]), ("judge-a", None)])
    view = reply_view(row, samples_of(store, row.id)).to_dict()
    listed = view["blocks"][1]["text"]["text"].splitlines()
    assert listed == [
        "*3 samples*",
        "• `judge-a` #1 · *scored* · 100/100 · pass · Correct",
        "• `judge-b` #1 · *scored* · 25/100 · fail · Generic",
        "• `judge-a` #2 · *error* · judge-a timed out &lt;!channel&gt;",
    ]
    assert "```" in view["blocks"][2]["text"]["text"]  # the reply follows, as before
    assert "samples*" not in json.dumps(reply_view(row).to_dict())  # without samples, none are listed


# --- through the bot --------------------------------------------------------------------------------------------


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """action_id -> value of every button on a message."""
    return {element["action_id"]: element.get("value") for block in message.get("blocks") or []
            if block["type"] == "actions" for element in block["elements"]}


async def card_of(slack_server: FakeSlackServer, channel: str = CHANNEL, *, count: int = 1) -> dict[str, Any]:
    """The `count`-th message of `channel` that has become a card with buttons."""
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        cards = sorted((m for (c, _), m in list(slack_server.messages.items()) if c == channel and buttons(m)),
                       key=lambda m: float(m["ts"]))
        if len(cards) >= count:
            return cards[count - 1]
        assert asyncio.get_running_loop().time() < deadline, f"no card #{count} in {channel}"
        await asyncio.sleep(0.01)


def blocks_of(call: Any) -> str:
    blocks = call.params.get("blocks")
    return blocks if isinstance(blocks, str) else json.dumps(blocks, ensure_ascii=False)


async def judged_card(slack: SlackSide, slack_server: FakeSlackServer, judge_server: FakeJudgeServer, command: str = INLINE, *,
                      reply: Reply | None = None) -> dict[str, Any]:
    judge_server.enqueue(reply or eth_reply("Correct"))
    await slack.command(command)
    return await card_of(slack_server)


async def open_form(slack: SlackSide, slack_server: FakeSlackServer, card: dict[str, Any], *, count: int = 1) -> dict[str, Any]:
    """Click Correct it on `card` and return the form the bot opened."""
    await slack.click(CORRECT, buttons(card)[CORRECT], channel=CHANNEL, message_ts=card["ts"])
    return (await slack_server.await_for("views.open", count=count))[count - 1].params["view"]


async def test_sampled_card_keeps_its_line_after_a_vote_and_details_lists_the_samples(slack, slack_server,
                                                                                      bot_settings, rubrics):
    store = Store.open(bot_settings.db_url)
    row = sampled_row(store, rubrics.get("eth"), [("judge-a", ETH["Correct"]), ("judge-a", ETH["Generic"]),
                                                  ("judge-a", ETH["Correct"])])
    client = AsyncWebClient(token=slack_server.bot_token, base_url=slack_server.api_url)
    posted = await client.chat_postMessage(channel=CHANNEL, text="the card")
    set_run_message(store, row.run_id, posted["ts"])
    await slack.click("judgebot_agree", str(row.id), channel=CHANNEL, message_ts=posted["ts"])
    [update] = await slack_server.await_for("chat.update", lambda c: c.params.get("ts") == posted["ts"])
    assert "⚠ split 2/1: Correct, Generic" in blocks_of(update)
    await slack.click(DETAILS, str(row.id), channel=CHANNEL, message_ts=posted["ts"])
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    shown = json.dumps(view, ensure_ascii=False)
    assert "*3 samples*" in shown and "`judge-a` #3 · *scored* · 100/100 · pass · Correct" in shown


async def test_correct_it_opens_a_form_with_the_judges_values(slack, slack_server, judge_server):
    card = await judged_card(slack, slack_server, judge_server)
    assert CORRECT in buttons(card)
    view = await open_form(slack, slack_server, card)
    assert view["callback_id"] == CORRECTION and "#1" in view["blocks"][0]["text"]["text"]
    fields = inputs(view)
    assert list(fields) == ["correctness", "completeness", "result tag", "Note"]
    correctness = fields["correctness"]["element"]
    assert [o["value"] for o in correctness["options"]] == ["0", "1", "2"]
    assert correctness["initial_option"]["value"] == "2"
    assert fields["completeness"]["element"]["initial_option"]["value"] == "2"
    tag = fields["result tag"]["element"]
    assert [o["text"]["text"] for o in tag["options"]] == ["Correct", "Generic", "Refusal", "Hallucination"]
    assert tag["initial_option"]["text"]["text"] == "Correct"
    assert fields["Note"]["optional"] and fields["Note"]["element"]["multiline"]


async def test_a_correction_is_saved_shown_on_the_card_and_replaced_by_the_next(slack, slack_server, judge_server,
                                                                                bot_settings):
    card = await judged_card(slack, slack_server, judge_server)
    view = await open_form(slack, slack_server, card)
    answer = await submit_form(slack, view, {"correctness": "0", "completeness": "1", "result tag": "Generic"},
                               note="names no ETH tool")
    assert answer.status == 200 and not answer.body
    [update] = await slack_server.await_for("chat.update", lambda c: c.params.get("ts") == card["ts"]
                                            and "corrected by" in blocks_of(c))
    assert "corrected by <@U0USER>: correctness 0, completeness 1, Generic" in blocks_of(update)
    await slack_server.await_for("response_url", lambda c: c.params.get("text") == "Saved your correction of #1.")
    store = Store.open(bot_settings.db_url)
    [label] = labels_of(store, 1)
    assert (label.user_id, label.source, label.team_id, label.channel_id) == ("U0USER", "correction", TEAM, CHANNEL)
    assert label.values == {"correctness": 0, "completeness": 1, "result_tag": "Generic"}
    assert (label.passed, label.tag, label.headline, label.note) == (False, "Generic", 25.0, "names no ETH tool")
    assert label.pass_from == "rule"  # eth's pass rule on the person's own values
    assert label.judge_model == "judge-test"

    view = await open_form(slack, slack_server, card, count=2)
    await submit_form(slack, view, {"completeness": "0", "result tag": "Refusal"})
    await slack_server.await_for("response_url",
                                 lambda c: c.params.get("text") ==
                                 "Replaced your earlier label of this case with your correction of #1.")
    [replaced] = labels_of(store, 1)
    assert replaced.id == label.id and replaced.values == {"correctness": 2, "completeness": 0, "result_tag": "Refusal"}
    assert (replaced.tag, replaced.passed, replaced.note) == ("Refusal", False, None)

    view = await open_form(slack, slack_server, card, count=3)
    await submit_form(slack, view, {"result tag": "Hallucination", "correctness": "0"}, user="U0SECOND")
    await slack_server.await_for("chat.update", lambda c: c.params.get("ts") == card["ts"] and
                                 "corrected by <@U0SECOND>: correctness 0, Hallucination (+1 more)" in blocks_of(c))
    assert [found.user_id for found in labels_of(store, 1)] == ["U0USER", "U0SECOND"]


async def test_values_out_of_range_get_an_error_on_their_field_and_nothing_is_saved(slack, slack_server,
                                                                                    judge_server, bot_settings):
    card = await judged_card(slack, slack_server, judge_server)
    view = await open_form(slack, slack_server, card)
    forged = await submit_form(slack, view, {"correctness": "7", "result tag": "99"})
    assert forged.body["response_action"] == "errors"
    assert set(forged.body["errors"]) == {inputs(view)["correctness"]["block_id"], inputs(view)["result tag"]["block_id"]}
    assert "from 0 to 2" in forged.body["errors"][inputs(view)["correctness"]["block_id"]]

    judge_server.enqueue(Reply.json(BENCHMARK))
    await slack.command("benchmark What is 2+2? || 4 || 4")
    bench_card = await card_of(slack_server, count=2)
    bench_view = await open_form(slack, slack_server, bench_card, count=2)
    overall = inputs(bench_view)["Overall"]
    assert overall["element"]["type"] == "plain_text_input" and overall["element"]["initial_value"] == "4.5"
    for typed in ("9", "0.5", "four", "nan"):
        answer = await submit_form(slack, bench_view, {"Overall": typed})
        assert answer.body["errors"] == {overall["block_id"]: "A number from 1 to 5."}, typed
    assert labels_of(Store.open(bot_settings.db_url), 1) == labels_of(Store.open(bot_settings.db_url), 2) == []
    accepted = await submit_form(slack, bench_view, {"Overall": "3,5"})
    assert accepted.status == 200 and not accepted.body
    await slack_server.await_for("response_url", lambda c: c.params.get("text") == "Saved your correction of #2.")
    [label] = labels_of(Store.open(bot_settings.db_url), 2)
    assert label.values["Overall"] == 3.5 and label.values["Factual Accuracy"] == 5


async def test_a_correction_from_another_workspace_or_for_another_channels_judgment_is_refused(
        slack, slack_server, judge_server, bot_settings, rubrics):
    card = await judged_card(slack, slack_server, judge_server)
    view = await open_form(slack, slack_server, card)
    store = Store.open(bot_settings.db_url)
    elsewhere = sampled_row(store, rubrics.get("eth"), [("judge-a", ETH["Correct"])] * 2, channel="C0OTHER")
    seal = FormSeal(SIGNING_SECRET)
    attempts = {
        "another workspace": await submit_form(slack, view, {"result tag": "Generic"}, team="T0OTHER"),
        "another channel": await submit_form(slack, view, {"result tag": "Generic"}, metadata=seal.seal(
            CorrectionContext(team_id=TEAM, channel_id=CHANNEL, judgment_id=elsewhere.id))),
        "another workspace's judgment": await submit_form(slack, view, metadata=seal.seal(
            CorrectionContext(team_id="T0OTHER", channel_id="C0OTHER", judgment_id=elsewhere.id))),
        "altered": await submit_form(slack, view, metadata=view["private_metadata"].replace('"judgment_id":1',
                                                                                          f'"judgment_id":{elsewhere.id}')),
    }
    for why, answer in attempts.items():
        assert answer.body["response_action"] == "errors", why
        assert list(answer.body["errors"]) == ["note"] and len(answer.body["errors"]["note"]) <= 150, why
    assert "another workspace" in attempts["another workspace"].body["errors"]["note"]
    assert "not made in the channel" in attempts["another channel"].body["errors"]["note"]
    await asyncio.sleep(0.2)
    assert labels_of(store, 1) == labels_of(store, elsewhere.id) == []
    assert not [c for c in slack_server.calls_to("chat.update") if "corrected by" in blocks_of(c)]


async def test_correct_it_clicked_elsewhere_never_opens_the_form(slack, slack_server, judge_server):
    card = await judged_card(slack, slack_server, judge_server)
    await slack.click(CORRECT, buttons(card)[CORRECT], channel=CHANNEL, message_ts=card["ts"], team="T0OTHER",
                      user_team="T0OTHER")
    await slack.click(CORRECT, buttons(card)[CORRECT], channel="C0OTHER", message_ts=card["ts"])
    await slack_server.await_for("response_url", lambda c: "cannot find this judgment" in c.params.get("text", ""),
                                 count=2)
    assert slack_server.calls_to("views.open") == []


# --- a shared file's human_ columns, as people spell them ------------------------------------------------------


async def test_a_shared_files_scores_on_the_benchmark_rubric_are_read_by_any_spelling(slack, slack_server,
                                                                                      judge_server, bot_settings):
    import sqlite3

    from tests.support.replies import triple_of
    from tests.support.slack_files import blocks_text, finished_thread, share, summaries

    judge = {"A1": 5, "A2": 4, "A3": 4}  # Factual Accuracy; the other four parameters 4 (weighted: 4.4, 4.0, 4.0)
    judge_server.responder = lambda body: Reply.json({**BENCHMARK, "Factual Accuracy": judge[triple_of(body)[2]],
                                                      "Overall": 4})
    content = ("question,reference,answer,Human Factual-Accuracy,human_relevance,HUMAN clarity,"
               "human_Language Consistency,human-conciseness\n"
               "Q1?,The facts.,A1,4,4,4,4,4\n"   # people pass it (4.0)
               "Q2?,The facts.,A2,2,3,3,3,3\n"   # people fail it (2.6)
               "Q3?,The facts.,A3,NaN,4,4,4,4\n")  # refused: never read as a label
    event = await share(slack, slack_server, content.encode(), text="benchmark")
    await finished_thread(slack_server, CHANNEL, event["ts"])

    card = blocks_text(summaries(slack_server, CHANNEL, event["ts"])[0])
    assert "The judge against the file's labels* (2 labels)" in card
    # Wilson 95% for 1/2 (statsmodels proportion_confint(1, 2, method="wilson")): 0.0945-0.9055
    assert "*agreement on pass/fail* 50% (1/2), 95% CI 9%-91% (Wilson)" in card
    # Factual Accuracy: judge 5 and 4 against people's 4 and 2: 1.50 higher on average
    assert "`Factual Accuracy`: the judge scores 1.50 higher, mean absolute difference 1.50 (2 labels)" in card
    assert "row 4: label not read: Human Factual-Accuracy 'NaN' is not a number" in card
    assert "names no field" not in card
    db = sqlite3.connect(bot_settings.judgebot_db)
    try:
        saved = db.execute("SELECT user_id, passed, pass_from, \"values\" FROM label ORDER BY id").fetchall()
    finally:
        db.close()
    assert [(user, passed, source) for user, passed, source, _ in saved] == [("U0USER", 1, "rule"),
                                                                           ("U0USER", 0, "rule")]
    assert json.loads(saved[1][3]) == {"Factual Accuracy": 2.0, "Relevance": 3.0, "Clarity": 3.0,
                                       "Language Consistency": 3.0, "Conciseness": 3.0}
