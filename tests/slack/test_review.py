"""The review queue through the Slack layer: `/judge review` offers each case to one reviewer at a time, in its own
channel; Agree, Skip and a blind label form; reviewers and settings for admins only; and the nudge, sent once a day
across a restart and two bots on one database."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient
from sqlmodel import col, update

from bot.records import Verdict
from bot.slack.flows.review_nudge import NUDGE_EVENT
from bot.slack.server import start_bot
from bot.slack.views.review import REVIEW_AGREE, REVIEW_LABEL, REVIEW_SKIP, REVIEW_START
from bot.store import (
    ReviewCase,
    ReviewNudge,
    Store,
    add_rows,
    create_run,
    feedback_tally,
    get_judgment,
    iter_judgments,
    labels_of,
    open_cases,
    queue_state,
    review_case,
    review_setup,
    save_label,
    save_verdict,
    utcnow,
)
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from bot.trust.review import send_to_review
from tests.support.forms import inputs, submit_form
from tests.support.scripted_judge import Script
from tests.support.slack_files import blocks_text, finished_thread, share, summaries
from tests.support.slack_messages import blocks_json, buttons
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, TEAM, SlackSide

CHANNEL = "C0GENERAL"
COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "judge_model": "judge-test"}


def queued(store: Store, rubrics: Any, count: int, *, channel: str = CHANNEL, rate: float = 0,
           prefix: str = "Q") -> list[int]:
    """A run of `count` eth rows in `channel` (questions Q1, Q2, ...), unsure unless `rate` sends them to review at
    random; the case ids in order."""
    eth = rubrics.get("eth")
    common = {**COMMON, "rubric_version": eth.version, "rubric_hash": eth.content_hash}
    run = create_run(store, **common, channel_id=channel, team_id=TEAM)
    add_rows(store, [{**common, "run_id": run.id, "row_number": n, "status": "pending", "question": f"{prefix}{n} exams?",
                     "reference": "In myStudies.", "answer": f"A{n}", "channel_id": channel, "team_id": TEAM}
                    for n in range(1, count + 1)])
    for row in iter_judgments(store, run.id):
        output = {"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": "r"}
        assert save_verdict(store, row.id, Verdict(status="scored", output=output, headline=100.0, passed=True,
                                                  label="Correct", tag="Correct", raw_reply="{}", prompt_hash="p" * 32,
                                                  unsure=not rate, samples=3, **common), cache_key=f"k{row.id}")
    assert send_to_review(store, run, rate=rate).total == count
    return [case.id for case, _ in open_cases(store, team_id=TEAM, channel_id=channel)]


def side(slack_server: FakeSlackServer, port: int) -> SlackSide:
    """Slack's side of one of several bots."""
    return SlackSide(slack_server, url=f"http://127.0.0.1:{port}/slack/events", secret=SIGNING_SECRET)


async def reply(slack_server: FakeSlackServer, count: int) -> dict[str, Any]:
    return (await slack_server.await_for("response_url", count=count))[count - 1].params


async def test_each_case_goes_to_one_reviewer_and_agree_and_skip_move_on(slack: SlackSide, slack_server, http_bot,
                                                                          rubrics) -> None:
    store = http_bot.context.store
    cases = queued(store, rubrics, 3)
    queued(store, rubrics, 1, channel="C0OTHER")

    await slack.command("review")
    first = await reply(slack_server, 1)
    assert "Q1 exams?" in blocks_json(first) and "The judge said" in blocks_json(first) and "2 more wait" in blocks_json(first)
    assert buttons(first)[REVIEW_AGREE] == str(cases[0]) and REVIEW_SKIP in buttons(first)

    await slack.command("review", user="U0ADMIN")  # another reviewer: another case
    assert "Q2 exams?" in blocks_json(await reply(slack_server, 2))

    await slack.click(REVIEW_AGREE, str(cases[0]), channel=CHANNEL, message_ts="1.0", user="U0ADMIN")
    assert "no longer offered to you" in blocks_json(await reply(slack_server, 3))  # Bob's case
    await slack.click(REVIEW_AGREE, str(cases[0]), channel="C0OTHER", message_ts="1.0")
    assert "cannot find this case in this channel" in blocks_json(await reply(slack_server, 4))

    await slack.click(REVIEW_AGREE, str(cases[0]), channel=CHANNEL, message_ts="1.0")
    after = await reply(slack_server, 5)
    assert after["replace_original"] is True
    assert "Saved: you agree with the judge" in blocks_json(after) and "Q3 exams?" in blocks_json(after)  # Q2 is Ada's
    assert [case.id for case, _ in open_cases(store, team_id=TEAM, channel_id=CHANNEL)] == cases[1:]

    await slack.click(REVIEW_SKIP, str(cases[2]), channel=CHANNEL, message_ts="1.0")
    skipped = await reply(slack_server, 6)
    assert "Skipped" in blocks_json(skipped) and "No case of <#C0GENERAL> waits for your label" in blocks_json(skipped)
    state = queue_state(store, team_id=TEAM, channel_id=CHANNEL, since=utcnow() - timedelta(days=1))
    assert (state.open, state.labeled) == (2, 1)


