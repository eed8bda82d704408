"""One rule for every button, form and command: the workspace and the channel must both be those of what it acts on."""

from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import urlencode

import pytest
from pydantic import SecretStr

from bot.records import RunState, ShareState, Triple
from bot.runs import Origin, start_single_run
from bot.slack.listeners.card import NOT_HERE as JUDGMENT_NOT_HERE
from bot.slack.listeners.clicks import OTHER_WORKSPACE
from bot.slack.listeners.file import NOT_HERE as FILE_NOT_HERE
from bot.slack.server import start_bot
from bot.slack.views.card import AGREE, CORRECT, DETAILS, DISAGREE, FEEDBACK, REJUDGE, RETRY
from bot.slack.views.commands import FORM_UNCHECKED, FormContext, FormSeal
from bot.slack.views.file_run import CANCEL_RUN, PICK_RUBRIC, RESUME_RUN, RUN_AGAIN, SKIP_AGAIN
from bot.store import Store, claim_share, create_run, feedback_tally, first_judgment, get_run, get_share
from tests.support.oauth_install import install, oauth_settings
from tests.support.replies import eth_reply
from tests.support.slack_files import wait_until
from tests.support.slack_messages import INLINE, card_of, table_dicts
from tests.support.slack_side import SIGNING_SECRET, SlackSide

PARTNER = "T0PARTNER"  # the other organisation of a Slack Connect channel


@pytest.fixture(params=["one workspace's token", "two workspaces installed"])
async def slack(request, bot_settings, slack_server):
    """Slack's side of the bot: with one SLACK_BOT_TOKEN (the partner's workspace never installed it), or with the
    OAuth install, this workspace and the partner's both installed (each request then answered with its own token):
    the same rules hold both ways."""
    settings = bot_settings if request.param.startswith("one") else oauth_settings(bot_settings, slack_server)
    running = await start_bot(settings, host="127.0.0.1")
    try:
        if not request.param.startswith("one"):
            for team in ("T0TEST", PARTNER):
                assert (await install(running, slack_server, team)).status == 200
        yield SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
    finally:
        await running.stop()
ELSEWHERE = {  # how a click names where it comes from: (channel, team of the click, team of the person)
    "from another workspace": ("C0GENERAL", PARTNER, PARTNER),
    "by a person of another workspace": ("C0GENERAL", "T0TEST", PARTNER),
    "with no team": ("C0GENERAL", None, None),
    "with no channel": (None, "T0TEST", "T0TEST"),
}


def two_installed(request: pytest.FixtureRequest) -> bool:
    """Whether this test runs with both workspaces installed through OAuth (each request then answered, and refused,
    by bolt as its workspace's; one that names no workspace bolt cannot authorize at all)."""
    return str(request.node.callspec.params.get("slack", "")).startswith("two")


def unauthorized(texts: list[str]) -> bool:
    """bolt's answer to a request it finds no installation for (with OAuth): nothing of ours ran."""
    return bool(texts) and all("installation" in text for text in texts)


def told(slack_server) -> list[str]:
    return [call.params.get("text", "") for call in slack_server.calls_to("response_url")]


async def told_times(slack_server, count: int) -> list[str]:
    await slack_server.await_for("response_url", count=count)
    await asyncio.sleep(0.3)  # anything done after the refusal would have reached Slack or the judge by now
    return told(slack_server)


def share_in(store: Store, state: ShareState, run_id: int | None = None) -> int:
    """A file shared in #general of T0TEST, waiting in `state`."""
    share = claim_share(store, team_id="T0TEST", channel_id="C0GENERAL", thread_ts="1700000000.000100",
                        message_ts=f"1700000000.{len(state):03d}{int(run_id or 0):03d}", file_id=f"F{state}",
                        file_name="answers.csv", state=state, run_id=run_id, question_ts="1700000001.000100")
    assert share is not None
    return share.id


def run_in(store: Store, rubrics, status: RunState) -> int:
    eth = rubrics.get("eth")
    run = create_run(store, rubric_name=eth.name, rubric_version=eth.version, rubric_hash=eth.content_hash,
                           judge_model="judge-test", source="slack", status=status, team_id="T0TEST",
                           channel_id="C0GENERAL", total_rows=3)
    return run.id


