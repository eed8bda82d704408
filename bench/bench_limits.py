"""Benchmark judging at a provider's rate limits: `judgebot judge` at its default settings against a local judge that
enforces OpenAI-style limits (requests and tokens a window, rolling, and each limit held a sixtieth of the window at a
time, as OpenAI may enforce a minute's limit a second at a time, in one of two readings: `--reading minute`, a bucket
per limit holding a sixtieth of it and refilling at the limit's pace; `--reading second`, no second on the server's
clock holding more than a sixtieth of either limit, the `remaining` headers counting that second; a 429 with
OpenAI's body past either, optionally with `retry-after` in whole seconds; `x-ratelimit-*` headers on every reply),
beside a plain AsyncOpenAI loop with the SDK's default retries, in the same run. Prints, for each scenario, the share
of the limit-bound ideal (the time the binding limit needs to let the rows through, over the time they took) and how
many requests were answered 429. Run by hand, e.g.:

    python bench/bench_limits.py --rows 2000 --latency 0.3                      # tokens, then requests bind
    python bench/bench_limits.py --rows 600 --reading second --only bind --who judgebot   # the other reading
    python bench/bench_limits.py --rows 500 --latency 0.3 --window 15 --scale 0.25  # the same, in a quarter of the time

`--window` and `--scale` shrink the window (60 s, as OpenAI's) and the limits together, so a scenario takes less time
while the rows per window stay those of the full limits times the scale. `--concurrency N` runs judgebot with
`--concurrency N` (default: its own default, CONCURRENCY 16).

The ideal under each reading. The minute reading's bucket refills continuously, so a share of a row carries over from
one second to the next: the rows go at the limit's own pace, and the ideal is rows x (tokens a row) / TPM x 60 s (or
rows / RPM x 60 s), whichever is longer: 600 rows of 1,000 tokens at 400,000 TPM, 90 s. The second reading holds
whole requests in each second: a second's share is 400,000 / 60 = 6,666 tokens, which holds 6 rows of 1,000 tokens
(6,000) and not a seventh (7,000 > 6,666); what is left of a share is lost when the second ends. No client gets more
than 6 rows a second, 360,000 of the 400,000 tokens a minute (0.90), so the 600 rows need at least 600 / 6 = 100
seconds, and the minute's 90 s is not reachable: the ideal there is the larger of the two, rows / (whole rows a
second's share holds of each limit) x the second, here 100 s. With requests binding (3,000 RPM, 50 a second, rows
counting 1 each) both give 12 s. (Both ideals are the time to send the rows; a run also waits for its first reply to
learn the limits and for its last reply, 0.3 s each at L = 300 ms, which a client that sends a second's share at once
wins back.)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.rate_limits import READINGS, RateLimited, prompt_count

VERDICT = json.dumps({"correctness": 2, "completeness": 1, "result_tag": "Correct", "reasoning": "Names the portal."})
SCENARIOS = (  # name, requests a minute, tokens a minute, retry-after
    ("tokens bind (TPM 400,000)", 100_000, 400_000, False),
    ("requests bind (RPM 3,000)", 3_000, 100_000_000, False),
    ("requests bind, retry-after sent", 3_000, 100_000_000, True),
)


def write_csv(path: Path, rows: int) -> None:
    """`rows` distinct triples (distinct so the cache cannot help)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "reference", "answer"])
        for i in range(rows):
            writer.writerow([f"Question {i}: how do I register for exams at ETH?",
                             "Exam registration is done in myStudies (ETHIS) during the registration period.",
                             f"Answer {i}: register in myStudies during the registration window."])


async def plain_loop(data: Path, base_url: str, concurrency: int) -> int:
    """The yardstick: each row's request through AsyncOpenAI with the SDK's default retries, C at a time; the rows
    answered before the first request whose retries ran out."""
    import asyncio

    from openai import AsyncOpenAI, DefaultAioHttpClient

    from bot.judge.prompt import build_messages
    from bot.records import Triple
    from bot.rubric import load_rubrics

    rubric = load_rubrics().get("eth")  # the same prompts as judgebot's, so that both spend as many tokens a row
    client = AsyncOpenAI(api_key="bench", base_url=base_url, http_client=DefaultAioHttpClient())
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(row: dict[str, str]) -> None:
        nonlocal done
        async with gate:
            triple = Triple(question=row["question"], reference=row["reference"], answer=row["answer"])
            await client.chat.completions.create(model="bench-judge",
                                                 messages=build_messages(rubric, triple, "DATA"))  # type: ignore[arg-type]
        done += 1

    with data.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    try:
        await asyncio.gather(*(one(row) for row in rows))
    except Exception as err:  # the SDK's retries ran out: the loop stops, as a plain script would
        print(f"stopped: {type(err).__name__}", file=sys.stderr)
    await client.close()
    return done


