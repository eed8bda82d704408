"""Slack's edges: downloads behind a corporate proxy, a sign-in page's causes, the Details modal within Slack's limits."""

from __future__ import annotations

import json

import pytest

from tests.support.proxy_server import ForwardingProxy
from tests.support.slack_files import eth_csv, finished_thread, grade_by_answer, reply_to, share

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY",
                   "all_proxy")


@pytest.fixture
def proxy(monkeypatch):
    """A local forwarding proxy, with every proxy variable of the environment cleared for the test to set."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    server = ForwardingProxy().start()
    yield server
    server.stop()


# --- downloads behind a proxy -----------------------------------------------------------------------------------


async def test_the_download_goes_through_the_proxy_that_https_proxy_names(slack, slack_server, judge_server, proxy,
                                                                         monkeypatch):
    judge_server.responder = grade_by_answer
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    event = await share(slack, slack_server, eth_csv(2), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    [download] = slack_server.calls_to("file_download")
    # slack_sdk's own clients (the bot's Web API calls) take the same proxy: auth.test and the rest pass there too
    assert f"{slack_server.base_url}{download.path}" in proxy.targets
    assert download.headers["Authorization"] == f"Bearer {slack_server.bot_token}"
    assert len(judge_server.bodies()) == 2


async def test_a_host_that_no_proxy_names_is_fetched_directly(slack, slack_server, judge_server, proxy, monkeypatch):
    judge_server.responder = grade_by_answer
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    event = await share(slack, slack_server, eth_csv(2), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert len(slack_server.calls_to("file_download")) == 1
    assert proxy.targets and not [target for target in proxy.targets if "/files-pri/" in target]  # the API calls
    # still pass the proxy: slack_sdk's client reads HTTPS_PROXY alone, the download NO_PROXY as well


# --- a sign-in page instead of the file -------------------------------------------------------------------------


async def test_a_sign_in_page_names_every_cause_not_only_the_permission(slack, slack_server, judge_server):
    event = await share(slack, slack_server, eth_csv(2), text="eth", serve="html")
    text = await reply_to(slack_server, event)
    assert "`files:read`" in text and "reinstalls the app" in text
    assert "not a member of the channel" in text and "`/invite`" in text
    assert "another workspace (a Slack Connect channel)" in text and "an external file" in text
    assert judge_server.bodies() == []


# --- the Details modal within Slack's limits --------------------------------------------------------------------

# A judge that rambles in Arabic without ever giving JSON: the reply is kept whole, and in UTF-8 each letter takes two
# bytes, so the modal's cut must count bytes, not characters.
RAMBLING = "لا أستطيع أن أقيّم هذه الإجابة دون مزيد من السياق. " * 6_000  # 306,000 characters, 546 kB


async def test_details_of_a_huge_reply_with_samples_fits_slacks_limits_and_says_where_the_rest_is(
        slack, slack_server, judge_server):
    from tests.support.openai_server import Reply
    from tests.support.slack_messages import buttons, card_of
    from tests.support.slack_server import VIEW_BYTES, view_problems

    judge_server.responder = lambda body: Reply(content=RAMBLING)
    await slack.command("eth samples=3 Where do I print? || Web Print. || " + "Ask IT. " * 400)
    card = await card_of(slack_server, timeout=30)
    await slack.click("judgebot_details", buttons(card)["judgebot_details"], channel="C0GENERAL",
                      message_ts=card["ts"])
    view = (await slack_server.await_for("views.open"))[0].params["view"]
    assert view_problems(view) == []  # what Slack would refuse with invalid_arguments
    size = len(json.dumps(view, ensure_ascii=False).encode("utf-8"))
    assert size <= VIEW_BYTES and len(view["blocks"]) <= 100
    texts = [block["text"]["text"] for block in view["blocks"] if block["type"] == "section"]
    assert texts[1].startswith("*3 samples*") and texts[1].count("• `judge-test` #") == 3
    shown = "".join(text.strip("`").strip("\u2067\u2069") for text in texts[2:])  # each piece isolated right to left
    assert len(shown) > 100_000 and RAMBLING.startswith(shown)
    note = view["blocks"][-1]["elements"][0]["text"]
    assert note.startswith("_… Cut here: the reply is 306,000 characters, more than a Slack modal holds.")
    assert "The whole reply is in the card's thread as `judgment-" in note and "-details.txt`" in note
    # the rest goes to the card's thread once: every sample and the whole reply, as a file
    posted = await wait_for_upload(slack_server, card["ts"])
    assert posted["name"].endswith("-details.txt") and posted["name"] in note
    text = posted["content"].decode("utf-8")
    assert RAMBLING in text and text.count("sample judge-test #") == 3
    await slack.click("judgebot_details", buttons(card)["judgebot_details"], channel="C0GENERAL",
                      message_ts=card["ts"])
    await slack_server.await_for("views.open", count=2)
    assert len(slack_server.uploads("C0GENERAL", card["ts"])) == 1  # a second look posts nothing again


async def wait_for_upload(slack_server, thread_ts: str) -> dict:
    """The first file uploaded into a thread of #general, once it is there."""
    from tests.support.slack_files import wait_until

    found = await wait_until(lambda: slack_server.uploads("C0GENERAL", thread_ts), what="the details file")
    return found[0]


def test_details_with_more_samples_than_a_modal_holds_keeps_room_for_the_reply(rubrics):
    from bot.slack.views.details import reply_view
    from bot.store import JudgmentSample
    from tests.support.scored_judgments import ETH_CORRECT, scored
    from tests.support.slack_server import VIEW_BYTES, view_problems

    eth = rubrics.get("eth")
    output = {**ETH_CORRECT, "reasoning": RAMBLING}
    samples = [JudgmentSample(judgment_id=42, run_id=1, judge_model=f"judge-{n % 7}", sample=n, status="error",
                              error="مهلة " * 200) for n in range(1, 2_001)]
    view = reply_view(scored(eth, output, raw_reply=json.dumps(output, ensure_ascii=False)), samples).to_dict()
    assert view_problems(view) == [] and len(json.dumps(view, ensure_ascii=False).encode("utf-8")) <= VIEW_BYTES
    notes = [block["elements"][0]["text"] for block in view["blocks"] if block["type"] == "context"]
    assert notes[0] == ("_… Cut here: more samples than a Slack modal holds; the card counts them all, and the card's "
                        "thread lists every one in `judgment-42-details.txt`._")
    assert notes[1].startswith("_… Cut here: the reply is ")
    assert "The whole reply is in the card's thread as `judgment-42-details.txt`" in notes[1]
    codes = [block for block in view["blocks"] if block["type"] == "section" and "```" in block["text"]["text"]]
    assert len(codes) >= 10  # the samples took at most half the room