@pytest.mark.parametrize("where", list(ELSEWHERE))
async def test_file_run_buttons_refuse_a_click_from_elsewhere(slack, slack_server, judge_server, bot_settings,
                                                              rubrics, where, caplog, request):
    store = Store.open(bot_settings.db_url)
    asking, again = share_in(store, ShareState.ASKING), share_in(store, ShareState.CONFIRM)
    paused_run, running_run = run_in(store, rubrics, RunState.PAUSED), run_in(store, rubrics, RunState.RUNNING)
    paused, running = share_in(store, ShareState.PAUSED, paused_run), share_in(store, ShareState.RUNNING, running_run)
    clicks = [(f"{PICK_RUBRIC}_eth", f"{asking}:eth"), (RUN_AGAIN, str(again)), (SKIP_AGAIN, str(again)),
              (RESUME_RUN, str(paused_run)), (CANCEL_RUN, str(paused_run)), (CANCEL_RUN, str(running_run))]
    channel, team, user_team = ELSEWHERE[where]
    for action_id, value in clicks:
        answer = await slack.click(action_id, value, channel=channel, message_ts="1700000001.000100", team=team,
                                   user_team=user_team)
        assert answer.status == 200
    said = await told_times(slack_server, len(clicks))
    nowhere = two_installed(request) and team is None and user_team is None
    assert unauthorized(said) if nowhere else said == [FILE_NOT_HERE] * len(clicks)
    states = {share: get_share(store, share_id=share).state for share in (asking, again, paused, running)}
    assert states == {asking: ShareState.ASKING, again: ShareState.CONFIRM, paused: ShareState.PAUSED,
                      running: ShareState.RUNNING}
    assert [get_run(store, run).status for run in (paused_run, running_run)] == [RunState.PAUSED, RunState.RUNNING]
    assert slack_server.calls_to("chat.update") == [] and judge_server.bodies() == []
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert nowhere or (len(refused) == len(clicks) and all(action_id in " ".join(refused) for action_id, _ in clicks))


def judgment_in(store: Store, rubrics, *, team: str | None, channel: str | None) -> int:
    origin = Origin(source="slack" if channel else "cli", team_id=team, channel_id=channel, user_id="U0USER")
    run = start_single_run(store, rubric=rubrics.get("eth"), triple=Triple(question="Secret Q?", reference="R",
                                                                             answer="A"),
                           judge_model="judge-test", origin=origin, message_ts="1700000002.000100" if channel else None)
    judgment = first_judgment(store, run.id)
    assert judgment is not None
    return judgment.id


CARD_BUTTONS = (AGREE, DISAGREE, CORRECT, REJUDGE, RETRY, DETAILS)


async def refused_everywhere(slack, slack_server, judge_server, judgment: int, *, unauthorized_here: bool = False,
                             **where) -> None:
    for action_id in CARD_BUTTONS:
        await slack.click(action_id, str(judgment), message_ts="1700000002.000100", **where)
    for way in ("agree", "disagree"):  # Slack's feedback buttons
        await slack.click(FEEDBACK, f"{way}:{judgment}", message_ts="1700000002.000100", kind="feedback_buttons",
                          **where)
    clicks = len(CARD_BUTTONS) + 2
    said = await told_times(slack_server, clicks)
    assert unauthorized(said) if unauthorized_here else said == [JUDGMENT_NOT_HERE] * clicks
    assert judge_server.bodies() == [] and slack_server.calls_to("views.open") == []
    assert slack_server.calls_to("chat.update") == [] and slack_server.calls_to("chat.postMessage") == []


@pytest.mark.parametrize("where", list(ELSEWHERE))
async def test_card_buttons_refuse_a_click_from_elsewhere(slack, slack_server, judge_server, bot_settings, rubrics,
                                                          where, request):
    store = Store.open(bot_settings.db_url)
    judgment = judgment_in(store, rubrics, team="T0TEST", channel="C0GENERAL")
    channel, team, user_team = ELSEWHERE[where]
    await refused_everywhere(slack, slack_server, judge_server, judgment, channel=channel, team=team,
                             user_team=user_team, unauthorized_here=two_installed(request) and team is None)
    assert feedback_tally(store, judgment_id=judgment) == (0, 0)


@pytest.mark.parametrize("made", ["in a terminal", "without a workspace"])
async def test_card_buttons_refuse_a_judgment_made_without_a_channel_or_a_workspace(slack, slack_server,
                                                                                    judge_server, bot_settings,
                                                                                    rubrics, made):
    store = Store.open(bot_settings.db_url)
    judgment = judgment_in(store, rubrics, team=None, channel=None if made == "in a terminal" else "C0GENERAL")
    await refused_everywhere(slack, slack_server, judge_server, judgment, channel="C0GENERAL")


@pytest.mark.parametrize("text", ["history", "stats", "stats all", "digest", "digest preview", "default", "eth",
                                  "help", INLINE])
