"""CSV files shared in Slack, end to end: the real bolt app, slack_sdk and openai clients, local Slack and judge servers."""

from __future__ import annotations

import asyncio
import csv
import io
import json


from bot.slack.file_runs import SUMMARY_EVENT
from bot.store import Store
from tests.replies import eth_reply, triple_of

HEADER = "question,reference,answer,model\n"


def eth_csv(rows: int, *, generic_every: int = 0) -> bytes:
    """A CSV of `rows` rows for two models; every `generic_every`-th answer is generic advice."""
    lines = [HEADER]
    for n in range(1, rows + 1):
        answer = "Ask someone." if generic_every and n % generic_every == 0 else f"Use myStudies ({n})."
        lines.append(f"Question {n}?,Register in myStudies.,{answer},{'bot-a' if n % 2 else 'bot-b'}\n")
    return "".join(lines).encode()


def grade_by_answer(body: dict):
    return eth_reply("Correct" if "myStudies" in triple_of(body)[2] else "Generic")


def blocks_text(message: dict) -> str:
    return json.dumps(message.get("blocks") or [], ensure_ascii=False)


async def wait_until(condition, timeout: float = 20.0, what: str = "condition"):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (found := condition()):
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)
    return found


def summaries(slack_server, channel: str, thread_ts: str) -> list[dict]:
    return [m for m in slack_server.thread(channel, thread_ts)
            if (m.get("metadata") or {}).get("event_type") == SUMMARY_EVENT]


async def finished_thread(slack_server, channel: str, thread_ts: str, timeout: float = 30.0) -> list[dict]:
    """The thread once the results are uploaded (the last step of a run)."""
    await wait_until(lambda: slack_server.uploads(channel, thread_ts), timeout, "the results upload")
    return slack_server.thread(channel, thread_ts)


async def share(slack, slack_server, content: bytes, *, name: str = "answers.csv", text: str = "eth",
                channel: str = "C0GENERAL", thread_ts: str | None = None, **file_options) -> dict:
    """Share a file as a person would; return the message event Slack sent."""
    file = slack_server.add_file(content, name, **file_options)
    event = slack_server.file_share_event(file, channel=channel, text=text, thread_ts=thread_ts)
    answer = await slack.event(event)
    assert answer.status == 200
    return event


def results_rows(upload: dict) -> list[dict]:
    text = upload["content"].decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


async def test_a_shared_csv_is_judged_with_progress_summary_results_and_chart(slack, slack_server, judge_server,
                                                                             bot_settings):
    judge_server.responder = grade_by_answer
    event = await share(slack, slack_server, eth_csv(6, generic_every=3), text="Our export, rubric: eth")
    thread = await finished_thread(slack_server, "C0GENERAL", event["ts"])

    progress, summary = thread[0], summaries(slack_server, "C0GENERAL", event["ts"])
    assert "Judged" in blocks_text(progress) and "6 rows" in blocks_text(progress)
    assert len(summary) == 1
    card = blocks_text(summary[0])
    assert "Results · answers.csv · ETH institutional knowledge audit" in card
    assert "*Scored*\\n6" in card and "*Pass rate*\\n67% (4/6)" in card
    assert "Correct 4 (67%) · Generic 2 (33%)" in card
    assert "bot-a" in card and "bot-b" in card and "row 4: 25/100" in card

    uploads = slack_server.uploads("C0GENERAL", event["ts"])
    names = [u["name"] for u in uploads]
    assert names[0].startswith("answers-results-run") and names[1].endswith(".png")
    assert uploads[1]["content"].startswith(b"\x89PNG\r\n\x1a\n")
    rows = results_rows(uploads[0])
    with Store.open(bot_settings.db_url).session() as session:
        from bot.models import Judgment
        from sqlmodel import select
        saved = {j.row_number: j for j in session.exec(select(Judgment).where(Judgment.channel_id == "C0GENERAL"))}
    assert [int(r["row"]) for r in rows] == list(range(2, 8))
    for row in rows:
        judged = saved[int(row["row"])]
        assert row["question"] == judged.question and row["answer"] == judged.answer
        assert row["result_tag"] == judged.tag and row["status"] == "scored"
        assert float(row["headline"]) == judged.headline and judged.thread_ts == event["ts"]
    assert len(judge_server.bodies()) == 6

    downloads = slack_server.calls_to("file_download")
    assert len(downloads) == 1 and downloads[0].headers["Authorization"] == f"Bearer {slack_server.bot_token}"


async def test_progress_is_edited_at_most_every_three_seconds_with_a_cancel_button(slack, slack_server, judge_server):
    from tests.servers.openai_server import Reply

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.6)
    event = await share(slack, slack_server, eth_csv(160), text="eth")  # 10 rounds of 16
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
    progress_ts = slack_server.thread("C0GENERAL", event["ts"])[0]["ts"]
    edits = [c for c in slack_server.calls_to("chat.update") if c.params.get("ts") == progress_ts]
    assert len(edits) >= 3
    gaps = [b.at - a.at for a, b in zip(edits, edits[1:])]
    assert min(gaps) >= 2.9, gaps
    moving = [e for e in edits if "Cancel" in json.dumps(e.params.get("blocks"))]
    assert moving and "rows/s" in json.dumps(moving[-1].params["blocks"])
