"""Benchmark replicas on one PostgreSQL database: one large file judged by 1, 2 and 3 processes, and a kill -9 loop.

Real `judgebot serve` processes (the first a Slack replica in HTTP mode, the others `--workers-only`) on a fresh
schema of the PostgreSQL server at DATABASE_URL (default: the local one, database `test`), against the local Slack and
judge servers of the tests, which run in this process. Each replica judges at most CONCURRENCY rows at once (the
default, 16): with the judge's latency L a replica's pace is at most CONCURRENCY / L rows a second, and another
replica adds as much again. Each replica is a process of its own; by default the operating system shares the
machine's cores among them (and the servers of this process), and `--cpu 0,1` pins replica i to core i mod 2 with
`taskset`. Run by hand, e.g.:

    python bench/bench_replicas.py scale --rows 20000 --latency 0.2
    python bench/bench_replicas.py kills --runs 8 --rows 1500 --latency 0.05 --kills 24
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa

from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.serve_process import free_port
from tests.support.slack_files import eth_csv
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SlackSide

SECRET = "bench-signing-secret"
POSTGRES = os.environ.get("DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SUMMARY_EVENT = "judgebot_run_summary"


@dataclass
class Judge:
    """The judge's replies, each after `latency`, with when each question was asked (UTC, as the history keeps it)."""

    latency: float
    asks: dict[str, list[datetime]] = field(default_factory=lambda: collections.defaultdict(list))

    def __call__(self, body: dict) -> Reply:
        question = triple_of(body)[0]
        self.asks[question].append(datetime.now(UTC).replace(tzinfo=None))
        tag = "Correct" if "myStudies" in triple_of(body)[2] else "Generic"
        return Reply(content=eth_reply(tag).content, delay=self.latency)


class Schema:
    """A fresh PostgreSQL schema for one measurement, dropped at the end."""

    def __init__(self) -> None:
        self.admin = sa.create_engine(POSTGRES)
        self.name = f"bench_{uuid.uuid4().hex[:10]}"
        with self.admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{self.name}"'))
        separator = "&" if "?" in POSTGRES else "?"
        self.url = f"{POSTGRES}{separator}options=-csearch_path%3D{self.name}"

    def query(self, sql: str) -> list[tuple]:
        with self.admin.connect() as conn:
            conn.execute(sa.text(f'SET search_path TO "{self.name}"'))
            return [tuple(row) for row in conn.execute(sa.text(sql))]

    def drop(self) -> None:
        with self.admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{self.name}" CASCADE'))
        self.admin.dispose()


class Fleet:
    """The replicas: started, killed with SIGKILL, started again, stopped with SIGTERM."""

    def __init__(self, slack: FakeSlackServer, judge: FakeJudgeServer, db_url: str, cpus: list[str] | None) -> None:
        self.slack, self.judge, self.db_url, self.cpus = slack, judge, db_url, cpus
        self.folder = Path(tempfile.mkdtemp(prefix="judgebot-replicas-"))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.ports: dict[int, int] = {}
        self.kills = 0

    def start(self, index: int, *, slack: bool) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "JUDGE", "DATABASE"))}
        env |= {"SLACK_BOT_TOKEN": self.slack.bot_token, "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_URL": self.slack.api_url, "OPENAI_BASE_URL": self.judge.base_url,
                "OPENAI_API_KEY": "bench", "JUDGE_MODEL": "judge-bench", "DATABASE_URL": self.db_url,
                "CONFIRM_ABOVE_REQUESTS": "1000000"}
        argv = [sys.executable, "-m", "bot", "serve"]
        if slack:
            self.ports.setdefault(index, free_port())
            env["PORT"] = str(self.ports[index])
        else:
            argv.append("--workers-only")
        if self.cpus:
            argv = ["taskset", "-c", self.cpus[index % len(self.cpus)], *argv]
        log = (self.folder / f"replica{index}.log").open("ab")
        self.procs[index] = subprocess.Popen(argv, cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT)

    def kill(self, index: int) -> None:
        self.procs[index].send_signal(signal.SIGKILL)
        self.procs[index].wait(30)
        self.kills += 1

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()

    async def side(self, index: int) -> SlackSide:
        side = SlackSide(self.slack, url=f"http://127.0.0.1:{self.ports[index]}/slack/events", secret=SECRET)
        for _ in range(600):
            try:
                if (await side.command("help")).status == 200:
                    return side
            except OSError:
                pass
            await asyncio.sleep(0.05)
        raise SystemExit(f"replica {index} never answered")


def summaries(slack: FakeSlackServer, thread_ts: str) -> int:
    return sum((m.get("metadata") or {}).get("event_type") == SUMMARY_EVENT for m in slack.thread("C0GENERAL", thread_ts))


