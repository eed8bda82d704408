"""`/judge calibration`, the digest's section on how far to trust the judge, and the unsure rate, through the real
bolt app and the history."""

from __future__ import annotations

import io
import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rich.console import Console
from sqlmodel import col, update

from bot.cli.views.history import show_digest, show_stats
from bot.digest import Period, build_digest
from bot.digest.week_figures import week_trust
from bot.errors import CommandError
from bot.figures import iso_week
from bot.records import Verdict
from bot.slack.commands.parsing import CalibrationCheck, parse_command
from bot.slack.server import start_bot
from bot.store import (
    Feedback,
    Judgment,
    Label,
    Store,
    add_rows,
    channel_stats,
    create_run,
    first_judgment,
    get_judgment,
    labeled_rubric_names,
    record_feedback,
    save_label,
    save_verdict,
    set_default_rubric,
    utcnow,
)
from bot.trust.calibration import wilson
from bot.trust.report import TrustBar, judge_in_use
from tests.support.slack_messages import blocks_in, table_dicts, table_rows
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, TEAM, SlackSide

HASH = "a" * 16
CASES = itertools.count(1)  # every judgment its own case (question)
JUDGE = "judge-a"


def judged(store: Store, *, passed: bool, tag: str, scores: tuple[int, int] = (2, 2), channel: str = "C0GENERAL",
           team: str = TEAM, judge_model: str = JUDGE, rubric_hash: str = HASH, version: str = "1.0",
           model: str | None = None, unsure: bool | None = None) -> Judgment:
    """One scored eth judgment made in `channel`, with the judge's pass/fail, tag and (correctness, completeness)."""
    common = {"rubric_name": "eth", "rubric_version": version, "rubric_hash": rubric_hash, "judge_model": judge_model}
    run = create_run(store, **common, channel_id=channel, team_id=team)
    add_rows(store, [{**common, "run_id": run.id, "row_number": 1, "status": "pending", "question": f"q{next(CASES)}",
                     "reference": "r", "answer": "a", "channel_id": channel, "team_id": team, "model_name": model}])
    row = first_judgment(store, run.id)
    assert row is not None
    output = {"correctness": scores[0], "completeness": scores[1], "result_tag": tag, "reasoning": "r"}
    verdict = Verdict(status="scored", output=output, headline=100.0 if passed else 0.0, passed=passed, label=tag,
                      tag=tag, raw_reply="{}", prompt_hash="p" * 32, unsure=unsure,
                      samples=3 if unsure is not None else None, **common)
    assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")
    judgment = get_judgment(store, row.id)
    assert judgment is not None
    return judgment


def corrected(store: Store, judgment: Judgment, *, passed: bool, tag: str | None, scores: tuple[int, int] | None = None,
              user: str = "U0USER") -> None:
    """A person's correction of `judgment` (the Correct it form)."""
    values: dict[str, Any] = {} if scores is None else {"correctness": scores[0], "completeness": scores[1]}
    save_label(store, judgment=judgment, user_id=user, source="correction", values=values, passed=passed,
               pass_from=None if passed is None else "given", tag=tag, headline=None, note=None)


def eight_labels(store: Store) -> None:
    """Four corrections, three Agree votes and one more correction on eth in #general, hand-counted in the tests."""
    corrected(store, judged(store, passed=True, tag="Correct", scores=(2, 2)), passed=True, tag="Correct",
              scores=(2, 1))
    corrected(store, judged(store, passed=True, tag="Correct", scores=(2, 2)), passed=False, tag="Hallucination",
              scores=(0, 2))
    corrected(store, judged(store, passed=False, tag="Generic", scores=(1, 1)), passed=False, tag="Generic",
              scores=(1, 1))
    corrected(store, judged(store, passed=False, tag="Refusal", scores=(0, 0)), passed=True, tag="Correct",
              scores=(2, 0))
    for passed, tag, scores in ((True, "Correct", (2, 2)), (False, "Generic", (1, 1)), (True, "Correct", (2, 2))):
        record_feedback(store, judgment_id=judged(store, passed=passed, tag=tag, scores=scores).id, user_id="U0VOTER",
                        agree=True)
    corrected(store, judged(store, passed=False, tag="Hallucination", scores=(0, 0)), passed=False,
              tag="Hallucination", scores=(0, 1))


