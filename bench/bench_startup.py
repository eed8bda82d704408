"""Benchmark start-up: the reading commands and one triple judged, whole process, beside a plain one-request script.

The yardstick is a plain script sending one request: AsyncOpenAI over its aiohttp transport, as judgebot's judge
uses it, one chat completion with a json_schema response format to the same local judge server, the answer parsed and
printed (PLAIN below). This machine's speed drifts from day to day; the plain script, measured in the same rounds,
is what a triple is held to (target: within 0.25 s of it). The plain script loads the certificate bundle, as the SDK
does by default; judgebot skips it for an endpoint over plain http (the local judge here), so the gap is printed
against the plain script without it too: over https both load it, and that second gap is what a person waits. The
reading commands (`runs`, `stats`, `history`, `review`, `rubrics`, `--help`) are held to 0.5 s each. Each command
runs as its own process, alternating, for a number of rounds; the median and range of each are printed, with its CPU
time.

The history is written once at the start, through judgebot itself: `--rows` distinct rows judged in runs of at most
1,000 (each run sends a share of its rows to review), so that the reading commands' queries read a realistic
history rather than an empty one. judgebot runs byte-compiled, as an installed one does (pip compiles what it
installs). The judge is a local server answering at once. Run by hand, e.g.:

    python bench/bench_startup.py --rounds 9 --rows 3000
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.openai_server import FakeJudgeServer, Reply

VERDICT = json.dumps({"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names the portal."})
READING_TARGET = 0.5  # seconds: a reading command
TRIPLE_TARGET = 0.25  # seconds: one triple over the plain script
RUN_ROWS = 1000  # rows of each run that writes the history

# One request, nothing around it: the client judgebot's judge uses, the structured output it asks for (the eth
# rubric's schema), the reply parsed and printed. The endpoint, key and model come from the environment, as
# judgebot's do.
PLAIN = '''
import asyncio, json, os
from openai import AsyncOpenAI, DefaultAioHttpClient

SCHEMA = {"type": "object", "additionalProperties": False,
          "required": ["reasoning", "correctness", "completeness", "result_tag"],
          "properties": {"reasoning": {"type": "string"},
                         "correctness": {"type": "integer", "minimum": 0, "maximum": 2},
                         "completeness": {"type": "integer", "minimum": 0, "maximum": 2},
                         "result_tag": {"type": "string", "enum": ["Correct", "Generic", "Refusal", "Hallucination"]}}}

async def main():
    async with AsyncOpenAI(max_retries=0, http_client=DefaultAioHttpClient()) as client:
        reply = await client.chat.completions.create(
            model=os.environ["JUDGE_MODEL"], temperature=0.0,
            messages=[{"role": "system", "content": "Grade the answer against the reference; reply in JSON."},
                      {"role": "user", "content": "Question: How do I register for exams?\\nReference: In myStudies."
                                                  "\\nAnswer: Register in myStudies."}],
            response_format={"type": "json_schema",
                             "json_schema": {"name": "eth_verdict", "schema": SCHEMA, "strict": True}})
    print(json.loads(reply.choices[0].message.content))

asyncio.run(main())
'''


# The same script without the certificate bundle: what judgebot's client does over plain http.
PLAIN_HTTP = PLAIN.replace("DefaultAioHttpClient()", "DefaultAioHttpClient(verify=False)")


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run `command`; its wall and CPU seconds (it must succeed)."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # the usage of this process alone
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, f"{command}: {child.stderr.read()[-2000:] if child.stderr else ''}"
    return wall, usage.ru_utime + usage.ru_stime


def write_csv(path: Path, rows: range) -> None:
    """A CSV of the distinct triples numbered `rows` (distinct so that no verdict comes from the cache)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "reference", "answer", "model"])
        for i in rows:
            writer.writerow([f"Question {i}: how do I register for exams at ETH?",
                             "Exam registration is done in myStudies (ETHIS) during the registration period.",
                             f"Answer {i}: register in myStudies during the registration window.", f"bot-v{i % 3}"])


def write_history(judgebot: list[str], env: dict[str, str], folder: Path, rows: int) -> None:
    """`rows` distinct rows judged by judgebot, in runs of at most RUN_ROWS."""
    for first in range(0, rows, RUN_ROWS):
        data = folder / f"rows-{first}.csv"
        write_csv(data, range(first, min(first + RUN_ROWS, rows)))
        done = subprocess.run([*judgebot, "judge", str(data), "--rubric", "eth", "--yes"], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", type=int, default=3000, help="judgments in the history the commands read")
    args = parser.parse_args()
    server = FakeJudgeServer(lambda body: Reply(content=VERDICT), latency=0).start()
    judgebot = [sys.executable, "-m", "bot"]
    triple = [*judgebot, "judge", "--rubric", "eth", "-q", "How do I register for exams?",
              "-r", "In myStudies.", "-a", "Register in myStudies."]
    reading = {f"judgebot {' '.join(command)}": [*judgebot, *command]
               for command in (["--help"], ["rubrics"], ["runs"], ["stats"], ["history"], ["review"])}
    commands = {
        "python, nothing imported": [sys.executable, "-c", "pass"],
        "plain script, one request": [sys.executable, "-c", PLAIN],
        "plain script, no certificates": [sys.executable, "-c", PLAIN_HTTP],
        "judgebot judge, one triple": triple,
        **reading,
    }
    with tempfile.TemporaryDirectory() as tmp:
        # Byte-compiled as an installed judgebot is (pip compiles what it installs): the first run writes them.
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "bench",
                "JUDGEBOT_DB": str(Path(tmp) / "bench.db"), "JUDGE_MODEL": "bench-judge"}
        started = time.perf_counter()
        write_history(judgebot, env, Path(tmp), args.rows)
        print(f"history: {args.rows:,} rows judged in {time.perf_counter() - started:.1f} s")
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():
            timed(command, env)  # once unmeasured: byte-compiled, and the files in the page cache
        for _ in range(args.rounds):
            for name, command in commands.items():
                wall, cpu = timed(command, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    server.stop()

    def median(name: str) -> float:
        return statistics.median(walls[name])

    print(f"{args.rounds} rounds, each command in a process of its own; median wall (range), median CPU")
    for name in commands:
        verdict = ""
        if name in reading:
            verdict = f"   {'within' if median(name) <= READING_TARGET else 'OVER'} {READING_TARGET} s"
        print(f"  {name:<32} {median(name):5.2f} s ({min(walls[name]):.2f}-{max(walls[name]):.2f})"
              f"   CPU {statistics.median(cpus[name]):.2f} s{verdict}")
    one = median("judgebot judge, one triple")
    for baseline in ("plain script, one request", "plain script, no certificates"):
        plain = median(baseline)
        pairs = [triple_wall - plain_wall for triple_wall, plain_wall
                 in zip(walls["judgebot judge, one triple"], walls[baseline], strict=True)]
        print(f"one triple over the {baseline}: {one - plain:+.2f} s (each round {min(pairs):+.2f} to "
              f"{max(pairs):+.2f}), {one / plain:.2f}x; {'within' if one - plain <= TRIPLE_TARGET else 'OVER'} "
              f"{TRIPLE_TARGET} s")


if __name__ == "__main__":
    main()