async def test_a_command_from_another_workspace_is_refused_and_shows_nothing(slack, slack_server, judge_server,
                                                                             text, caplog, request):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)  # a judgment of this workspace in #general
    await card_of(slack_server)
    payload = slack.command_payload(text) | {"team_id": PARTNER}
    before = len(slack_server.calls)
    answer = await slack.post(urlencode(payload), "application/x-www-form-urlencoded")
    if two_installed(request):  # the partner installed the bot too: its command is its own, answered with its token
        assert answer.status == 200 and (answer.body or {}).get("text") != OTHER_WORKSPACE
        [ours] = slack_server.tokens_of(PARTNER)

        def answered() -> list:  # the calls that answered it, one way or another (in the ack, or after it)
            return [call for call in slack_server.calls[before:] if call.method != "auth.test"]

        if not (answer.body or {}).get("text"):
            await wait_until(answered, what="an answer to the partner's command", timeout=15)
        await asyncio.sleep(0.3)  # anything else it was going to send
        since = [call for call in answered() if call.method != "response_url"]
        assert all(call.token == ours for call in since), [(c.method, c.token) for c in since]
        return
    assert answer.status == 200 and answer.body["text"] == OTHER_WORKSPACE
    await asyncio.sleep(0.3)
    assert told(slack_server) == [] and slack_server.calls_to("views.open") == []
    assert len(judge_server.bodies()) == 1 and len(slack_server.calls_to("chat.postMessage")) == 1
    assert any("refused" in r.getMessage() and PARTNER in r.getMessage() for r in caplog.records)


