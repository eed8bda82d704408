"""Benchmark `judgebot judge`: N rows against a local judge answering after L seconds, concurrency C.

Prints wall time, rows/s, the ideal C/L rows/s and the ratio, CPU time per row and peak RSS of the
judgebot process, and the same figures of a plain AsyncOpenAI loop over the same rows in the same run (one
process, a semaphore of C, json.loads of each reply; no history, no validation): the yardstick, since this
machine's speed drifts from day to day. Run by hand, e.g.:

    python bench/bench_judge.py --rows 2000 --latency 0.2 --concurrency 32
    python bench/bench_judge.py --rows 100000 --latency 0 --concurrency 32
    python bench/bench_judge.py --rows 640 --latency 0.2 --concurrency 32 --samples 3

With --samples N each row is judged N times (and the plain loop sends each row N times): the ideal is then N times
the single-sample one, and CPU is given per judgment (per request that got a verdict) as well as per row.

With --load X the machine is shared while it measures: busy processes (one per whole unit of X, one more busy that
share of the time) keep the load average about X, as other work on a shared machine would. With --runs K judgebot
and the plain loop take turns K times each and the wall-time ratios are summarised (median, range):

    python bench/bench_judge.py --rows 640 --latency 0.2 --concurrency 32 --load 1.5 --runs 5

With --rubric faithfulness --context-tokens 2000 each row carries retrieved passages of about that many tokens (four
passages, as a JSON list in a `contexts` column) and judgebot grades them with the shipped faithfulness rubric; the
plain loop sends the same rubric's system prompt and a user message holding the question, the numbered passages and
the answer, so that both send prompts of the same size:

    python bench/bench_judge.py --rows 640 --latency 0.2 --concurrency 32 --rubric faithfulness --context-tokens 2000
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.openai_server import FakeJudgeServer, Reply

VERDICTS = {
    "eth": json.dumps({"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names the portal."}),
    "faithfulness": json.dumps({"claims": [{"claim": "Registration is in myStudies.", "verdict": "supported",
                                            "passage": 1}], "result_tag": "Faithful"}),
}
PASSAGES = 4  # retrieved passages a row, with --context-tokens


def passages(i: int, tokens: int) -> list[str]:
    """About `tokens` tokens of retrieved text for row `i` (about four characters a token), in PASSAGES passages."""
    words = max(1, tokens * 4 // PASSAGES // 7)  # "word " of about seven characters
    return [f"Passage {n} of row {i}: " + " ".join(f"term{(i * 7 + n * 13 + k) % 997}" for k in range(words))
            for n in range(1, PASSAGES + 1)]


def write_csv(path: Path, rows: int, context_tokens: int = 0) -> None:
    """A CSV of `rows` distinct triples (distinct so the cache cannot help), with retrieved passages when asked."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "reference", "answer", "model", *(["contexts"] if context_tokens else [])])
        for i in range(rows):
            writer.writerow([
                f"Question {i}: how do I register for exams at ETH?",
                "Exam registration is done in myStudies (ETHIS) during the registration period.",
                f"Answer {i}: register in myStudies during the registration window.",
                f"bot-v{i % 3}",
                *([json.dumps(passages(i, context_tokens))] if context_tokens else []),
            ])


def system_prompt(rubric: str) -> str:
    """The system prompt the plain loop sends: the shipped rubric's own, so both send prompts of the same size."""
    import yaml

    if rubric == "eth":
        return "Grade the answer against the reference; reply in JSON."
    path = Path(__file__).resolve().parent.parent / "rubrics" / f"{rubric}.yaml"
    return str(yaml.safe_load(path.read_text(encoding="utf-8"))["system"])