def scenario(args: argparse.Namespace, name: str, rpm: int, tpm: int, retry_after: bool, tmp: Path) -> None:
    rpm, tpm = max(1, int(rpm * args.scale)), max(1, int(tpm * args.scale))
    for who in args.who:
        limited = RateLimited(lambda body: Reply(content=VERDICT), rpm=rpm, tpm=tpm, retry_after=retry_after,
                              window=args.window, parts=args.parts, reading=args.reading)
        server = FakeJudgeServer(limited, latency=args.latency).start()
        data = tmp / "answers.csv"
        write_csv(data, args.rows)
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "bench",
               "JUDGEBOT_DB": str(tmp / f"{who}-{rpm}-{retry_after}.db"), "JUDGE_MODEL": "bench-judge",
               "JUDGE_RATE_WINDOW": str(args.window)}
        if who == "judgebot":
            command = [sys.executable, "-m", "bot", "judge", str(data), "--rubric", "eth", "--yes", "--out",
                       str(tmp / "results.csv")]
            if args.concurrency is not None:
                command += ["--concurrency", str(args.concurrency)]
        else:
            command = [sys.executable, __file__, "plain", str(data), server.base_url, "32"]
        finished = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        server.stop()
        arrivals = server.arrivals
        took = (arrivals[-1] - arrivals[0] + args.latency) if arrivals else 0.0
        answered, refused = limited.answered, limited.limited
        per_row = sum(prompt_count(body) + limited.reply_tokens for body in server.bodies()[:50]) / 50
        # The ideal (see the module's docstring): the rows answered, at the pace the binding limit allows (rows divided
        # by the limit); with the second reading, no faster than the whole rows a part's share of each limit holds (a
        # row of 1,000 tokens against a share of 6,666: 6 a second, 0.9 of the tokens limit)
        ideal = max(answered / rpm, answered * per_row / tpm) * args.window
        minute = ideal
        if args.reading == "second" and args.parts > 1:
            rows_a_part = max(1, min(rpm // args.parts, int(tpm / args.parts // per_row)))
            ideal = max(ideal, answered / rows_a_part * args.window / args.parts)
        share = ideal / took if took else 0.0
        asked = answered + refused
        extra = ""
        if ideal > minute:
            extra = (f"; {minute / took if took else 0.0:.1%} of the minute's limit ({minute:.1f} s), which its "
                     "seconds hold less of")
        if who == "judgebot":
            # The summary's line, however the terminal wrapped it
            paced = re.search(r"set the pace: (paced by .*? a minute|paced by .*? per [\d.]+ s)",
                              " ".join(finished.stdout.split()))
            extra += f"; {paced.group(1)}" if paced else ""
        else:
            extra += f"; the loop answered {finished.stdout.strip() or 0} rows" + (
                " and stopped (the SDK's retries ran out)" if answered < args.rows else "")
        print(f"{name:34} {who:10} {answered:>6,} rows scored in {took:7.1f} s: {share:5.1%} of the limit-bound "
              f"ideal ({ideal:.1f} s); {refused:,} of {asked:,} requests answered 429 ({refused / max(asked, 1):.1%})"
              f"{extra}")


def main() -> None:
    if sys.argv[1:2] == ["plain"]:  # the yardstick in a process of its own: plain DATA BASE_URL CONCURRENCY
        import asyncio

        print(asyncio.run(plain_loop(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the judge takes per reply")
    parser.add_argument("--window", type=float, default=60.0, help="seconds the limits count over")
    parser.add_argument("--scale", type=float, default=1.0, help="the limits' share (with a shorter window)")
    parser.add_argument("--parts", type=int, default=60,
                        help="the limits also hold over each of this many parts of the window (1: the window alone)")
    parser.add_argument("--reading", choices=READINGS, default="minute",
                        help="how the parts hold the limits: a bucket of a part's share (minute), or each part of the "
                             "window on the clock holding at most its share, the headers counting it (second)")
    parser.add_argument("--who", choices=("judgebot", "plain loop"), nargs="+", default=["judgebot", "plain loop"],
                        help="what to run against the limits")
    parser.add_argument("--only", help="the scenarios whose name holds this text")
    parser.add_argument("--concurrency", type=int, help="judgebot's --concurrency (default: CONCURRENCY's default)")
    args = parser.parse_args()
    print(f"{args.rows:,} rows, latency {args.latency * 1000:.0f} ms, window {args.window:g} s, limits x{args.scale:g}, "
          f"each {args.window / args.parts:g} s holding its share ({args.reading} reading)"
          + (f", judgebot --concurrency {args.concurrency}" if args.concurrency else ""))
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        for name, rpm, tpm, retry_after in SCENARIOS:
            if args.only is None or args.only in name:
                scenario(args, name, rpm, tpm, retry_after, Path(folder))
    print(f"({time.monotonic() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