async def test_history_and_stats_of_this_workspace_are_still_shown(slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command(INLINE)
    await card_of(slack_server)
    await slack.command("history")
    await slack.command("stats")
    replies = [c.params for c in await slack_server.await_for("response_url", count=2)]
    assert "How do I register for exams?" in json.dumps(replies)
    stats = next(reply for reply in replies if reply["text"].startswith("judgebot stats"))
    assert [row["Cases"] for row in table_dicts(stats)] == ["1"]


# -- forms --------------------------------------------------------------------------------------------------


async def opened_form(slack, slack_server) -> dict:
    await slack.command("eth")
    return (await slack_server.await_for("views.open"))[0].params["view"]


def forged(metadata: str, how: str) -> str:
    signature, _, context = metadata.partition(".")
    if how == "channel changed":
        return f"{signature}.{context.replace('C0GENERAL', 'C0SECRET')}"
    if how == "unsigned":
        return context
    if how == "signed with another key":
        return FormSeal("another secret").seal(FormContext.model_validate_json(context))
    return "{not json"


@pytest.mark.parametrize("how", ["channel changed", "unsigned", "signed with another key", "junk"])
async def test_a_form_whose_private_metadata_was_forged_is_refused(slack, slack_server, judge_server, how, caplog):
    view = await opened_form(slack, slack_server)
    view["private_metadata"] = forged(view["private_metadata"], how)
    answer = await slack.submit(view, rubric="eth", question="Q?", reference="R", answer="A")
    assert answer.body == {"response_action": "errors", "errors": {"question": FORM_UNCHECKED}}
    await asyncio.sleep(0.3)
    assert judge_server.bodies() == [] and slack_server.calls_to("chat.postMessage") == [] and told(slack_server) == []
    assert any("form" in r.getMessage() and "refused" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


async def test_a_form_submitted_from_another_workspace_is_refused(slack, slack_server, judge_server):
    view = await opened_form(slack, slack_server)
    answer = await slack.submit(view, rubric="eth", question="Q?", reference="R", answer="A", team=PARTNER)
    assert answer.body["response_action"] == "errors" and answer.body["errors"]["question"] == OTHER_WORKSPACE
    await asyncio.sleep(0.3)
    assert judge_server.bodies() == [] and slack_server.calls_to("chat.postMessage") == []


async def test_in_socket_mode_forms_are_sealed_with_the_app_token(bot_settings, slack_server, judge_server):
    settings = bot_settings.model_copy(update={"slack_app_token": SecretStr(slack_server.app_token),
                                               "slack_signing_secret": None})
    running = await start_bot(settings)
    try:
        await asyncio.to_thread(slack_server.connected.wait, 5)
        slack = SlackSide(slack_server)
        view = await opened_form(slack, slack_server)
        assert FormSeal(slack_server.app_token).open(view["private_metadata"]) is not None
        refused = await slack.submit({**view, "private_metadata": forged(view["private_metadata"], "channel changed")},
                                     rubric="eth", question="Q?", reference="R", answer="A")
        assert refused.body == {"response_action": "errors", "errors": {"question": FORM_UNCHECKED}}
        judge_server.enqueue(eth_reply("Correct"))
        await slack.submit(view, rubric="eth", question="Q?", reference="R", answer="A")
        card = await card_of(slack_server)
        assert card["channel"] == "C0GENERAL" and len(judge_server.bodies()) == 1
    finally:
        await running.stop()


def test_the_seal_binds_every_field_of_the_context():
    seal = FormSeal("secret")
    context = FormContext(team_id="T0TEST", channel_id="C0GENERAL", response_url="https://hooks.slack.test/x")
    metadata = seal.seal(context)
    assert seal.open(metadata) == context
    assert seal.open(metadata.replace("hooks.slack.test", "evil.test")) is None
    assert seal.open(metadata.replace("T0TEST", "T0OTHER")) is None
    assert FormSeal("other").open(metadata) is None and seal.open("") is None


# -- events ---------------------------------------------------------------------------------------------------


async def test_a_file_shared_by_a_person_of_another_workspace_is_not_judged(slack, slack_server, judge_server,
                                                                             bot_settings, caplog):
    file = slack_server.add_file(b"question,reference,answer\nQ?,R,A\n", "answers.csv")
    event = slack_server.file_share_event(file, text="eth") | {"team": PARTNER, "user_team": PARTNER}
    assert (await slack.event(event)).status == 200
    [note] = await slack_server.await_for("chat.postMessage")
    assert note.params["thread_ts"] == event["ts"] and OTHER_WORKSPACE in json.dumps(note.params)
    await asyncio.sleep(0.3)
    assert get_share(Store.open(bot_settings.db_url), share_id=1) is None
    assert slack_server.calls_to("files.info") == [] and judge_server.bodies() == []
    assert any("refused" in r.getMessage() and PARTNER in r.getMessage() for r in caplog.records)


async def test_a_file_shared_by_an_event_naming_no_workspace_is_not_judged(slack, slack_server, judge_server,
                                                                             bot_settings, request):
    file = slack_server.add_file(b"question,reference,answer\nQ?,R,A\n", "answers.csv")
    event = {key: value for key, value in slack_server.file_share_event(file, text="eth").items()
             if key not in ("team", "user_team", "source_team")}
    payload = slack.event_payload(event)
    del payload["team_id"]
    assert (await slack.send_event(payload)).status == 200
    if two_installed(request):  # bolt finds no installation for it: nothing of ours runs, nothing is posted
        await asyncio.sleep(0.5)
        assert slack_server.calls_to("chat.postMessage") == []
    else:
        [note] = await slack_server.await_for("chat.postMessage")
        assert OTHER_WORKSPACE in json.dumps(note.params)
        await asyncio.sleep(0.3)
    assert get_share(Store.open(bot_settings.db_url), share_id=1) is None
    assert slack_server.calls_to("files.info") == [] and judge_server.bodies() == []


async def test_a_file_shared_by_a_person_of_this_workspace_is_taken(slack, slack_server, judge_server, bot_settings):
    judge_server.responder = lambda body: eth_reply("Correct")
    file = slack_server.add_file(b"question,reference,answer\nQ?,R,A\n", "answers.csv")
    event = slack_server.file_share_event(file, text="eth") | {"team": "T0TEST", "user_team": "T0TEST"}
    assert (await slack.event(event)).status == 200
    await slack_server.await_for("chat.postMessage")
    store = Store.open(bot_settings.db_url)
    for _ in range(100):
        if get_share(store, share_id=1) is not None:
            break
        await asyncio.sleep(0.02)
    assert get_share(store, share_id=1) is not None


async def test_app_home_is_not_shown_to_another_workspace(slack, slack_server, judge_server, caplog, request):
    event = {"type": "app_home_opened", "user": "U0GUEST", "channel": "D0HOME", "tab": "home"}
    if two_installed(request):  # the partner's own Home, with its token, shows nothing of this workspace's judgments
        judge_server.enqueue(eth_reply("Correct"))
        await slack.command(INLINE)
        await card_of(slack_server)
        assert (await slack.send_event(slack.event_payload(event) | {"team_id": PARTNER})).status == 200
        [published] = await slack_server.await_for("views.publish")
        assert published.token == slack_server.tokens_of(PARTNER)[0]
        assert "register for exams" not in json.dumps(published.params)
        return
    assert (await slack.send_event(slack.event_payload(event) | {"team_id": PARTNER})).status == 200
    await asyncio.sleep(0.3)
    assert slack_server.calls_to("views.publish") == []
    assert any("refused" in r.getMessage() and PARTNER in r.getMessage() for r in caplog.records)