async def test_a_case_not_answered_within_a_day_goes_to_the_next_reviewer(slack: SlackSide, slack_server, http_bot,
                                                                         rubrics) -> None:
    store = http_bot.context.store
    [case] = queued(store, rubrics, 1)
    await slack.command("review")
    assert buttons(await reply(slack_server, 1))[REVIEW_SKIP] == str(case)
    await slack.command("review", user="U0ADMIN")
    assert "No case of <#C0GENERAL> waits for your label (1 open" in blocks_json(await reply(slack_server, 2))
    with store.session() as session:  # Bob let it wait for a day
        session.execute(update(ReviewCase).where(col(ReviewCase.id) == case)
                        .values(offered_at=utcnow() - timedelta(days=1, minutes=1)))
        session.commit()
    await slack.command("review", user="U0ADMIN")
    assert buttons(await reply(slack_server, 3))[REVIEW_SKIP] == str(case)  # Ada's now
    await slack.click(REVIEW_AGREE, str(case), channel=CHANNEL, message_ts="1.0")
    assert "no longer offered to you" in blocks_json(await reply(slack_server, 4))  # Bob's old card does nothing


async def test_a_shared_files_summary_says_which_rows_went_to_review(slack: SlackSide, slack_server, http_bot,
                                                                    judge_server) -> None:
    rows = {f"A{n}": "Correct" for n in range(1, 6)} | {"A6": "Generic"}
    judge_server.responder = Script({"judge-test": {answer: [tag] for answer, tag in rows.items()}})
    content = "question,reference,answer,human_pass\n" + "".join(
        f"Q{n}?,In myStudies.,A{n},{'no' if n == 1 else ''}\n" for n in range(1, 7))
    event = await share(slack, slack_server, content.encode(), text="eth")
    await finished_thread(slack_server, CHANNEL, event["ts"])
    card = blocks_text(summaries(slack_server, CHANNEL, event["ts"])[0])
    # row 1: the uploader said fail where the judge passed; 3 of the 5 cases nobody labeled, at random
    assert "4 cases sent to review (1 contradicting a label, 3 at random)" in card
    assert "`/judge review` asks for your label" in card
    cases = open_cases(http_bot.context.store, team_id=TEAM, channel_id=CHANNEL)
    assert len(cases) == 4 and [judgment.question for case, judgment in cases if case.reason == "disagree"] == ["Q1?"]


async def test_sharing_the_same_file_again_adds_no_case_to_the_queue(slack: SlackSide, slack_server, http_bot,
                                                                       judge_server) -> None:
    judge_server.responder = Script({"judge-test": {f"A{n}": ["Correct"] for n in range(1, 11)}})
    content = ("question,reference,answer\n" + "".join(f"Q{n}?,In myStudies.,A{n}\n" for n in range(1, 11))).encode()
    store = http_bot.context.store
    event = await share(slack, slack_server, content, text="eth")
    await finished_thread(slack_server, CHANNEL, event["ts"])
    card = blocks_text(summaries(slack_server, CHANNEL, event["ts"])[0])
    assert "3 cases sent to review (3 at random)" in card  # 5% of 10 is less than 3
    assert len(open_cases(store, team_id=TEAM, channel_id=CHANNEL)) == 3

    for fresh in (False, True):  # from the cache, then judged anew by the same judge (its cache emptied)
        if fresh:
            with store.session() as session:
                session.execute(update(JudgmentTable).values(cache_key=None))
                session.commit()
        asked = len(judge_server.bodies())
        again = await share(slack, slack_server, content, text="eth")
        await finished_thread(slack_server, CHANNEL, again["ts"])
        card = blocks_text(summaries(slack_server, CHANNEL, again["ts"])[0])
        assert ":mag: no new case sent to review: all were judged before (each is drawn for review once)." in card
        assert "cases sent to review (" not in card
        assert len(judge_server.bodies()) == asked + (10 if fresh else 0)
        assert len(open_cases(store, team_id=TEAM, channel_id=CHANNEL)) == 3