async def plain_loop(data: Path, base_url: str, concurrency: int, samples: int = 1, rubric: str = "eth") -> int:
    """What judging costs with nothing around it: each row's request through AsyncOpenAI, C at a time."""
    import asyncio

    from openai import AsyncOpenAI, DefaultAioHttpClient

    client = AsyncOpenAI(api_key="bench", base_url=base_url, max_retries=0, http_client=DefaultAioHttpClient())
    gate = asyncio.Semaphore(concurrency)
    system = system_prompt(rubric)

    async def one(row: dict[str, str]) -> bool:
        context = "\n\n".join(f"[{n}] {text}" for n, text in enumerate(json.loads(row.get("contexts") or "[]"), 1))
        async with gate:
            reply = await client.chat.completions.create(model="bench-judge", messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": f"{row['question']}\n{row['reference']}\n{context}\n{row['answer']}"}])
        return "result_tag" in json.loads(reply.choices[0].message.content or "{}")

    with data.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    results = await asyncio.gather(*(one(row) for row in rows for _ in range(samples)))
    await client.close()
    return sum(results)


def busy(share: float) -> None:
    """Keep a core busy `share` of the time (in slices of 50 ms) until killed."""
    while True:
        until = time.perf_counter() + 0.05 * share
        while time.perf_counter() < until:
            pass
        time.sleep(0.05 * (1 - share))


def load_of(amount: float) -> list[multiprocessing.Process]:
    """Busy processes that add about `amount` to the load average: one per whole unit, one for the rest."""
    shares = [1.0] * int(amount) + ([amount - int(amount)] if amount - int(amount) > 0.01 else [])
    workers = [multiprocessing.Process(target=busy, args=(share,), daemon=True) for share in shares]
    for worker in workers:
        worker.start()
    return workers


def measured(command: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float, float, float]:
    """Run `command`; (its result, wall seconds, CPU seconds, peak RSS in MB), the usage of that process alone."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # not RUSAGE_CHILDREN: its peak is that of the largest child yet
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        finished = subprocess.CompletedProcess(command, child.returncode, out.read(), err.read())
    return finished, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    if sys.argv[1:2] == ["plain"]:  # the yardstick, in a process of its own: plain DATA BASE_URL CONCURRENCY SAMPLES
        import asyncio

        print(asyncio.run(plain_loop(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the judge takes per reply")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--samples", type=int, default=1, help="judgments per row")
    parser.add_argument("--load", type=float, default=0.0, help="the load average other work adds meanwhile")
    parser.add_argument("--runs", type=int, default=1, help="turns of judgebot and the plain loop, alternating")
    parser.add_argument("--rubric", choices=sorted(VERDICTS), default="eth", help="the shipped rubric judgebot grades with")
    parser.add_argument("--context-tokens", type=int, default=0, help="tokens of retrieved passages a row (about)")
    args = parser.parse_args()
    if args.rubric == "faithfulness" and not args.context_tokens:
        parser.error("faithfulness grades an answer against its passages: give --context-tokens")

    verdict = VERDICTS[args.rubric]
    server = FakeJudgeServer(lambda body: Reply(content=verdict), latency=args.latency).start()
    load = load_of(args.load)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            turns = measure(args, server, Path(tmp))
    finally:
        for worker in load:
            worker.kill()
        server.stop()
    if args.load:
        print(f"load            {args.load:g} added by busy processes; load average at the end "
              f"{os.getloadavg()[0]:.2f}")
    if len(turns) > 1:
        ratios = [wall / plain_wall for wall, plain_wall in turns]
        print(f"turns           {len(turns)}: judgebot {', '.join(f'{wall:.2f}' for wall, _ in turns)} s; plain loop "
              f"{', '.join(f'{plain:.2f}' for _, plain in turns)} s")
        print(f"wall ratio      median {statistics.median(ratios):.2f}x, from {min(ratios):.2f}x to {max(ratios):.2f}x "
              "(judgebot over the plain loop, each turn)")


def measure(args: argparse.Namespace, server: FakeJudgeServer, tmp: Path) -> list[tuple[float, float]]:
    """Judge the rows `args.runs` times with judgebot and with the plain loop, taking turns; print the figures of the
    last turn; (judgebot's wall time, the plain loop's) of each turn."""
    judgments = args.rows * args.samples
    data = tmp / "answers.csv"
    write_csv(data, args.rows, args.context_tokens)
    # Byte-compiled as an installed judgebot is (pip compiles what it installs): the one-row run writes them.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "bench", "JUDGE_MODEL": "bench-judge"}

    def judging(csv_path: Path, out: Path) -> list[str]:
        return [sys.executable, "-m", "bot", "judge", str(csv_path), "--rubric", args.rubric, "--concurrency",
                str(args.concurrency), "--out", str(out), "--samples", str(args.samples), "--yes"]

    def plain_command(csv_path: Path, samples: int) -> list[str]:
        return [sys.executable, __file__, "plain", str(csv_path), server.base_url, str(args.concurrency), str(samples),
                args.rubric]

    # Start-up: the same command over one row of its own (its own history), whose CPU is taken off the run's;
    # the plain loop's too (its imports), so that both are compared per row
    one = tmp / "one.csv"
    write_csv(one, 1, args.context_tokens)
    _, _, plain_startup_cpu, _ = measured(plain_command(one, 1), env)
    started, _, startup_cpu, _ = measured(judging(one, tmp / "one.results.csv"), {**env, "JUDGEBOT_DB": str(tmp / "one.db")})
    assert started.returncode == 0, started.stderr[-2000:]
    turns = []
    for turn in range(args.runs):
        db = tmp / f"bench-{turn}.db"
        if turn % 2:  # the plain loop first every other turn: neither always runs on the machine the other warmed
            plain, plain_wall, plain_cpu, _ = measured(plain_command(data, args.samples), env)
        server_before = resource.getrusage(resource.RUSAGE_SELF)
        finished, wall, cpu, rss = measured(judging(data, tmp / "results.csv"), {**env, "JUDGEBOT_DB": str(db)})
        server_after = resource.getrusage(resource.RUSAGE_SELF)
        if not turn % 2:
            plain, plain_wall, plain_cpu, _ = measured(plain_command(data, args.samples), env)
        turns.append((wall, plain_wall))
        if args.runs > 1:
            print(f"turn {turn + 1:<10} judgebot {wall:.2f} s, plain loop {plain_wall:.2f} s: {wall / plain_wall:.2f}x")
    with (tmp / "results.csv").open(encoding="utf-8-sig") as f:
        scored = sum(1 for row in csv.DictReader(f) if row["status"] == "scored")
    with sqlite3.connect(db) as connection:
        started_at, finished_at = connection.execute("SELECT started_at, finished_at FROM run").fetchone()
    phase = (datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)).total_seconds()

    rate = judgments / wall
    ideal = args.concurrency / args.latency if args.latency > 0 else float("inf")
    print(f"rows            {args.rows} (scored {scored}, exit code {finished.returncode}), {args.samples} sample(s) "
          f"each: {judgments} judgments" + (" (the last turn's figures)" if args.runs > 1 else ""))
    print(f"latency         {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, rubric {args.rubric}"
          + (f", about {args.context_tokens} tokens of passages a row" if args.context_tokens else ""))
    print(f"wall time       {wall:.2f} s (includes start-up, loading the CSV and writing the results)")
    print(f"judgments/s     {rate:.1f}")
    print(f"judging phase   {phase:.2f} s, {judgments / phase:.1f} judgments/s (first request to last verdict)")
    if args.latency > 0:
        print(f"ideal C/L       {ideal:.1f} judgments/s (all the judgments in {judgments / ideal:.2f} s)")
        print(f"ratio           {rate / ideal:.1%} end to end, {judgments / phase / ideal:.1%} judging phase")
    print(f"CPU per row     {cpu / args.rows * 1000:.2f} ms, per judgment {cpu / judgments * 1000:.2f} ms "
          "(judgebot process)")
    print(f"  less start-up {(cpu - startup_cpu) / args.rows * 1000:.2f} ms a row (start-up: {startup_cpu:.2f} s of "
          "CPU, a one-row run)")
    server_cpu = (server_after.ru_utime - server_before.ru_utime) + (server_after.ru_stime - server_before.ru_stime)
    print(f"server CPU/req  {server_cpu / judgments * 1000:.2f} ms (the local judge server, same machine)")
    print(f"peak RSS        {rss:.1f} MB (judgebot process)")
    print(f"plain loop      {plain_wall:.2f} s wall, {judgments / plain_wall:.1f} judgments/s"
          + (f" ({judgments / plain_wall / ideal:.1%} of ideal)" if args.latency > 0 else "")
          + f", CPU per judgment {plain_cpu / judgments * 1000:.2f} ms, {plain.stdout.strip()} replies parsed"
          + (f"\n{plain.stderr[-1000:]}" if plain.returncode else ""))
    judgebot_row = (cpu - startup_cpu) / judgments
    plain_row = (plain_cpu - plain_startup_cpu) / judgments
    print(f"  less start-up {plain_row * 1000:.2f} ms a judgment (start-up: {plain_startup_cpu:.2f} s of CPU, one row)")
    print(f"judgebot/plain  {wall / plain_wall:.2f}x the wall time, {cpu / plain_cpu:.2f}x the CPU, "
          f"{judgebot_row / plain_row:.2f}x the CPU per judgment less start-up")
    if finished.returncode != 0:
        print(finished.stderr[-2000:])
    return turns


if __name__ == "__main__":
    main()
