"""Every kind of message the bot sends, driven through the real flows with hostile text from people, files and the
judge: no live mention or disguised link, NUL, lone surrogate, stray code fence or open direction override reaches
Slack, and every message keeps within Block Kit's limits."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bot.slack.views.card import DETAILS
from bot.slack.views.file_run import PICK_RUBRIC, RESUME_RUN, SKIP_AGAIN
from tests.support.openai_server import Reply
from tests.support.replies import triple_of
from tests.support.slack_files import finished_thread, share, wait_until
from tests.support.slack_messages import buttons, card_of

LIVE = ("<!channel>", "<!everyone>", "<!here>", "<@U0VICTIM>", "<#C0SECRET>", "<!subteam^S0TEAM>",
        "<https://evil.example")
HOSTILE = " ".join((*LIVE[:-1], "<https://evil.example|https://good.example>", "```fenced", "\u202eevil"))
LONG = " and so on" * 600  # a cell of some 6,000 characters: every message must still fit Slack's limits
TEX = "$\\bad{$"  # what a chart would try to render as mathematics, and fail on
TYPED = HOSTILE + " \x00nul"  # what a person types may hold a NUL
JSON_TYPED = TYPED + " \ud800lone"  # and, in a JSON payload, a lone surrogate
SENT = ("chat.postMessage", "chat.update", "chat.postEphemeral", "views.open", "views.update", "views.push",
        "views.publish", "response_url", "files.completeUploadExternal")
NOT_SHOWN = {"value", "initial_value", "private_metadata", "metadata", "action_id", "block_id", "callback_id",
             "channel", "channel_id", "ts", "thread_ts", "user_id", "trigger_id", "token", "id", "url"}
OVERRIDES = "\u202a\u202b\u202d\u202e"  # embeddings and overrides, which an isolate must hold
LIMITS = {"section": 3000, "header": 150}
# A phrase of each kind of message, every one of which must have shown the hostile text (escaped) in the sweep.
KINDS = ("Judging with", "*Question*", "*reasoning*", "judge endpoint refused the request", "Judge's reply",
         "Reading", "Which rubric should judge", "chose", "was judged in this thread already", "I cannot judge",
         "Paused", "Results of", "Lowest-scoring rows", "Rows not scored",
         "Latest", "Stats in", "for model", "takes a number", "No rubric named", "Your recent judgments",
         "Digest of the last 7 days")


def judge(body: dict) -> Reply:
    """A verdict whose reasoning is hostile; an answer saying PAUSE gets a refused key, REFUSE a refused request,
    each with a hostile error message."""
    answer = triple_of(body)[2]
    error = {"message": f"endpoint says {HOSTILE}", "type": "invalid_request_error", "code": None}
    if "PAUSE" in answer:
        return Reply(status=401, error=error)
    if "REFUSE" in answer:
        return Reply(status=400, error=error)
    return Reply.json({"correctness": 2, "completeness": 2, "result_tag": "Correct", "reasoning": HOSTILE})


def table(*rows: tuple[str, ...], header: tuple[str, ...] = ("question", "reference", "answer", "model")) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    return out.getvalue().encode()


def row(answer: str) -> tuple[str, ...]:
    return f"Q {HOSTILE}" + LONG, f"R {HOSTILE}", f"{answer} {HOSTILE}", f"{TEX} model {HOSTILE}" + LONG


def strings(value: Any, *, plain: bool = True) -> Iterator[str]:
    """Every text of a call that a person can see; plain_text objects and the text elements of rich text (never parsed
    for mentions: a mention is an element of its own) if `plain`."""
    if isinstance(value, dict):
        if value.get("type") in ("plain_text", "text") and not plain:  # plain text, or a rich text's literal text
            return
        for key, item in value.items():
            if key not in NOT_SHOWN:
                yield from strings(item, plain=plain)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item, plain=plain)
    elif isinstance(value, str):
        yield value


def literal_texts(value: Any) -> Iterator[str]:
    """The text elements of rich text (a table's cells among them), which Slack shows as written."""
    if isinstance(value, dict):
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            yield value["text"]
        for item in value.values():
            yield from literal_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from literal_texts(item)


def isolated(line: str) -> bool:
    """Whether every override in `line` is inside an isolate, and every isolate is closed."""
    depth = 0
    for char in line:
        if char in "\u2066\u2067\u2068":
            depth += 1
        elif char == "\u2069":
            if depth == 0:
                return False
            depth -= 1
        elif char in OVERRIDES and depth == 0:
            return False
    return depth == 0


def over_limits(message: dict) -> list[str]:
    """What in a message (or view) goes beyond Block Kit's limits."""
    problems = []
    blocks = message.get("blocks") or []
    if len(blocks) > (100 if message.get("type") in ("modal", "home") else 50):
        problems.append(f"{len(blocks)} blocks")
    if len(message.get("text") or "") > 40_000:
        problems.append("fallback text")
    for block in blocks:
        text = (block.get("text") or {}).get("text", "") if isinstance(block.get("text"), dict) else ""
        if len(text) > LIMITS.get(block["type"], 3000):
            problems.append(f"{block['type']} of {len(text)} characters")
        problems += [f"element of {len(e['text'])}" for e in block.get("elements") or []
                     if isinstance(e.get("text"), str) and len(e["text"]) > 3000]
    return problems


def shown_everything(slack_server, acks: list[Any]) -> list[tuple[str, Any]]:
    sent = [(call.method, call.params) for call in slack_server.calls if call.method in SENT]
    return sent + [("ack", ack) for ack in acks if ack]


@pytest.mark.slow
async def test_no_hostile_text_is_live_or_breaks_a_message_anywhere(slack, slack_server, judge_server):
    judge_server.responder = judge
    acks = []

    # Cards: inline, from the form (with its Details), and an error card.
    acks.append((await slack.command(f"eth Q {TYPED} || R {TYPED} || A {TYPED}")).body)
    await card_of(slack_server)
    acks.append((await slack.command("eth")).body)
    form = (await slack_server.await_for("views.open"))[0].params["view"]
    acks.append((await slack.submit(form, rubric="eth", model=f"m {JSON_TYPED}", question=f"Q {JSON_TYPED}",
                                    reference=f"R {JSON_TYPED}", answer=f"A {JSON_TYPED}")).body)
    formed = await card_of(slack_server, count=2)
    await slack.click(DETAILS, buttons(formed)[DETAILS], channel="C0GENERAL", message_ts=formed["ts"])
    await slack_server.await_for("views.open", count=2)
    acks.append((await slack.command(f"eth Q {TYPED} || R {TYPED} || REFUSE {TYPED}")).body)
    await card_of(slack_server, count=3)

    # Files, side by side: one judged to its summary and shared again (Don't), one asking for its rubric, one
    # refused, one paused.
    name, thread = f"{HOSTILE}.csv", lambda event: slack_server.thread("C0GENERAL", event["ts"])
    first = await share(slack, slack_server, table(row("A"), row("REFUSE"), row("B")), name=name,
                        text=f"eth {JSON_TYPED}")
    asking = await share(slack, slack_server, table(row("C")), name=name, text="")
    refused = await share(slack, slack_server, table(row("A"), header=(f"question {HOSTILE}", "answer")), name=name)
    paused = await share(slack, slack_server, table(row("PAUSE")), name=name)
    await share(slack, slack_server, table(row("A"), row("REFUSE"), row("B")), name=name, text="eth",
                thread_ts=first["ts"])
    again = await wait_until(lambda: [m for m in thread(first) if SKIP_AGAIN in buttons(m)], timeout=45, what="run again?")
    await slack.click(SKIP_AGAIN, buttons(again[0])[SKIP_AGAIN], channel="C0GENERAL", message_ts=again[0]["ts"])
    question = await wait_until(lambda: [m for m in thread(asking) if buttons(m)], timeout=45,
                              what="the rubric question")
    pick = f"{PICK_RUBRIC}_eth"
    await slack.click(pick, buttons(question[0])[pick], channel="C0GENERAL", message_ts=question[0]["ts"])
    await wait_until(lambda: any("I cannot judge" in m["text"] for m in thread(refused)), what="the refusal")
    await wait_until(lambda: any(RESUME_RUN in buttons(m) for m in thread(paused)), what="the paused run")
    await finished_thread(slack_server, "C0GENERAL", first["ts"])
    await finished_thread(slack_server, "C0GENERAL", asking["ts"])

    # What the history shows: history, stats, App Home, digests; and commands refused with hostile words.
    for text in ("history 40", "stats all", f"stats all model {TYPED}", f"history {TYPED}", f"{TYPED}",
                 "digest preview"):
        acks.append((await slack.command(text)).body)
    await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
    acks.append((await slack.command("digest now")).body)
    await slack_server.await_for("views.publish")
    await slack_server.await_for("response_url", count=4)
    await wait_until(lambda: any("Trend" in (c.params.get("initial_comment") or "")
                                 for c in slack_server.calls_to("files.completeUploadExternal")), what="the digest")

    sent = shown_everything(slack_server, acks)
    assert len(sent) > 30
    for method, params in sent:
        everything = json.dumps(params, ensure_ascii=False)
        for text in strings(params, plain=False):
            assert not [live for live in LIVE if live in text], (method, text)
        for text in strings(params):
            assert "```fenced" not in text, (method, text)
            assert not re.search("[\x00\ud800-\udfff]", text), (method, text)
            assert all(isolated(line) for line in text.split("\n")), (method, text)
        message = params.get("view") if isinstance(params.get("view"), dict) else params
        assert not over_limits(message), (method, over_limits(message), everything[:300])
    dumps = [json.dumps(params, ensure_ascii=False) for _, params in sent]
    shown = [("&lt;!channel&gt;" in dump or any("<!channel>" in text for text in literal_texts(params)))
             for dump, (_, params) in zip(dumps, sent)]
    reached = [kind for kind in KINDS if not any(kind in dump and hostile for dump, hostile in zip(dumps, shown))]
    assert not reached, f"no message of these kinds showed the hostile text: {reached}"
