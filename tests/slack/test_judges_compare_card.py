"""`/judge judges compare <model>` through the Slack layer: admins only, both judges on the channel's labels and recent
judgments in the background, and Use this judge in this channel making the candidate the channel's judge."""

from __future__ import annotations

import json

from bot.records import Verdict
from bot.slack.views.judges_compare import JUDGE_KEEP, JUDGE_USE
from bot.store import (
    Store,
    add_rows,
    channel_judge,
    create_run,
    iter_judgments,
    judge_of_channel,
    save_label,
    save_verdict,
    set_cost_limits,
    set_default_rubric,
)
from tests.support.replies import eth_reply, triple_of
from tests.support.slack_messages import blocks_json, buttons
from tests.support.slack_side import TEAM

CHANNEL = "C0GENERAL"


def labeled(store: Store, rubrics) -> None:
    """Four judgments of the channel by judge-test, all Correct; people say the two "Maybe" answers are Generic."""
    eth = rubrics.get("eth")
    common = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-test"}
    run = create_run(store, **common, channel_id=CHANNEL, team_id=TEAM)
    answers = ["Use myStudies.", "Use ETHIS.", "Maybe ask <!channel>.", "Maybe ask around."]
    add_rows(store, [{**common, "run_id": run.id, "row_number": n, "status": "pending", "question": f"Q{n}?",
                     "reference": "In myStudies.", "answer": answer, "channel_id": CHANNEL, "team_id": TEAM}
                    for n, answer in enumerate(answers, 1)])
    output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                  label="Correct", tag="Correct", raw_reply="{}", prompt_hash="p" * 32,
                                                  **common), cache_key=f"k{row.id}")
        generic = row.answer.startswith("Maybe")
        save_label(store, judgment=row, user_id="U0USER", source="correction", values={}, passed=not generic,
                   pass_from="given", tag="Generic" if generic else "Correct", headline=None, note=None)


def two_judges(body: dict):
    """judge-test passes everything; judge-new calls a "Maybe" answer Generic."""
    answer = triple_of(body)[2]
    return eth_reply("Generic" if body["model"] == "judge-new" and answer.startswith("Maybe") else "Correct")


async def test_judges_compare_posts_both_judges_and_use_sets_the_channels_judge(slack, slack_server, http_bot,
                                                                                judge_server, rubrics) -> None:
    store = http_bot.context.store
    labeled(store, rubrics)
    judge_server.responder = two_judges

    await slack.command("judges compare judge-new eth")  # Bob is no admin
    assert "Only the workspace's admins" in blocks_json((await slack_server.await_for("response_url"))[0].params)
    await slack.command("judges compare judge-new eth", user="U0ADMIN")
    [card] = await slack_server.await_for("chat.postMessage", lambda c: JUDGE_USE in blocks_json(c.params),
                                          timeout=30)
    text = blocks_json(card.params)
    assert card.params.get("thread_ts")
    # against people: judge-test 2 of 4, judge-new 4 of 4; judge-new right where the other was wrong twice
    assert "judge-test* (in use) 50% (2/4)" in text and "judge-new* (candidate) 100% (4/4)" in text
    assert "right where the other was wrong: judge-new 2, judge-test 0" in text
    # on the recent judgments (the same four): the same pass/fail on 2 of 4, two flips pass -> fail
    assert "the same pass/fail on 50% (2/4), 95% CI " in text and "pass → fail 2, fail → pass 0" in text
    assert text.count("; kappa ") == 3 and "; kappa between them " in text  # each against people, and between them
    assert "<!channel>" not in text
    value = buttons(card.params)[JUDGE_USE]
    choice = json.loads(value)
    assert (choice["channel"], choice["model"], choice["rubric"]) == (CHANNEL, "judge-new", "eth")

    await slack.click(JUDGE_USE, value, channel="C0OTHER", message_ts=card.params["thread_ts"], user="U0ADMIN")
    said = (await slack_server.await_for("response_url", count=2))[-1].params
    assert "not of this channel" in blocks_json(said) and judge_of_channel(store, team_id=TEAM,
                                                                            channel_id=CHANNEL) is None
    await slack.click(JUDGE_USE, value, channel=CHANNEL, message_ts=card.params["thread_ts"], user="U0ADMIN")
    await slack_server.await_for("chat.postMessage", lambda c: "set this channel's judge to" in blocks_json(c.params))
    assert judge_of_channel(store, team_id=TEAM, channel_id=CHANNEL) == "judge-new"

    asked = len(judge_server.bodies())
    await slack.command("eth Where? || In myStudies. || Maybe later.")
    await slack_server.await_for("chat.update", lambda c: "Generic" in str(c.params.get("text")), timeout=20)
    assert judge_server.bodies()[asked]["model"] == "judge-new"


