"""Benchmark `judgebot judge`: N rows against a local judge answering after L seconds, concurrency C.

Prints wall time, rows/s, the ideal C/L rows/s and the ratio, CPU time per row and peak RSS of the
judgebot process, and the same figures of a plain AsyncOpenAI loop over the same rows in the same run (one
process, a semaphore of C, json.loads of each reply; no history, no validation): the yardstick, since this
machine's speed drifts from day to day. Run by hand, e.g.:

    python bench/bench_judge.py --rows 2000 --latency 0.2 --concurrency 32
    python bench/bench_judge.py --rows 100000 --latency 0 --concurrency 32
    python bench/bench_judge.py --rows 640 --latency 0.2 --concurrency 32 --samples 3

Judgebot judges into a history that exists (one per checkout, set up by `judgebot runs` and copied for each run), as
every run but a history's first does; setting a new history up takes a history's first run about 0.4 s more, once.
CPU "less start-up" takes off the CPU of the same command over one row, run just before it in the same turn (the
machine's pace drifts between turns).

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

Several rubrics are measured in the same run, taking turns (each with its own rows and its own plain loop), and with
--code the judgebot of other checkouts too (the code before a change and after it, say): a table then gives each
one's CPU a row less start-up, its median and range over the turns, beside the plain loop's, and the ratio of each
rubric's to the first's in each turn:

    python bench/bench_judge.py --rows 640 --concurrency 32 --rubric eth faithfulness --context-tokens 2000 --runs 4 \
        --code /tmp/before --code .
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

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


def measured(command: list[str], env: dict[str, str], cwd: Path | None = None
             ) -> tuple[subprocess.CompletedProcess[str], float, float, float]:
    """Run `command` (in `cwd`); (its result, wall seconds, CPU seconds, peak RSS in MB), the usage of that process
    alone."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True, cwd=cwd)
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
    parser.add_argument("--rubric", nargs="+", choices=sorted(VERDICTS), default=["eth"],
                        help="the shipped rubrics judgebot grades with, each measured in the same turns")
    parser.add_argument("--context-tokens", type=int, default=0, help="tokens of retrieved passages a row (about), "
                        "for a rubric that reads them")
    parser.add_argument("--code", type=Path, action="append", help="a checkout of judgebot to measure (repeat to "
                        "measure several in the same turns); this one unless given")
    args = parser.parse_args()
    if "faithfulness" in args.rubric and not args.context_tokens:
        parser.error("faithfulness grades an answer against its passages: give --context-tokens")
    args.code = [path.resolve() for path in args.code or [Path(__file__).resolve().parent.parent]]

    server = FakeJudgeServer(lambda body: Reply(content=VERDICTS[rubric_asked(body)]), latency=args.latency).start()
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
    if len(turns) > 1 and len(args.code) == len(args.rubric) == 1:
        ratios = [turn.wall[0] / turn.plain_wall[args.rubric[0]] for turn in turns]
        print(f"turns           {len(turns)}: judgebot {', '.join(f'{turn.wall[0]:.2f}' for turn in turns)} s; plain "
              f"loop {', '.join(f'{turn.plain_wall[args.rubric[0]]:.2f}' for turn in turns)} s")
        print(f"wall ratio      median {statistics.median(ratios):.2f}x, from {min(ratios):.2f}x to {max(ratios):.2f}x "
              "(judgebot over the plain loop, each turn)")
    if len(args.code) * len(args.rubric) > 1:
        print_table(args, turns)


def rubric_asked(body: dict) -> str:
    """The rubric a request grades with: the name of the schema judgebot sends, or the plain loop's system prompt."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    if schema:
        return schema.removesuffix("_verdict") if schema.removesuffix("_verdict") in VERDICTS else "eth"
    system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
    return "faithfulness" if "grounded in the passages" in str(system) else "eth"


class Turn:
    """One turn's figures: for each (checkout, rubric) judgebot's wall time and CPU a judgment less start-up, and for
    each rubric the plain loop's."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: dict[tuple[int, str], float] = {}
        self.plain_wall: dict[str, float] = {}
        self.plain_cpu: dict[str, float] = {}


