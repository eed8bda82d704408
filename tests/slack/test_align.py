"""`/judge align` through the Slack layer: admins only, the channel's labels measured on held-out cases in the
background, the card with Download, and Use in this channel making the revision the channel's rubric."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine
from sqlmodel import select

from bot.digest import Period, build_digest
from bot.records import Verdict
from bot.slack.views.align import ALIGN_DISCARD, ALIGN_DOWNLOAD, ALIGN_USE
from bot.store import Store, add_rows, create_run, get_run, iter_judgments, revision_of, save_label, save_verdict
from bot.store.tables.core import RUN
from tests.support.learning_judge import LearningJudge
from tests.support.slack_messages import blocks_json, buttons
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SlackSide

CHANNEL = "C0GENERAL"


def labeled(store: Store, rubrics: Any, *, channel: str = CHANNEL) -> None:
    """30 eth judgments of the channel, all passed as Correct by the judge; people say the 15 answers that begin
    "Maybe" are Generic."""
    eth = rubrics.get("eth")
    common = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-test"}
    run = create_run(store, **common, channel_id=channel, team_id="T0TEST")
    answers = [f"Use myStudies, case {n}." for n in range(15)] + [f"Maybe ask around, case {n}." for n in range(15)]
    add_rows(store, [{**common, "run_id": run.id, "row_number": n + 2, "status": "pending", "question": f"Q{n}?",
                     "reference": "In myStudies.", "answer": answer, "channel_id": channel, "team_id": "T0TEST"}
                    for n, answer in enumerate(answers)])
    output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                  label="Correct", tag="Correct", raw_reply="{}", prompt_hash="p" * 32,
                                                  **common), cache_key=f"k{row.id}")
        generic = row.answer.startswith("Maybe")
        values = {"result_tag": "Generic" if generic else "Correct", "correctness": 0 if generic else 2,
                  "completeness": 1 if generic else 2}
        save_label(store, judgment=row, user_id="U0USER", source="correction", values=values, passed=not generic,
                   pass_from="rule", tag=values["result_tag"], headline=None,
                   note="too vague: <!channel>" if row.row_number == 17 else None)


async def test_align_in_slack_proposes_a_revision_that_admins_can_keep_for_the_channel(
        slack: SlackSide, slack_server: FakeSlackServer, http_bot, judge_server, rubrics) -> None:
    store = http_bot.context.store
    with time_machine.travel(datetime.now(UTC) - timedelta(days=8), tick=True):
        labeled(store, rubrics)
    judge_server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"})

    await slack.command("align eth")  # Bob is no admin
    said = (await slack_server.await_for("response_url"))[0].params
    assert "Only the workspace's admins" in blocks_json(said)
    await slack.command("align eth", user="U0ADMIN")
    card = (await slack_server.await_for("chat.postMessage", lambda c: "judgebot_align_use" in blocks_json(c.params),
                                         timeout=30))[0]
    text = blocks_json(card.params)
    assert card.params.get("thread_ts")  # in the thread of the message that said it began
    assert "fixed 15, broken 0 (McNemar p < 0.001)" in text and "50% (15/30)" in text and "100% (30/30)" in text
    assert text.count("; kappa ") == 2  # each side's kappa beside its agreement
    assert "&lt;!channel&gt;" in text and "<!channel>" not in text  # people's notes are escaped
    revision_id = buttons(card.params)[ALIGN_USE]
    ts = card.params["thread_ts"]

    await slack.click(ALIGN_DOWNLOAD, revision_id, channel=CHANNEL, message_ts=ts)
    [upload] = await slack_server.await_for("files.completeUploadExternal")
    assert upload.params["channel_id"] == CHANNEL

    await slack.click(ALIGN_USE, revision_id, channel=CHANNEL, message_ts=ts)  # Bob: refused
    await slack.click(ALIGN_USE, revision_id, channel="C0OTHER", message_ts=ts, user="U0ADMIN")  # elsewhere
    answers = [call.params for call in await slack_server.await_for("response_url", count=3)][1:]
    assert "Only the workspace's admins" in blocks_json(answers[0]) and "not of this channel" in blocks_json(answers[1])
    assert revision_of(store, int(revision_id)).state == "proposed"  # type: ignore[union-attr]

    await slack.click(ALIGN_USE, revision_id, channel=CHANNEL, message_ts=ts, user="U0ADMIN")
    await slack_server.await_for("chat.postMessage", lambda c: "this channel's rubric" in blocks_json(c.params))
    assert revision_of(store, int(revision_id)).state == "accepted"  # type: ignore[union-attr]
    await slack.click(ALIGN_DISCARD, revision_id, channel=CHANNEL, message_ts=ts, user="U0ADMIN")  # decided already
    assert "decided already" in blocks_json((await slack_server.await_for("response_url", count=4))[-1].params)

    # the alignment's runs are kept under the channel's own check key: out of its figures, in its monthly spend
    with store.session() as session:
        keys = {run.channel_id for run in session.execute(select(RUN).where(RUN.c.source == "check"))}
    assert keys == {"#calibration-check C0GENERAL"}

    # a card judged here now uses the revision: its examples reach the judge, which learns "Maybe" is Generic
    await slack.command("eth Where do I register? || In myStudies. || Maybe ask around, new case.")
    done = (await slack_server.await_for("chat.update", lambda c: "Generic" in str(c.params.get("text")),
                                         timeout=20))[0]
    assert "eth 1.1" in blocks_json(done.params)
    # another channel still judges with the rubric file as it is
    await slack.command("eth Where do I register? || In myStudies. || Maybe ask around, other.", channel="C0OTHER")
    other = (await slack_server.await_for("chat.update", lambda c: c.params.get("channel") == "C0OTHER",
                                          timeout=20))[0]
    assert "Correct" in str(other.params.get("text")) and "eth 1.0" in blocks_json(other.params)

    # the digest names the change of rubric as the channel's revision (the labeled rows were judged the week before)
    digest = build_digest(store, channel_id=CHANNEL, period=Period.ending(datetime.now(UTC)), team_id="T0TEST")
    [change] = [change for change in digest.changes if change.what == "rubric eth"]
    assert change.before == "version 1.0" and change.after.startswith("version 1.1, this channel's aligned revision")


async def test_a_file_shared_in_a_channel_with_a_revision_is_judged_with_it(slack: SlackSide, slack_server,
                                                                             http_bot, judge_server, rubrics) -> None:
    import yaml

    from bot.rubric.examples import Example
    from bot.store import decide_revision, propose_revision
    from bot.trust.align import candidate_rubric
    from tests.support.replies import examples_of
    from tests.support.slack_files import finished_thread, share

    eth = rubrics.get("eth")
    example = Example(question="Q?", reference="In myStudies.", answer="Maybe ask around.",
                      expected={"result_tag": "Generic"})
    revision_rubric = candidate_rubric(eth, [example], version="1.1")
    content = yaml.safe_dump(revision_rubric.model_dump(mode="json", by_alias=True, exclude_defaults=True),
                             allow_unicode=True, sort_keys=False)
    store = http_bot.context.store
    proposed = propose_revision(store, team_id="T0TEST", channel_id=CHANNEL, rubric_name="eth", version="1.1",
                                content_hash=revision_rubric.content_hash, based_on=eth.content_hash, content=content,
                                figures={}, user_id="U0ADMIN")
    assert decide_revision(store, revision_id=proposed.id, team_id="T0TEST", channel_id=CHANNEL, accept=True,
                           user_id="U0ADMIN") is not None
    judge_server.responder = LearningJudge({"Use": "Correct", "Maybe": "Correct"})

    event = await share(slack, slack_server, b"question,reference,answer\nWhere?,In myStudies.,Maybe ask a friend.\n",
                        text="eth")
    await finished_thread(slack_server, CHANNEL, event["ts"])
    [body] = judge_server.bodies()
    assert examples_of(body) == [("Maybe ask around.", {"result_tag": "Generic"})]
    assert get_run(store, 1) is not None and get_run(store, 1).rubric_version == "1.1"  # type: ignore[union-attr]


async def test_align_is_weighed_by_the_budget_rule_and_judges_nothing_its_estimate_would_take_over(
        bot_settings, slack_server: FakeSlackServer, judge_server, rubrics) -> None:
    from bot.slack.server import start_bot
    from bot.store import set_cost_limits
    from tests.support.slack_side import SIGNING_SECRET

    running = await start_bot(bot_settings.model_copy(update={"judge_model": "gpt-4o"}), host="127.0.0.1")
    try:
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        store = running.context.store
        labeled(store, rubrics)
        set_cost_limits(store, team_id="T0TEST", channel_id=CHANNEL, user_id="U0ADMIN", monthly_budget=0.001)
        await slack.command("align eth", user="U0ADMIN")
        [told] = await slack_server.await_for("response_url", lambda c: "budget" in blocks_json(c.params), timeout=20)
        text = blocks_json(told.params)
        assert "Judging 30 cases with `gpt-4o` (about $" in text, text
        assert "would take this channel over its monthly budget" in text
        assert judge_server.bodies() == []
        assert not [c for c in slack_server.calls_to("chat.postMessage") if ALIGN_USE in blocks_json(c.params)]
    finally:
        await running.stop()