async def reply_to(slack: SlackSide, slack_server: FakeSlackServer, text: str, *, channel: str = "C0GENERAL",
                   count: int = 1) -> dict[str, Any]:
    """Type `/judge <text>` and return the ephemeral reply that comes through the response_url."""
    await slack.command(text, channel=channel)
    return (await slack_server.await_for("response_url", count=count))[-1].params


def texts(reply: dict[str, Any]) -> list[str]:
    """The mrkdwn of every section of a reply."""
    blocks = reply["blocks"] if isinstance(reply["blocks"], list) else json.loads(reply["blocks"])
    return [block["text"]["text"] for block in blocks if block["type"] == "section"]


# -- parsing -------------------------------------------------------------------------------------------------------


def test_calibration_takes_a_rubric_and_a_period_in_any_order(rubrics) -> None:
    eth = rubrics.get("eth")
    assert parse_command("calibration", rubrics) == CalibrationCheck(None, None)
    assert parse_command("calibration eth", rubrics) == CalibrationCheck(eth, None)
    assert parse_command("calibration 30d eth", rubrics) == CalibrationCheck(eth, 30)
    assert parse_command("Calibration eth ALL", rubrics) == CalibrationCheck(eth, None)
    assert parse_command("calibration 7d", rubrics) == CalibrationCheck(None, 7)


@pytest.mark.parametrize(("text", "says"), [("calibration etj", "Did you mean"), ("calibration 0d", "0 days"),
                                            ("calibration eth academic", "one too many")])
def test_calibration_written_wrongly_says_how(rubrics, text: str, says: str) -> None:
    with pytest.raises(CommandError, match=says):
        parse_command(text, rubrics)


# -- /judge calibration --------------------------------------------------------------------------------------------