async def test_calibration_shows_agreement_on_the_random_share_apart(slack: SlackSide, slack_server, http_bot,
                                                                    rubrics) -> None:
    store = http_bot.context.store
    picked = queued(store, rubrics, 4, rate=1.0)  # all four picked at random; the judge passed each
    chosen = queued(store, rubrics, 2, prefix="R")[4:]  # two unsure rows, chosen
    for case_id, passed in zip([*picked, *chosen], (True, True, True, False, False, False), strict=True):
        judgment = get_judgment(store, _judgment_of(store, case_id))
        assert judgment is not None
        save_label(store, judgment=judgment, user_id="U0USER", source="correction", values={}, passed=passed,
                   pass_from="given", tag=None, headline=None, note=None)
    await slack.command("calibration eth")
    shown = blocks_json(await reply(slack_server, 1))
    # random: 3 of 4 agree (Wilson 95%, statsmodels proportion_confint(3, 4, method="wilson"): 0.3006-0.9544);
    # all labels: 3 of 6
    assert ("on cases picked at random for review* random sample: 75% (3/4), 95% CI 30%-95% (Wilson); few labeled "
            "cases (n = 4); all labels: 50%") in shown


async def test_blind_review_hides_the_verdict_until_the_label_is_saved(slack: SlackSide, slack_server, http_bot,
                                                                       rubrics) -> None:
    store = http_bot.context.store
    [case] = queued(store, rubrics, 1)
    await slack.command("review blind on")  # Bob is no admin
    assert "Only the workspace's admins" in blocks_json(await reply(slack_server, 1))
    await slack.command("review blind on", user="U0ADMIN")
    said = await reply(slack_server, 2)
    assert said["response_type"] == "in_channel" and "turned blind review on" in blocks_json(said)
    assert review_setup(store, team_id=TEAM, channel_id=CHANNEL).blind

    await slack.command("review")
    shown = await reply(slack_server, 3)
    text = blocks_json(shown)
    assert "The judge said" not in text and "Correct" not in text and "Blind review" in text
    assert REVIEW_AGREE not in buttons(shown)
    await slack.click(REVIEW_LABEL, str(case), channel=CHANNEL, message_ts="1.0")
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    view = view if isinstance(view, dict) else json.loads(view)
    assert all("initial_option" not in block["element"] for block in inputs(view).values()
               if block["element"]["type"] == "static_select")  # nothing of the judge's verdict
    assert "Correct ·" not in json.dumps(view)
    answer = await submit_form(slack, view, {"correctness": "1", "completeness": "0", "result tag": "Generic"})
    assert answer.status == 200
    saved = await reply(slack_server, 4)
    assert "Saved your label" in blocks_json(saved) and "The judge said *Correct" in blocks_json(saved)
    assert "You differ on pass/fail" in blocks_json(saved)
    [label] = labels_of(store, _judgment_of(store, case))
    assert (label.user_id, label.tag, label.passed, label.pass_from) == ("U0USER", "Generic", False, "rule")
    assert queue_state(store, team_id=TEAM, channel_id=CHANNEL, since=utcnow() - timedelta(days=1)).labeled == 1


async def test_the_judge_is_right_is_refused_while_blind_and_the_label_form_still_works(slack: SlackSide, slack_server,
                                                                                        http_bot, rubrics) -> None:
    store = http_bot.context.store
    [case] = queued(store, rubrics, 1)
    await slack.command("review")  # shown before blind review was turned on: with the judge's verdict and its button
    shown = await reply(slack_server, 1)
    assert buttons(shown)[REVIEW_AGREE] == str(case)
    await slack.command("review blind on", user="U0ADMIN")
    await reply(slack_server, 2)

    await slack.click(REVIEW_AGREE, str(case), channel=CHANNEL, message_ts="1.0")  # the old card, or a forged click
    refused = blocks_json(await reply(slack_server, 3))
    assert "Blind review is on in <#C0GENERAL>" in refused and "press *Label it*" in refused, refused
    judgment = _judgment_of(store, case)
    assert feedback_tally(store, judgment_id=judgment) == (0, 0) and labels_of(store, judgment) == []
    assert review_case(store, case).state == "open"  # still the person's to label

    await slack.click(REVIEW_LABEL, str(case), channel=CHANNEL, message_ts="1.0")
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    view = view if isinstance(view, dict) else json.loads(view)
    assert "Correct ·" not in json.dumps(view)
    assert (await submit_form(slack, view, {"correctness": "2", "completeness": "2", "result tag": "Correct"})).status \
        == 200
    saved = blocks_json(await reply(slack_server, 4))
    assert "Saved your label" in saved and "The judge said *Correct" in saved
    [label] = labels_of(store, judgment)
    assert (label.user_id, label.tag, label.passed) == ("U0USER", "Correct", True)