def measure(args: argparse.Namespace, server: FakeJudgeServer, tmp: Path) -> list[Turn]:
    """Judge the rows `args.runs` times with each checkout's judgebot and each rubric, and with the plain loop, taking
    turns (the order turned round every turn); print the figures of the last turn of each; the figures of each
    turn."""
    judgments = args.rows * args.samples
    # Byte-compiled as an installed judgebot is (pip compiles what it installs): the one-row run writes them.
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "bench", "JUDGE_MODEL": "bench-judge"}
    data, one = {}, {}
    for rubric in args.rubric:
        tokens = args.context_tokens if rubric == "faithfulness" else 0
        data[rubric], one[rubric] = tmp / f"{rubric}.csv", tmp / f"{rubric}-one.csv"
        write_csv(data[rubric], args.rows, tokens)
        write_csv(one[rubric], 1, tokens)

    def judging(code: Path, rubric: str, csv_path: Path, out: Path) -> list[str]:
        return [sys.executable, "-m", "bot", "judge", str(csv_path), "--rubric", rubric, "--concurrency",
                str(args.concurrency), "--out", str(out), "--samples", str(args.samples), "--yes"]

    # Each run judges into a history that exists, as every run but a history's first does: one is set up per
    # checkout (`judgebot runs` makes and migrates it) and copied for each run. A history's first run also sets it up
    # (about 0.4 s of this machine's time, once), which is not judging.
    histories = {}
    for number, code in enumerate(args.code):
        histories[number] = tmp / f"history-{number}.db"
        made = subprocess.run([sys.executable, "-m", "bot", "runs"], cwd=code, capture_output=True, text=True,
                              env={**env, "JUDGEBOT_DB": str(histories[number]), "PYTHONPATH": str(code)})
        assert made.returncode == 0, made.stderr[-2000:]

    def judged(number: int, rubric: str, csv_path: Path, name: str) -> tuple[Any, float, float, float, Path]:
        code = args.code[number]
        db = tmp / f"{name}.db"
        shutil.copyfile(histories[number], db)
        run_env = {**env, "JUDGEBOT_DB": str(db), "PYTHONPATH": str(code)}
        finished, wall, cpu, rss = measured(judging(code, rubric, csv_path, tmp / f"{name}.results.csv"), run_env,
                                            cwd=code)
        assert finished.returncode == 0, finished.stderr[-2000:]
        return finished, wall, cpu, rss, db

    def plain_command(rubric: str, csv_path: Path, samples: int) -> list[str]:
        return [sys.executable, __file__, "plain", str(csv_path), server.base_url, str(args.concurrency), str(samples),
                rubric]

    # Start-up: the same command over one row of its own (its own history), whose CPU is taken off the run's; the
    # plain loop's too (its imports), so that both are compared per row. Measured first (judgebot's writes its
    # byte-code), then again just before each measured run, so that the machine's pace then counts in both.
    plain_startup = {rubric: measured(plain_command(rubric, one[rubric], 1), env)[2] for rubric in args.rubric}
    startup = {(number, rubric): judged(number, rubric, one[rubric], f"one-{number}-{rubric}")[2]
               for number in range(len(args.code)) for rubric in args.rubric}
    configs = [(number, rubric) for number in range(len(args.code)) for rubric in args.rubric]
    turns: list[Turn] = []
    last: dict[Any, Any] = {}
    for index in range(args.runs):
        turn = Turn()
        steps: list[tuple[str, Any]] = [("judgebot", config) for config in configs]
        steps += [("plain", rubric) for rubric in args.rubric]
        steps = steps[index % len(steps):] + steps[:index % len(steps)]  # neither always runs on a machine warmed
        if index % 2:
            steps.reverse()
        walls: dict[tuple[int, str], float] = {}
        for kind, what in steps:
            if kind == "plain":
                plain_startup[what] = measured(plain_command(what, one[what], 1), env)[2]
                plain, plain_wall, plain_cpu, _ = measured(plain_command(what, data[what], args.samples), env)
                turn.plain_wall[what] = plain_wall
                turn.plain_cpu[what] = (plain_cpu - plain_startup[what]) / judgments
                last["plain", what] = (plain, plain_wall, plain_cpu)
                continue
            number, rubric = what
            startup[what] = judged(number, rubric, one[rubric], f"one-{index}-{number}-{rubric}")[2]
            server_before = resource.getrusage(resource.RUSAGE_SELF)
            finished, wall, cpu, rss, db = judged(number, rubric, data[rubric], f"run-{index}-{number}-{rubric}")
            server_after = resource.getrusage(resource.RUSAGE_SELF)
            walls[what] = wall
            turn.cpu[what] = (cpu - startup[what]) / judgments
            last["judgebot", what] = (finished, wall, cpu, rss, db, server_before, server_after)
        turn.wall = [walls[config] for config in configs]
        turns.append(turn)
        if args.runs > 1:
            print(f"turn {index + 1:<10} " + "; ".join(
                f"{label(args, config)} {walls[config]:.2f} s" for config in configs) + "; plain loop " + ", ".join(
                f"{rubric} {turn.plain_wall[rubric]:.2f} s" for rubric in args.rubric))
    for number, rubric in configs:
        finished, wall, cpu, rss, db, server_before, server_after = last["judgebot", (number, rubric)]
        plain, plain_wall, plain_cpu = last["plain", rubric]
        if len(configs) > 1:
            print(f"\n== {label(args, (number, rubric))}")
        report(args, judgments, rubric, tmp / f"run-{args.runs - 1}-{number}-{rubric}.results.csv", db,
               (finished, wall, cpu, rss), startup[number, rubric], (server_before, server_after),
               (plain, plain_wall, plain_cpu), plain_startup[rubric])
    return turns


