"""Benchmark the bot's time to ack: concurrent signed `/judge` commands in HTTP mode while a big run is judged.

Three processes: the local Slack and judge servers; the bot (`start_bot` in HTTP mode) judging an
N-row run in its own event loop, as a CSV run does; and this driver, which fires the commands at
once and times each HTTP answer (the ack). Prints p50 / p99 / max time to ack, and how far the run
got meanwhile. Run by hand, e.g.:

    python bench/bench_slack_ack.py --requests 100 --rows 2000 --latency 0.2 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VERDICT = json.dumps({"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names the portal."})
SECRET = "bench-signing-secret"


def serve_fakes(latency: float) -> None:
    """Role `servers`: the local Slack and judge servers, until stdin closes."""
    from tests.support.openai_server import FakeJudgeServer, Reply
    from tests.support.slack_server import FakeSlackServer

    judge = FakeJudgeServer(lambda body: Reply(content=VERDICT), latency=latency).start()
    slack = FakeSlackServer().start()
    print(json.dumps({"judge": judge.base_url, "slack": slack.api_url, "token": slack.bot_token,
                      "response": slack.response_url("bench")}), flush=True)
    sys.stdin.read()


async def run_bot(rows: int, concurrency: int) -> None:
    """Role `bot`: the bot in HTTP mode, and a run of `rows` rows judged in the same event loop."""
    from bot.config import Settings
    from bot.csvfiles.rows import CsvRow
    from bot.runs import Origin, execute_run, start_run
    from bot.slack.server import start_bot

    gc.freeze()  # as `judgebot serve` does after start-up
    settings = Settings(_env_file=None)
    running = await start_bot(settings, host="127.0.0.1")
    bot = running.context
    rubric = bot.rubrics.get("eth")
    triples = (CsvRow(line=i + 2, question=f"Question {i}: how do I register for exams at ETH?",
                      reference="Exam registration is done in myStudies (ETHIS).", answer=f"Answer {i}: myStudies.",
                      model=f"bot-v{i % 3}", cells={}) for i in range(rows))
    run = await asyncio.to_thread(start_run, bot.store, rubric=rubric, rows=triples, judge_model=bot.judge.model,
                                  columns=["question", "reference", "answer", "model"],
                                  origin=Origin(source="bench", channel_id="C0GENERAL"))
    done = {"rows": 0}

    def progress(p) -> None:  # type: ignore[no-untyped-def]
        done["rows"] = p.done
        if p.done == 100:
            print(json.dumps({"port": running.port, "running": True}), flush=True)

    started = time.perf_counter()
    judging = asyncio.create_task(execute_run(bot.store, run, rubric, bot.judge, concurrency=concurrency,
                                              on_progress=progress))
    await asyncio.to_thread(sys.stdin.readline)  # the driver says when its burst is over
    print(json.dumps({"rows_done_at_burst_end": done["rows"]}), flush=True)
    outcome = await judging
    print(json.dumps({"run": outcome.status, "rows": rows, "seconds": time.perf_counter() - started}), flush=True)
    await running.stop()


async def burst(port: int, requests: int, response_url: str) -> list[float]:
    """Send `requests` signed inline commands at once; the seconds each took to be acknowledged."""
    import aiohttp
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(SECRET)
    url = f"http://127.0.0.1:{port}/slack/events"

    async def one(session: aiohttp.ClientSession, n: int) -> float:
        body = urlencode({"team_id": "T0TEST", "channel_id": "C0GENERAL", "user_id": f"U{n:05d}", "command": "/judge",
                          "text": f"eth Burst question {n}? || myStudies (ETHIS) || Use myStudies.",
                          "response_url": response_url, "trigger_id": f"t.{n}", "api_app_id": "A0TEST"})
        stamp = str(int(time.time()))
        headers = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": stamp,
                   "X-Slack-Signature": verifier.generate_signature(timestamp=stamp, body=body)}
        started = time.perf_counter()
        async with session.post(url, data=body.encode(), headers=headers) as response:
            await response.read()
            assert response.status == 200, response.status
        return time.perf_counter() - started

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await one(session, 0)  # warm up: bolt's first request checks the token with auth.test
        return list(await asyncio.gather(*(one(session, n) for n in range(1, requests + 1))))


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of `values` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the judge takes per reply")
    parser.add_argument("--concurrency", type=int, default=32, help="judge requests in flight for the run")
    parser.add_argument("--role", choices=["driver", "servers", "bot"], default="driver", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "servers":
        return serve_fakes(args.latency)
    if args.role == "bot":
        return asyncio.run(run_bot(args.rows, args.concurrency))

    me = [sys.executable, str(Path(__file__).resolve())]
    servers = subprocess.Popen([*me, "--role", "servers", "--latency", str(args.latency)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    fakes = json.loads(servers.stdout.readline())  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SLACK_BOT_TOKEN": fakes["token"], "SLACK_SIGNING_SECRET": SECRET,
               "SLACK_API_URL": fakes["slack"], "OPENAI_BASE_URL": fakes["judge"], "OPENAI_API_KEY": "bench",
               "JUDGE_MODEL": "bench-judge", "JUDGEBOT_DB": str(Path(tmp) / "bench.db"), "PORT": "0",
               "CONCURRENCY": str(max(args.concurrency, 64))}
        env.pop("SLACK_APP_TOKEN", None)
        bot = subprocess.Popen([*me, "--role", "bot", "--rows", str(args.rows), "--concurrency",
                                str(args.concurrency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               env=env)
        try:
            ready = json.loads(bot.stdout.readline())  # type: ignore[union-attr]
            acks = asyncio.run(burst(ready["port"], args.requests, fakes["response"]))
            bot.stdin.write("burst over\n")  # type: ignore[union-attr]
            bot.stdin.flush()  # type: ignore[union-attr]
            during = json.loads(bot.stdout.readline())  # type: ignore[union-attr]
            finished = json.loads(bot.stdout.readline())  # type: ignore[union-attr]
        finally:
            bot.wait(60)
            servers.stdin.close()  # type: ignore[union-attr]
            servers.wait(10)
    ms = [a * 1000 for a in acks]
    print(f"{args.requests} concurrent signed /judge commands, HTTP mode, during a {args.rows}-row run "
          f"(judge latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency})")
    print(f"time to ack: p50 {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
          f"max {max(ms):.1f} ms, mean {statistics.fmean(ms):.1f} ms")
    print(f"run in progress during the burst: {during['rows_done_at_burst_end']}/{args.rows} rows done at its end; "
          f"run {finished['run']} in {finished['seconds']:.1f} s")


if __name__ == "__main__":
    main()