async def test_calibration_shows_hand_counted_figures_of_this_channel_only(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    eight_labels(store)
    # Labels elsewhere, which must never be counted or shown here: another channel, another workspace's channel of
    # the same id, and the terminal.
    corrected(store, judged(store, passed=True, tag="Correct", channel="C0OTHER"), passed=False, tag="OtherChannel")
    corrected(store, judged(store, passed=True, tag="Correct", team="T0ELSE"), passed=False, tag="OtherTeam")
    reply = await reply_to(slack, slack_server, "calibration")
    assert reply["response_type"] == "ephemeral"
    head, figures, heading, details = texts(reply)
    assert "<#C0GENERAL>" in head and "all time" in head
    # pass/fail (judge, person): TT TF FF FT TT FF TT FF: 6 of 8 agree = 75%. Wilson 95%: centre 0.6689, half
    # 0.2596: 41%-93%. Kappa: po 0.75, pe (4*4 + 4*4)/64 = 0.5, (0.75-0.5)/0.5 = 0.50, with no interval under 20
    # cases. Both pass 4 of 8; McNemar (exact, 1 case against 1): p = 1.
    # tags agree 6 of 8; judge Correct 4 Generic 2 Refusal 1 Hallucination 1, people 4 2 0 2:
    # pe = (16 + 4 + 0 + 2)/64 = 0.34375, kappa = (0.75 - 0.34375)/0.65625 = 0.619.
    assert figures.splitlines()[0].endswith("*8 label(s)*")
    assert "*agreement on pass/fail* 75% (6/8), 95% CI 41%-93% (Wilson); few labeled cases (n = 8)" in figures
    assert "*pass rates* the judge passes 50%, people 50%, McNemar p = 1.0; few labeled cases (n = 8)" in figures
    assert "*Cohen's kappa on pass/fail* 0.50 (no interval under 20 cases); few labeled cases (n = 8)" in figures
    assert "*on the tag* 0.62 (no interval under 20 cases) over 8 labels; few labeled cases (n = 8)" in figures
    assert ":warning:" not in figures  # 8 labels are fewer than 20, and the judge is the one labeled
    assert heading == "*The judge's tag (rows) against people's (columns)*"
    assert table_rows(reply) == [
        ["judge \\ people", "Correct", "Generic", "Refusal", "Hallucination", "total"],
        ["Correct", "3", "0", "0", "1", "4"],
        ["Generic", "0", "2", "0", "0", "2"],
        ["Refusal", "1", "0", "0", "0", "1"],
        ["Hallucination", "0", "0", "0", "1", "1"],
        ["total", "4", "2", "0", "2", "8"]]
    # correctness judge - person: 0 +2 0 -2 0 0 0 0 -> the same on average, 4/8 apart; completeness: +1 0 0 0 0 0 0 -1
    # -> the same, 2/8 apart. Linear weighted kappa (sklearn's cohen_kappa_score(weights="linear", labels=[0, 1, 2])):
    # correctness 0.4286, completeness 0.6923
    assert ("`correctness`: the judge scores the same on average, mean absolute difference 0.50 (8 labels); weighted "
            "kappa 0.43 (no interval under 20 cases); few labeled cases (n = 8)") in details
    assert ("`completeness`: the judge scores the same on average, mean absolute difference 0.25 (8 labels); weighted "
            "kappa 0.69 (no interval under 20 cases); few labeled cases (n = 8)") in details
    assert f"labels per week (agreement): {iso_week(utcnow())} 8 (75%; few labeled cases (n = 8))" in details
    shown = json.dumps(reply, ensure_ascii=False)
    assert "OtherChannel" not in shown and "OtherTeam" not in shown


async def test_stats_count_every_correction_and_vote(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    eight_labels(store)
    corrected(store, judged(store, passed=True, tag="Correct", channel="C0OTHER"), passed=False, tag="Generic")
    reply = await reply_to(slack, slack_server, "stats")
    [entry] = [row for row in table_dicts(reply) if row["Model"] == "model not named"]
    # five corrections and three Agree votes, as `/judge calibration` counts them above: 6 of 8 (the tally's votes
    # alone would say 3 of 3); the correction in another channel is not counted here
    assert entry["People agree with the judge"] == "75% (6/8), 95% CI 41%-93% (Wilson); few labeled cases (n = 8)"


async def test_cases_labeled_by_several_people_count_as_cases(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    # ten cases, each corrected by two people alike: 20 labels, but ten cases' worth of evidence; the judge passes
    # every one, people fail three cases
    for index in range(10):
        judgment = judged(store, passed=True, tag="Correct")
        for user in ("U0ONE", "U0TWO"):
            corrected(store, judgment, passed=index >= 3, tag="Correct" if index >= 3 else "Generic", user=user)
    figures = texts(await reply_to(slack, slack_server, "calibration eth"))[1]
    assert "*20 label(s) of 10 cases*" in figures
    # each case weighs one: 7 of 10 cases agree, with Wilson's interval over the ten cases,
    # statsmodels' proportion_confint(7, 10, method="wilson") (0.3968, 0.8922)
    assert ("*agreement on pass/fail* 70% (20 labels of 10 cases, each case weighing one), 95% CI 40%-89% (score "
            "interval over cases); few labeled cases (n = 10)") in figures
    # McNemar's exact test over the cases, by people's majority: 3 cases only the judge passed, 2 / 2^3
    assert "*pass rates* the judge passes 100%, people 70%, McNemar p = 0.25 (over cases, by people's majority)" in figures
    # the digest's section counts them alike
    period = Period.ending(datetime.now(UTC) + timedelta(seconds=1))
    [found] = week_trust(store, channel_id="C0GENERAL", team_id=TEAM, period=period, bar=TrustBar())
    assert (found.week.n, found.week.pass_cases, found.week.pass_agree) == (20, 10, 14)
    assert found.week.interval == wilson(7, 10)
    naive = wilson(14, 20)  # as if the 20 labels were independent
    assert naive is not None and found.week.interval is not None
    assert found.week.interval[1] - found.week.interval[0] > naive[1] - naive[0]


async def test_calibration_of_a_period_leaves_older_labels_out(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    eight_labels(store)
    with store.session() as session:  # the four first corrections were given 40 days ago
        old = utcnow() - timedelta(days=40)
        session.execute(update(Label).where(col(Label.tag).in_(["Correct", "Generic"])).values(updated_at=old))
        session.commit()
    reply = await reply_to(slack, slack_server, "calibration eth 30d")
    figures = texts(reply)[1]
    # left: corrections J2 (T, F) and J8 (F, F), and the three Agree votes (TT FF TT): 4 of 5 agree;
    # statsmodels' proportion_confint(4, 5, method="wilson") (0.3755, 0.9638); cohens_kappa on [[2, 1], [0, 2]]
    # 0.6154 (-0.0070, 1.2378)
    assert "*5 label(s)*" in figures and "75%" not in figures
    assert "*agreement on pass/fail* 80% (4/5), 95% CI 38%-96% (Wilson); few labeled cases (n = 5)" in figures
    assert "*Cohen's kappa on pass/fail* 0.62 (no interval under 20 cases); few labeled cases (n = 5)" in figures
    assert "last 30 days" in texts(reply)[0]


async def test_calibration_warns_of_low_agreement_and_of_a_judge_not_the_one_labeled(slack, slack_server,
                                                                                   http_bot) -> None:
    store = http_bot.context.store
    for index in range(19):  # 13 of 19 agree: 68%, under 75%, but 19 labels say too little for a warning
        judgment = judged(store, passed=True, tag="Correct")
        corrected(store, judgment, passed=index < 13, tag="Correct" if index < 13 else "Generic")
    first = texts(await reply_to(slack, slack_server, "calibration eth"))[1]
    # proportion_confint(13, 19, method="wilson") (0.4601, 0.8464); a judge that passes everything: kappa n/a, and
    # McNemar's exact test on 6 cases only the judge passed, none only people: p = 0.03125
    assert "68% (13/19), 95% CI 46%-85% (Wilson); few labeled cases (n = 19)" in first and ":warning:" not in first
    assert "*pass rates* the judge passes 100%, people 68%, McNemar p = 0.031; few labeled cases (n = 19)" in first
    assert ("*Cohen's kappa on pass/fail* n/a (one class only: the judge said pass every time); few labeled cases "
            "(n = 19)") in first

    corrected(store, judged(store, passed=True, tag="Correct"), passed=True, tag="Correct")  # 14 of 20: 70%
    # the judge now: another model and another text of the rubric, on a judgment nobody labeled
    judged(store, passed=True, tag="Correct", judge_model="judge-b", rubric_hash="b" * 16, version="2.0")
    second = texts(await reply_to(slack, slack_server, "calibration eth", count=2))[1]
    # proportion_confint(14, 20, method="wilson") (0.4810, 0.8545): 20 labels are not few
    assert "*agreement on pass/fail* 70% (14/20), 95% CI 48%-85% (Wilson)\n" in second
    warnings = [line for line in second.splitlines() if line.startswith(":warning:")]
    assert warnings == [
        ":warning: The judge agrees with people on pass/fail in 70% of 20 labeled cases, below the 75% expected: read "
        "its verdicts with care, and look at where people disagree with it.",
        ":warning: Most labels (20 of 20) were given on judge model judge-a; the judge now is judge-b: these figures "
        "may not hold for it.",
        ":warning: Most labels (20 of 20) were given on another text of the rubric (aaaaaaa); it is now version 2.0 "
        "(bbbbbbb): these figures may not hold for it."]


async def test_without_labels_the_reply_says_how_to_get_some(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    eight_labels(store)  # in #general, not here
    reply = await reply_to(slack, slack_server, "calibration", channel="C0OTHER")
    text = reply["text"]
    assert "No labels in <#C0OTHER> over all time" in text
    assert "*Correct it*" in text and "*Agree*" in text and "`human_pass`" in text and "`human_<field>`" in text

    set_default_rubric(store, team_id=TEAM, channel_id="C0GENERAL", rubric_name="academic", user_id="U0USER")
    named = await reply_to(slack, slack_server, "calibration", count=2)  # the default rubric, which has none
    assert "No labels of `academic` in <#C0GENERAL>" in named["text"]


async def test_hostile_tags_neither_break_the_table_nor_mention_anyone(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    hostile = "```<!channel> `x`"
    corrected(store, judged(store, passed=True, tag=hostile), passed=False, tag="a`b <@U0BOSS>\n| fake row")
    corrected(store, judged(store, passed=True, tag="Correct"), passed=True, tag="Correct")
    reply = await reply_to(slack, slack_server, "calibration eth")
    header, *rows = table_rows(reply)
    # header, eth's 4 tags, the 2 others, total: no row was forged, and each tag is one cell, shown as it is
    assert header == ["judge \\ people", "Correct", "Generic", "Refusal", "Hallucination", hostile,
                      "a`b <@U0BOSS> | fake row", "total"]  # a line end in a tag is a space in its cell
    assert [row[0] for row in rows] == [*header[1:-1], "total"]
    assert all(len(row) == len(header) for row in rows)
    # nowhere else (the sections, the fallback text) does a tag mention anyone
    outside = json.dumps({**reply, "blocks": [b for b in blocks_in(reply) if b["type"] != "table"]}, ensure_ascii=False)
    assert "<!channel>" not in outside and "<@U0BOSS>" not in outside


# -- the digest ----------------------------------------------------------------------------------------------------


def backdate(store: Store, judgment_ids: list[int], days: int) -> None:
    """Move the labels and votes of these judgments `days` back."""
    when = utcnow() - timedelta(days=days)
    with store.session() as session:
        session.execute(update(Label).where(col(Label.judgment_id).in_(judgment_ids)).values(updated_at=when))
        session.execute(update(Feedback).where(col(Feedback.judgment_id).in_(judgment_ids)).values(updated_at=when))
        session.commit()


# this week: 3 of 4 = 75%, proportion_confint(3, 4, method="wilson") (0.3006, 0.9544); the judge passes 3, people 2:
# McNemar exact p = 1; kappa: judge T 3 F 1, people T 2 F 2, pe = (6 + 2)/16 = 0.5, (0.75 - 0.5)/0.5 = 0.50, with no
# interval under 20 cases. The 4 weeks before: 2 of 2, Wilson (0.3424, 1); pe = (1 + 1)/4 = 0.5, kappa
# (1 - 0.5)/0.5 = 1.00, and no interval either (not "1.00-1.00").
WEEK_LINES = ("this week: agreement 75% (3/4), 95% CI 30%-95% (Wilson) · the judge passes 75%, people 50%, McNemar "
              "p = 1.0 · kappa 0.50 (no interval under 20 cases) · few labeled cases (n = 4)",
              "the 4 weeks before: agreement 100% (2/2), 95% CI 34%-100% (Wilson) · the judge passes 50%, people 50%, "
              "McNemar p = 1.0 · kappa 1.00 (no interval under 20 cases) · few labeled cases (n = 2)")


def labeled_weeks(store: Store) -> None:
    """This week: TT TT FF TF (3 of 4); ten days ago: TT FF (2 of 2); and a judge that changed since."""
    for passed, human in ((True, True), (True, True), (False, False), (True, False)):
        corrected(store, judged(store, passed=passed, tag="Correct"), passed=human, tag="Correct")
    earlier = [judged(store, passed=True, tag="Correct"), judged(store, passed=False, tag="Generic")]
    for judgment in earlier:
        record_feedback(store, judgment_id=judgment.id, user_id="U0VOTER", agree=True)
    backdate(store, [judgment.id for judgment in earlier], 10)
    judged(store, passed=True, tag="Correct", judge_model="judge-b")


async def test_the_digest_says_how_far_to_trust_the_judge(bot_settings, slack_server) -> None:
    settings = bot_settings.model_copy(update={"calibration_min_agreement": 0.8, "calibration_min_labels": 4})
    running = await start_bot(settings, host="127.0.0.1")
    try:
        labeled_weeks(running.context.store)
        for unsure in (True, False):  # rows judged several times, one of the two left unsure: 50%
            judged(running.context.store, passed=True, tag="Correct", judge_model="judge-b", model="sampled-bot",
                   unsure=unsure)
        side = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        await side.command("digest now")
        post = (await slack_server.await_for("chat.postMessage"))[-1].params
    finally:
        await running.stop()
    blocks = post["blocks"] if isinstance(post["blocks"], list) else json.loads(post["blocks"])
    [trust] = [block["text"]["text"] for block in blocks
               if block["type"] == "section" and "How far to trust the judge" in block["text"]["text"]]
    assert WEEK_LINES[0] in trust and WEEK_LINES[1] in trust
    assert ":warning: The judge agrees with people on pass/fail in 75% of 4 labeled cases, below the 80% expected" \
        in trust
    assert "Most labels (6 of 6) were given on judge model judge-a; the judge now is judge-b" in trust
    [sampled] = [row for row in table_dicts(post) if row["Model"] == "sampled-bot"]
    assert (sampled["Pass"], sampled["Unsure"]) == ("100%", "50%")



def test_the_terminal_digest_and_stats_show_the_same(store: Store, rubrics) -> None:
    labeled_weeks(store)
    judged(store, passed=False, tag="Generic", judge_model="judge-b", model="sampled-bot", unsure=True)
    period = Period.ending(datetime.now(UTC) + timedelta(seconds=1))
    digest = build_digest(store, channel_id="C0GENERAL", period=period, team_id=TEAM,
                          bar=TrustBar(min_agreement=0.8, min_labels=4))
    console = Console(width=250, record=True, file=io.StringIO())
    show_digest(console, digest, "digest")
    show_stats(console, channel_stats(store, channel_id="C0GENERAL"), "stats")
    printed = console.export_text()
    assert WEEK_LINES[0] in printed and WEEK_LINES[1] in printed
    assert "warning: The judge agrees with people on pass/fail in 75% of 4 labeled cases, below the 80% expected" in printed
    assert "the judge now is judge-b" in printed
    assert printed.count("0% · unsure 100%") == 2  # sampled-bot: 0 of 1 passed, 1 of 1 unsure; in both tables


def test_week_trust_counts_one_channel_and_its_weeks(store: Store, rubrics) -> None:
    old = judged(store, passed=True, tag="Correct")
    corrected(store, old, passed=False, tag="Generic")
    backdate(store, [old.id], 40)  # older than the 4 weeks before: left out
    corrected(store, judged(store, passed=True, tag="Correct", channel="C0OTHER"), passed=False, tag="Generic")
    labeled_weeks(store)
    assert labeled_rubric_names(store, channel_id="C0GENERAL", team_id=TEAM) == ["eth"]
    assert labeled_rubric_names(store, channel_id="C0NONE", team_id=TEAM) == []
    period = Period.ending(datetime.now(UTC) + timedelta(seconds=1))
    [found] = week_trust(store, channel_id="C0GENERAL", team_id=TEAM, period=period, bar=TrustBar())
    assert (found.week.n, found.week.pass_agree, found.before.n, found.before.pass_agree) == (4, 3, 2, 2)
    assert found.now is not None and found.now.judge_model == "judge-b"
    other = judge_in_use(store, rubric_name="eth", channel_id="C0OTHER", team_id=TEAM)
    assert other is not None and other.judge_model == JUDGE


# -- the unsure rate -----------------------------------------------------------------------------------------------


async def test_stats_show_the_unsure_rate_only_where_rows_were_judged_several_times(slack, slack_server,
                                                                                   http_bot) -> None:
    store = http_bot.context.store
    for unsure in (True, False, False, False):  # 1 of 4 scored rows unsure: 25%
        judged(store, passed=True, tag="Correct", model="sampled-bot", unsure=unsure)
    judged(store, passed=True, tag="Correct", model="single-bot")
    reply = await reply_to(slack, slack_server, "stats")
    sampled, single = [row for row in table_dicts(reply) if row["Model"] in ("sampled-bot", "single-bot")]
    assert (sampled["Model"], sampled["Pass"], sampled["Unsure"]) == ("sampled-bot", "100%", "25%")
    assert (single["Model"], single["Unsure"]) == ("single-bot", "–")