async def finished(slack: FakeSlackServer, thread_ts: str, timeout: float) -> float:
    started = time.monotonic()
    while not (slack.uploads("C0GENERAL", thread_ts) and any(m["text"].startswith("Finished")
                                                             for m in slack.thread("C0GENERAL", thread_ts))):
        if time.monotonic() - started > timeout:
            raise SystemExit(f"the run of thread {thread_ts} did not finish within {timeout:.0f} s")
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def scale(args: argparse.Namespace) -> None:
    """One file of `rows` rows judged by 1, 2 and 3 replicas: wall time from the share to the summary, rows a second."""
    print(f"{args.rows:,} rows, judge latency {args.latency * 1000:.0f} ms, CONCURRENCY 16 per replica, "
          f"{os.cpu_count()} cores{'; replicas pinned to cores ' + args.cpu if args.cpu else ''}")
    for count in args.replicas:
        judge_side = Judge(args.latency)
        judge, slack, schema = FakeJudgeServer(judge_side).start(), FakeSlackServer().start(), Schema()
        fleet = Fleet(slack, judge, schema.url, args.cpu.split(",") if args.cpu else None)
        try:
            fleet.start(0, slack=True)
            side = await fleet.side(0)  # the schema is made by the first one; the others start on it
            for index in range(1, count):
                fleet.start(index, slack=False)
            await asyncio.sleep(3)  # the workers are up
            file = slack.add_file(eth_csv(args.rows), "answers.csv")
            event = slack.file_share_event(file, text="eth")
            started = time.monotonic()
            await side.event(event)
            took = await finished(slack, event["ts"], timeout=3600)
            by = schema.query("SELECT claimed_by, count(*) FROM judgment GROUP BY claimed_by ORDER BY 2 DESC")
            asked = sum(len(times) for times in judge_side.asks.values())
            print(f"{count} replica{'s' if count > 1 else ' '}: {took:7.1f} s  {args.rows / took:6.1f} rows/s  "
                  f"(ideal {args.rows / (16 * count / args.latency):.1f} s)  rows per replica "
                  f"{[n for _, n in by]}  judge requests {asked:,}  summaries {summaries(slack, event['ts'])}  "
                  f"took {time.monotonic() - started:.1f} s")
        finally:
            fleet.stop()
            slack.stop()
            judge.stop()
            schema.drop()


async def kills(args: argparse.Namespace) -> None:
    """Runs judged by two Slack replicas and a worker while random replicas are killed with SIGKILL and started
    again: rows lost, saved rows judged again, summaries per run."""
    judge_side = Judge(args.latency)
    judge, slack, schema = FakeJudgeServer(judge_side).start(), FakeSlackServer().start(), Schema()
    fleet = Fleet(slack, judge, schema.url, None)
    rng = random.Random(args.seed)
    threads: list[str] = []
    try:
        fleet.start(0, slack=True)
        await fleet.side(0)
        fleet.start(1, slack=True)
        fleet.start(2, slack=False)
        sides = {0: await fleet.side(0), 1: await fleet.side(1)}
        per_run = -(-args.kills // args.runs)
        for number in range(args.runs):
            target = rng.choice([0, 1])
            if fleet.procs[target].poll() is not None:
                target = 1 - target
            file = slack.add_file(eth_csv(args.rows).replace(b"Question ", f"Run {number} question ".encode()),
                                  f"answers-{number}.csv")
            event = slack.file_share_event(file, text="eth")
            threads.append(event["ts"])
            await sides[target].event(event)
            for _ in range(per_run):
                if fleet.kills >= args.kills:
                    break
                await asyncio.sleep(rng.uniform(0.5, 2.5))
                victim = rng.choice([0, 1, 2])
                fleet.kill(victim)
                await asyncio.sleep(rng.uniform(0.2, 1.0))
                fleet.start(victim, slack=victim != 2)
                if victim != 2:
                    sides[victim] = await fleet.side(victim)
            await finished(slack, event["ts"], timeout=600)
        print(f"{args.runs} runs of {args.rows:,} rows, {fleet.kills} kills with SIGKILL (each replica started again)")
        rows = schema.query("SELECT question, status, judged_at FROM judgment")
        lost = [question for question, status, _ in rows if status != "scored"]
        again = [question for question, _, judged_at in rows
                 if any(asked > judged_at for asked in judge_side.asks.get(question, []))]
        twice = sum(1 for times in judge_side.asks.values() if len(times) > 1)
        counts = [summaries(slack, ts) for ts in threads]
        runs = schema.query("SELECT status, count(*) FROM run GROUP BY status")
        print(f"rows {len(rows):,}: not scored {len(lost)}; saved verdicts judged again {len(again)}; "
              f"rows asked twice (in flight or unsaved at a kill) {twice}")
        print(f"summaries per run {counts}; runs by status {dict(runs)}")
    finally:
        fleet.stop()
        slack.stop()
        judge.stop()
        schema.drop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    scaled = sub.add_parser("scale", help="one file judged by 1, 2 and 3 replicas")
    scaled.add_argument("--rows", type=int, default=20_000)
    scaled.add_argument("--latency", type=float, default=0.2)
    scaled.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3])
    scaled.add_argument("--cpu", default="", help="pin replica i to core list CPU[i %% n], comma-separated (taskset)")
    killed = sub.add_parser("kills", help="runs judged while random replicas are killed with SIGKILL")
    killed.add_argument("--runs", type=int, default=8)
    killed.add_argument("--rows", type=int, default=1500)
    killed.add_argument("--latency", type=float, default=0.05)
    killed.add_argument("--kills", type=int, default=24)
    killed.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(scale(args) if args.what == "scale" else kills(args))