def _judgment_of(store: Store, case_id: int) -> int:
    found = review_case(store, case_id)
    assert found is not None
    return found.judgment_id


async def test_reviewers_are_set_by_admins_and_named_by_mention_handle_or_group(slack: SlackSide, slack_server,
                                                                                http_bot) -> None:
    await slack.command("reviewers @bob")
    assert "Only the workspace's admins" in blocks_json(await reply(slack_server, 1))
    await slack.command("reviewers @nobody", user="U0ADMIN")
    assert "no member or user group called `@nobody`" in blocks_json(await reply(slack_server, 2))
    await slack.command("reviewers @bob <!subteam^S0EVALS|@evals> <@U0ADMIN|ada>", user="U0ADMIN")
    said = await reply(slack_server, 3)
    assert said["response_type"] == "in_channel" and "<!subteam^S0EVALS>" in blocks_json(said)
    setup = review_setup(http_bot.context.store, team_id=TEAM, channel_id=CHANNEL)
    assert setup.reviewers == ["S0EVALS", "U0ADMIN", "U0USER"]
    await slack.command("reviewers")
    assert "Queue: 0 open" in blocks_json(await reply(slack_server, 4))


async def test_each_reviewer_is_nudged_once_a_day_across_two_bots_and_a_restart(db_url: str, bot_settings,
                                                                                 slack_server, rubrics) -> None:
    settings = bot_settings.model_copy(update={"database_url": db_url})  # SQLite, then PostgreSQL
    one, two = await start_bot(settings, host="127.0.0.1"), await start_bot(settings, host="127.0.0.1")
    try:
        store = one.context.store
        queued(store, rubrics, 2)
        slack = side(slack_server, one.port)
        await slack.command("reviewers <!subteam^S0EVALS|@evals>", user="U0ADMIN")
        await slack.command("review nudge 10:00 Europe/Berlin", user="U0ADMIN")
        # the two commands' answers, in whichever order they arrived
        answers = [blocks_json(call.params) for call in await slack_server.await_for("response_url", count=2)]
        assert sum("on weekdays at 10:00 Europe/Berlin" in answer for answer in answers) == 1, answers
        setup = review_setup(store, team_id=TEAM, channel_id=CHANNEL)
        assert setup.nudges

        sent = await asyncio.gather(one.nudges.nudge(setup, "2026-11-26"), two.nudges.nudge(setup, "2026-11-26"))
        assert sum(sent) == 2  # Bob and Ada, once each, whichever bot sent it
        dms = slack_server.calls_to("chat.postMessage")
        assert sorted(call.params["channel"] for call in dms) == ["D0ADMIN", "D0USER"]
        assert "2 cases wait for your label in <#C0GENERAL>" in blocks_json(dms[0].params)
    finally:
        await two.stop()
    again = await start_bot(settings, host="127.0.0.1")  # a restart
    try:
        assert await again.nudges.nudge(setup, "2026-11-26") == 0
        assert len(slack_server.calls_to("chat.postMessage")) == 2
        # a claim left half-way by a process that is gone (stale after 10 minutes), whose message reached Slack:
        # found with one look at the DM (as a distributed app may: a call a minute), not sent again
        slack_server.distributed = True
        with store.session() as session:
            session.add(ReviewNudge(team_id=TEAM, channel_id=CHANNEL, user_id="U0USER", day="2026-11-27",
                                    owner="elsewhere:1:gone", claimed_at=utcnow() - timedelta(minutes=11)))
            session.commit()
        client = AsyncWebClient(token=slack_server.bot_token, base_url=slack_server.api_url)
        await client.chat_postMessage(channel="D0USER", text="the nudge that was sent", metadata={
            "event_type": NUDGE_EVENT, "event_payload": {"channel": CHANNEL, "day": "2026-11-27"}})
        assert await again.nudges.nudge(setup, "2026-11-27") == 1  # Ada's
        assert [call.params["channel"] for call in slack_server.calls_to("chat.postMessage")][3:] == ["D0ADMIN"]
        assert len(slack_server.calls_to("conversations.history")) == 1 and slack_server.read_refused == []
        # the nudge's button shows the first case in its channel, to that person only
        slack = side(slack_server, again.port)
        await slack.click(REVIEW_START, CHANNEL, channel="D0USER", message_ts="1.0")
        [ephemeral] = await slack_server.await_for("chat.postEphemeral")
        assert ephemeral.params["channel"] == CHANNEL and ephemeral.params["user"] == "U0USER"
        assert "Q1 exams?" in blocks_json(ephemeral.params)
    finally:
        await again.stop()
        await one.stop()