async def test_the_judge_chosen_is_kept_with_the_comparisons_figures_and_only_admins_of_this_workspace_choose(
        slack, slack_server, http_bot, judge_server, rubrics) -> None:
    store = http_bot.context.store
    labeled(store, rubrics)
    judge_server.responder = two_judges
    set_default_rubric(store, team_id=TEAM, channel_id=CHANNEL, rubric_name="eth", user_id="U0ADMIN")

    await slack.command("judges compare judge-new", user="U0ADMIN")  # no rubric named: the channel's default
    [card] = await slack_server.await_for("chat.postMessage", lambda c: JUDGE_USE in blocks_json(c.params),
                                          timeout=30)
    assert "(`eth`)" in blocks_json(card.params)
    value, ts = buttons(card.params)[JUDGE_USE], card.params["thread_ts"]

    async def answer(count: int) -> str:
        return blocks_json((await slack_server.await_for("response_url", count=count))[-1].params)

    await slack.click(JUDGE_USE, value, channel=CHANNEL, message_ts=ts)  # Bob is no admin
    assert "Only the workspace's admins" in await answer(1)
    await slack.click(JUDGE_USE, value, channel=CHANNEL, message_ts=ts, user="U0ADMIN", team="T0OTHER",
                      user_team="T0OTHER")  # an admin of another organisation, in a shared channel
    assert "not of this channel" in await answer(2)
    await slack.click(JUDGE_KEEP, value, channel=CHANNEL, message_ts=ts, user="U0ADMIN")
    assert "stays as it is" in await answer(3)
    assert channel_judge(store, team_id=TEAM, channel_id=CHANNEL) is None

    await slack.click(JUDGE_USE, value, channel=CHANNEL, message_ts=ts, user="U0ADMIN")
    await slack_server.await_for("chat.postMessage", lambda c: "set this channel's judge to" in blocks_json(c.params))
    choice = channel_judge(store, team_id=TEAM, channel_id=CHANNEL)
    assert choice is not None and (choice.judge_model, choice.previous, choice.set_by) == ("judge-new", None, "U0ADMIN")
    assert choice.note is not None and choice.note.startswith("chosen after /judge judges compare on eth: ")
    assert "against people judge-new 100% (4/4)" in choice.note and "judge-test 50% (2/4)" in choice.note
    assert "on 4 recent judgments the same pass/fail 50% (2/4)" in choice.note

    await slack.command("default judge")
    shown = await answer(4)
    assert "own judge, `judge-new`" in shown and "against people judge-new 100% (4/4)" in shown


async def test_judges_compare_asks_no_judge_over_a_spent_budget_or_without_a_rubric(slack, slack_server, http_bot,
                                                                                    judge_server, rubrics) -> None:
    store = http_bot.context.store
    labeled(store, rubrics)

    await slack.command("judges compare judge-new", user="U0ADMIN")  # no rubric named, and no default here
    await slack_server.await_for("response_url")
    set_cost_limits(store, team_id=TEAM, channel_id=CHANNEL, user_id="U0ADMIN", monthly_budget=0.0)
    await slack.command("judges compare judge-new eth", user="U0ADMIN")
    answers = [blocks_json(call.params) for call in await slack_server.await_for("response_url", count=2)]
    assert "Name the rubric to compare the judges on" in answers[0] and "no default rubric" in answers[0]
    assert "This channel's monthly budget is spent" in answers[1]
    assert judge_server.bodies() == [] and not slack_server.calls_to("chat.postMessage")


async def test_judges_compare_is_weighed_by_the_budget_rule_and_judges_nothing_its_estimate_would_take_over(
        bot_settings, slack_server, judge_server, rubrics) -> None:
    from sqlmodel import select

    from bot.slack.server import start_bot
    from bot.store import COST_NOT_AGREED
    from bot.store.tables.core import RUN
    from tests.support.slack_side import SIGNING_SECRET, SlackSide

    running = await start_bot(bot_settings.model_copy(update={"judge_model": "gpt-4o"}), host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        store = running.context.store
        labeled(store, rubrics)
        set_cost_limits(store, team_id=TEAM, channel_id=CHANNEL, user_id="U0ADMIN", monthly_budget=0.001)  # not spent
        await slack.command("judges compare gpt-4o-mini eth", user="U0ADMIN")
        [told] = await slack_server.await_for("response_url", lambda c: "budget" in blocks_json(c.params), timeout=20)
        text = blocks_json(told.params)
        assert "Judging 8 cases with `gpt-4o` (about $0.0" in text, text
        assert "would take this channel over its monthly budget ($0.0000 of $0.0010 spent this month)" in text
        assert "`/judge budget USD`" in text
        assert judge_server.bodies() == []  # neither judge asked: the estimate alone refused it
        with store.session() as session:
            checks = [(run.status, run.stop_reason) for run in session.execute(select(RUN).where(RUN.c.source == "check"))]
        assert checks == [("cancelled", COST_NOT_AGREED)]
    finally:
        await running.stop()
