"""Benchmark a CSV shared in a Slack thread: wall time from the share to the summary, progress edits, peak RSS.

Two processes: this one runs the local Slack and judge servers (in threads) and plays Slack's side; the
bot runs as `judgebot serve` in HTTP mode, exactly as deployed. A CSV of N rows is shared in a thread;
the figures are the wall time until the summary card and until the results upload, against the ideal
N / C x L, the number of edits of the progress message, and the bot's peak RSS (VmHWM). Run by hand:

    python bench/bench_slack_file.py --rows 2000 --latency 0.2 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VERDICT = json.dumps({"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names the portal."})
SECRET = "bench-signing-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_csv(rows: int) -> bytes:
    lines = ["question,reference,answer,model"]
    for i in range(rows):
        lines.append(f"Question {i}: how do I register for exams at ETH?,Exam registration is done in myStudies "
                     f"(ETHIS).,Answer {i}: use myStudies.,bot-v{i % 3}")
    return ("\n".join(lines) + "\n").encode()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main(rows: int, latency: float, concurrency: int) -> None:
    from bot.slack.flows.file_summary import SUMMARY_EVENT
    from tests.support.openai_server import FakeJudgeServer, Reply
    from tests.support.slack_server import FakeSlackServer
    from tests.support.slack_side import SlackSide

    judge = FakeJudgeServer(lambda body: Reply(content=VERDICT), latency=latency).start()
    slack = FakeSlackServer().start()
    port = free_port()
    folder = tempfile.mkdtemp(prefix="judgebot-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "JUDGE"))}
    env |= {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url,
            "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "bench", "JUDGE_MODEL": "judge-bench",
            "JUDGEBOT_DB": f"{folder}/history.db", "PORT": str(port), "CONCURRENCY": str(concurrency)}
    bot = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=folder, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        side = SlackSide(slack, url=f"http://127.0.0.1:{port}/slack/events", secret=SECRET)
        for _ in range(400):
            try:
                if (await side.command("help")).status == 200:
                    break
            except OSError:
                await asyncio.sleep(0.05)
        parent = slack.file_share_event(slack.add_file(b"\x89PNG\r\n\x1a\n", "chart.png"), text="our eval set")
        file = slack.add_file(make_csv(rows), "answers.csv")
        event = slack.file_share_event(file, text="eth", thread_ts=parent["ts"])
        started = time.perf_counter()
        shared = time.monotonic()  # the judge server's clock
        await side.event(event)
        summary_at = uploaded_at = None
        while uploaded_at is None:
            await asyncio.sleep(0.05)
            thread = slack.thread("C0GENERAL", parent["ts"])
            if summary_at is None and any((m.get("metadata") or {}).get("event_type") == SUMMARY_EVENT
                                          for m in thread):
                summary_at = time.perf_counter() - started
            if slack.uploads("C0GENERAL", parent["ts"]):
                uploaded_at = time.perf_counter() - started
            if time.perf_counter() - started > 600:
                raise SystemExit("no summary within 10 minutes")
        progress_ts = next(m["ts"] for m in slack.thread("C0GENERAL", parent["ts"]) if "answers.csv" in m["text"])
        edits = [c for c in slack.calls_to("chat.update") if c.params.get("ts") == progress_ts]
        gaps = [b.at - a.at for a, b in zip(edits, edits[1:])]
        rss = peak_rss_mb(bot.pid)
        ideal = rows / concurrency * latency
        print(f"rows {rows}  judge latency {latency * 1000:.0f} ms  concurrency {concurrency}")
        print(f"share -> summary card     {summary_at:.1f} s  (ideal N/C x L = {ideal:.1f} s: "
              f"{ideal / summary_at:.0%} of ideal)")
        print(f"share -> results uploaded {uploaded_at:.1f} s")
        arrivals = judge.arrivals
        print(f"  share -> first request  {arrivals[0] - shared:.1f} s (fetching, reading and saving the rows)")
        spread = (rows - concurrency) / concurrency * latency  # the last wave is sent one latency before the end
        print(f"  first -> last request   {arrivals[-1] - arrivals[0]:.1f} s (ideal {spread:.1f} s)")
        print(f"  last request -> summary {summary_at - (arrivals[-1] - shared):.1f} s (its reply, the last saves, the card)")
        print(f"progress message edits    {len(edits)}  (shortest gap {min(gaps, default=0):.2f} s)")
        appends = slack.calls_to("chat.appendStream")
        spaced = [b.at - a.at for a, b in zip(appends, appends[1:])]
        print(f"progress stream appends   {len(appends)}  (shortest gap {min(spaced, default=0):.2f} s; "
              f"streams started {len(slack.calls_to('chat.startStream'))})")
        print(f"judge requests            {len(judge.bodies())}")
        print(f"bot peak RSS              {rss:.0f} MB")
    finally:
        bot.send_signal(signal.SIGTERM)
        try:
            bot.wait(30)
        except subprocess.TimeoutExpired:
            bot.kill()
        slack.stop()
        judge.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the judge takes per request")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(main(args.rows, args.latency, args.concurrency))
