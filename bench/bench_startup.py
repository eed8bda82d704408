"""Benchmark start-up: `judgebot --help`, `judgebot rubrics` and one triple judged, whole process, beside the floor.

Each command runs as its own process, alternating, for a number of rounds; the median and range of each are printed.
The floor is a bare interpreter importing the libraries a judged triple cannot do without (the openai SDK with its
aiohttp transport, SQLAlchemy with SQLModel), plainly and the way judgebot imports them (the collector off, frozen
before exit): this machine's speed drifts from day to day, and what judgebot adds over the second is what its own
code costs. judgebot runs byte-compiled, as an installed one does. The triple's judge is a local server answering
at once; the history already exists (a first run also creates it, measured apart). Run by hand, e.g.:

    python bench/bench_startup.py --rounds 9
"""

from __future__ import annotations

import argparse
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
FLOOR = "import openai, aiohttp, sqlalchemy, sqlmodel"
# judgebot holds the collector off while it starts and keeps it from a last pass at exit (bot.__main__.main): the
# same libraries imported the same way are the floor its own cost is measured over.
QUIET_FLOOR = f"import gc; gc.disable(); {FLOOR}; gc.freeze()"


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run `command`; its wall and CPU seconds (it must succeed)."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # the usage of this process alone
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, f"{command}: {child.stderr.read()[-2000:] if child.stderr else ''}"
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    server = FakeJudgeServer(lambda body: Reply(content=VERDICT), latency=0).start()
    judgebot = [sys.executable, "-m", "bot"]
    triple = [*judgebot, "judge", "--rubric", "eth", "-q", "How do I register for exams?",
              "-r", "In myStudies.", "-a", "Register in myStudies."]
    commands = {
        "python, nothing imported": [sys.executable, "-c", "pass"],
        "the floor (" + FLOOR.removeprefix("import ") + ")": [sys.executable, "-c", FLOOR],
        "the floor, collector held off as judgebot does": [sys.executable, "-c", QUIET_FLOOR],
        "judgebot --help": [*judgebot, "--help"],
        "judgebot rubrics": [*judgebot, "rubrics"],
        "judgebot judge, one triple": triple,
    }
    with tempfile.TemporaryDirectory() as tmp:
        # Byte-compiled as an installed judgebot is (pip compiles what it installs): the first run writes them.
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "bench",
                "JUDGEBOT_DB": str(Path(tmp) / "bench.db"), "JUDGE_MODEL": "bench-judge"}
        first = timed(triple, env)  # creates the history
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                wall, cpu = timed(command, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    server.stop()

    print(f"{args.rounds} rounds, each command in a process of its own; median wall (range), median CPU")
    for name in commands:
        print(f"  {name:<52} {statistics.median(walls[name]):5.2f} s ({min(walls[name]):.2f}-{max(walls[name]):.2f})"
              f"   CPU {statistics.median(cpus[name]):.2f} s")
    print(f"  {'judgebot judge, one triple, creating the history':<52} {first[0]:5.2f} s (one run)   CPU {first[1]:.2f} s")
    floor = statistics.median(walls["the floor, collector held off as judgebot does"])
    one = statistics.median(walls["judgebot judge, one triple"])
    print(f"one triple: {one / floor:.2f}x the floor, {one - floor:.2f} s over it")


if __name__ == "__main__":
    main()