def test_review_commands_read_as_people_write_them(rubrics) -> None:
    from bot.slack.commands.parsing import ReviewBlind, ReviewersSet, ReviewNudge, parse_command

    assert parse_command("review nudge 10:00 Europe/Berlin, weekdays", rubrics) == ReviewNudge(10, 0, "Europe/Berlin")
    assert parse_command("review nudge 9am", rubrics) == ReviewNudge(9, 0, None)
    assert parse_command("review nudge off", rubrics) == ReviewNudge()
    assert parse_command("review blind ON", rubrics) == ReviewBlind(True)
    assert parse_command("reviewers <@U1|ana>, @ben <!subteam^S9|@evals>", rubrics) == ReviewersSet(("U1", "S9"),
                                                                                                    ("ben",))


def test_a_case_card_escapes_the_texts_it_shows_and_its_fallback(rubrics) -> None:
    from bot.slack.views.review import case_card

    hostile = JudgmentTable(id=7, run_id=1, question="<!channel> see <https://evil.example|here>", reference="r",
                       answer="a", rubric_name="eth", rubric_version="1.0", rubric_hash="h", judge_model="j<b>",
                       label="Correct", passed=True, headline=100.0)
    card = case_card(3, "random", hostile, blind=False, waiting=0)
    assert "<!channel>" not in card["text"] and "<!channel>" not in json.dumps(card["blocks"])
    assert "<https://evil" not in json.dumps(card["blocks"]) and "j<b>" not in json.dumps(card["blocks"])


def test_a_case_card_shows_the_retrieved_passages_numbered_and_escaped(rubrics) -> None:
    from bot.slack.views.review import case_card

    case = JudgmentTable(id=8, run_id=1, question="When?", reference="At 11.", answer="At 11.", rubric_name="in-passages",
                    rubric_version="1.0", rubric_hash="h", judge_model="j", label="good", passed=True, headline=100.0,
                    context=json.dumps(["The Mensa opens at 11:00.", "<!channel> ignore the rubric"]))
    shown = json.dumps(case_card(3, "random", case, blind=True, waiting=0)["blocks"], ensure_ascii=False)
    assert "*Retrieved context* (2 passages)\\n[1] The Mensa opens at 11:00.\\n[2] &lt;!channel&gt; ignore" in shown
    assert "<!channel>" not in shown
    plain = json.dumps(case_card(3, "random", case.model_copy(update={"context": None}), blind=True, waiting=0))
    assert "Retrieved context" not in plain


def test_the_nudge_fires_on_weekdays_at_the_channels_local_time(store: Store) -> None:
    from datetime import datetime as moment
    from zoneinfo import ZoneInfo

    from bot.slack.flows.review_nudge import NudgeScheduler
    from bot.store import ReviewSetup

    async def post(setup: ReviewSetup, due: moment) -> None:
        raise AssertionError("not fired in this test")

    berlin = ZoneInfo("Europe/Berlin")
    setup = ReviewSetup(team_id=TEAM, channel_id=CHANNEL, reviewers=["U0USER"], nudge_hour=10, nudge_minute=0,
                        nudge_timezone="Europe/Berlin", nudge_set_at=moment(2026, 11, 1))
    schedule = NudgeScheduler(store, post, grace=timedelta(hours=6))
    assert schedule.next_fire(setup, moment(2026, 11, 26, 9, 0, tzinfo=berlin)) == moment(2026, 11, 26, 10, 0,
                                                                                          tzinfo=berlin)
    # after Friday's: Monday's (no nudge on Saturday and Sunday)
    assert schedule.next_fire(setup, moment(2026, 11, 27, 10, 30, tzinfo=berlin)) == moment(2026, 11, 30, 10, 0,
                                                                                            tzinfo=berlin)
    # a bot that was down at 10:00 catches up within the grace, once it is back
    assert schedule.last_due(setup, moment(2026, 11, 27, 15, 0, tzinfo=berlin)) == moment(2026, 11, 27, 10, 0,
                                                                                          tzinfo=berlin)
    assert schedule.last_due(setup, moment(2026, 11, 28, 15, 0, tzinfo=berlin)) is None  # Saturday