def label(args: argparse.Namespace, config: tuple[int, str]) -> str:
    """How a checkout and rubric are named in the figures: the rubric, after the checkout when there are several."""
    number, rubric = config
    return f"{args.code[number].name} {rubric}" if len(args.code) > 1 else rubric


def report(args: argparse.Namespace, judgments: int, rubric: str, results: Path, db: Path,
           judged: tuple[Any, float, float, float], startup_cpu: float, server: tuple[Any, Any],
           plain_run: tuple[Any, float, float], plain_startup_cpu: float) -> None:
    """Print the figures of one checkout and rubric's last turn beside the plain loop's."""
    finished, wall, cpu, rss = judged
    plain, plain_wall, plain_cpu = plain_run
    with results.open(encoding="utf-8-sig") as f:
        scored = sum(1 for row in csv.DictReader(f) if row["status"] == "scored")
    with sqlite3.connect(db) as connection:
        started_at, finished_at = connection.execute("SELECT started_at, finished_at FROM run").fetchone()
    phase = (datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)).total_seconds()
    rate = judgments / wall
    ideal = args.concurrency / args.latency if args.latency > 0 else float("inf")
    context = args.context_tokens if rubric == "faithfulness" else 0
    print(f"rows            {args.rows} (scored {scored}, exit code {finished.returncode}), {args.samples} sample(s) "
          f"each: {judgments} judgments" + (" (the last turn's figures)" if args.runs > 1 else ""))
    print(f"latency         {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, rubric {rubric}"
          + (f", about {context} tokens of passages a row" if context else ""))
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
    before, after = server
    server_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
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


def print_table(args: argparse.Namespace, turns: list[Turn]) -> None:
    """CPU a judgment less start-up of each checkout and rubric over the turns (median, range), the plain loop's
    beside it, and each rubric's over the first rubric's of the same checkout, turn by turn."""
    def spread(values: list[float], scale: float = 1000.0, unit: str = " ms") -> str:
        return (f"{statistics.median(values) * scale:.2f}{unit} ({min(values) * scale:.2f}-"
                f"{max(values) * scale:.2f})")

    first = args.rubric[0]
    print(f"\nCPU a judgment less start-up, {len(turns)} turn(s): median (range)")
    for number in range(len(args.code)):
        for rubric in args.rubric:
            mine = [turn.cpu[number, rubric] for turn in turns]
            over_plain = [turn.cpu[number, rubric] / turn.plain_cpu[rubric] for turn in turns]
            line = f"  {label(args, (number, rubric)):<28} {spread(mine)}, {spread(over_plain, 1, 'x')} the plain loop's"
            if rubric != first:
                ratios = [turn.cpu[number, rubric] / turn.cpu[number, first] for turn in turns]
                line += f", {spread(ratios, 1, 'x')} {first}'s"
            print(line)
    for rubric in args.rubric:
        plain = [turn.plain_cpu[rubric] for turn in turns]
        line = f"  {'plain loop ' + rubric:<28} {spread(plain)}"
        if rubric != first:
            line += f", {spread([turn.plain_cpu[rubric] / turn.plain_cpu[first] for turn in turns], 1, 'x')} {first}'s"
        print(line)


if __name__ == "__main__":
    main()
