"""CSV files shared in Slack as a person would share them, and the bot's thread about them: replies, summaries, results."""

from __future__ import annotations

import asyncio
import csv
import io
import json

from bot.slack.flows.file_summary import SUMMARY_EVENT
from tests.support.replies import eth_reply, triple_of

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


def posted(slack_server, channel: str, thread_ts: str) -> list[dict]:
    """The thread's messages other than progress streams: progress message, summary, results, notes."""
    return [m for m in slack_server.thread(channel, thread_ts) if not m.get("stream")]


def streams(slack_server, channel: str, thread_ts: str) -> list[dict]:
    """The thread's streamed progress messages, oldest first."""
    return [m for m in slack_server.thread(channel, thread_ts) if m.get("stream")]


def task_details(stream: dict, task: str) -> list[str]:
    """Every details text a stream's task was given, in order."""
    return [c.get("details") or "" for c in stream["chunks"] if c["type"] == "task_update" and c["id"] == task]


async def finished_thread(slack_server, channel: str, thread_ts: str, timeout: float = 30.0) -> list[dict]:
    """The thread once the results are uploaded and the progress message shows the end (the last steps of a run)."""
    def ended() -> bool:
        thread = slack_server.thread(channel, thread_ts)
        return bool(slack_server.uploads(channel, thread_ts)) and any(
            m["text"].startswith("Finished") for m in thread)

    await wait_until(ended, timeout, "the end of the run")
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


async def reply_to(slack_server, event: dict) -> str:
    reply = (await wait_until(lambda: slack_server.thread(event["channel"], event["ts"]), what="a reply"))[0]
    return reply["text"] + blocks_text(reply)
