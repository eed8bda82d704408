"""Benchmark a weekly digest: fill a SQLite history with synthetic judgments, then time building one channel's digest.

The channel's history holds N judgments spread over W weeks (several models, the eth and academic rubrics,
judge errors, human votes on the newest judgments given as they were posted, a rubric version change in the last
week); other channels hold more rows. Prints the time to fill, and the time of `build_digest` (every figure,
regressions, worst examples, judge changes, how far to trust the judge and the 8-week trend) over several repeats,
cold and warm. Run by hand, e.g.:

    python bench/bench_digest.py --rows 1000000 --weeks 52
    python bench/bench_digest.py --rows 1000000 --weeks 8      # the whole history in the charted weeks
    python bench/bench_digest.py --rows 1000000 --weeks 52 --scattered   # no runs: every judgment on its own
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import true

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.digest import Period, build_digest
from bot.store import (
    Feedback,
    Judgment,
    JudgmentTally,
    Run,
    Store,
    add_judgments,
    case_key,
    counted_case,
    fill_replacements,
    question_key,
)

CHANNEL = "C0BENCH"
MODELS = ("gpt-4o", "gpt-4o-mini", "llama-3.1-70b", "mistral-large", "qwen2.5-72b")
ETH_TAGS = ("Correct", "Generic", "Refusal", "Hallucination")
QUESTIONS = 2_000  # distinct questions asked again week after week
BATCH = 20_000
REFERENCE = "Registration is done in myStudies during the period."


def fill(store: Store, *, rows: int, weeks: int, other_rows: int, end: datetime, runs: bool, seed: int = 7) -> None:
    """Insert `rows` judgments in CHANNEL over the `weeks` before `end`, and `other_rows` in other channels.

    With `runs`, the channel's judgments come as a team makes them: runs of its eval set (every question once, one
    model and rubric a run, judged within about ten minutes), spread evenly over the weeks; else each judgment at a
    time of its own and a question drawn at random (the case the hourly tally compresses least).
    """
    rng = random.Random(seed)
    with store.session() as session:
        run = Run(rubric_name="eth", rubric_version="1", rubric_hash="h1", judge_model="judge-bench", source="bench",
                  status="done", channel_id=CHANNEL)
        session.add(run)
        session.commit()
        run_id = run.id
    span = weeks * 7 * 86_400
    table = Judgment.__table__
    feedback = Feedback.__table__
    start = end - timedelta(seconds=span)
    made = 0
    with store.engine.begin() as conn:
        total = rows + other_rows
        for first in range(0, total, BATCH):
            batch = []
            for i in range(first, min(first + BATCH, total)):
                channel = CHANNEL if i < rows else f"C0OTHER{i % 20}"
                at = start + timedelta(seconds=span * ((i % rows if i < rows else i - rows) /
                                                       (rows if i < rows else max(other_rows, 1))))
                rubric = "eth" if i % 3 else "academic"
                model = MODELS[i % len(MODELS)]
                number = rng.randrange(QUESTIONS)
                if runs and i < rows:  # run n asks question i % QUESTIONS, at 0.3 s a row from the run's start
                    n, number = divmod(i, QUESTIONS)
                    at = start + timedelta(seconds=span * n * QUESTIONS / rows + 0.3 * number)
                    model, rubric = MODELS[n % len(MODELS)], "eth" if (n // len(MODELS)) % 3 else "academic"
                late = at > end - timedelta(days=3)
                status = "error" if rng.random() < 0.02 else "invalid" if rng.random() < 0.01 else "scored"
                headline = rng.choice((0.0, 25.0, 50.0, 75.0, 100.0)) if status == "scored" else None
                question = f"Question {number}: how do I register for the exams of my programme?"
                answer = "You register in myStudies."  # each question's answer again each week: one case, re-judged
                case = counted_case(case_key("T0BENCH", channel, rubric, question, REFERENCE, answer), model)
                batch.append({
                    "run_id": run_id, "row_number": i + 2, "created_at": at.replace(tzinfo=None),
                    "judged_at": at.replace(tzinfo=None), "status": status, "team_id": "T0BENCH",
                    "channel_id": channel, "thread_ts": "1700000000.000100", "user_id": "U0BENCH",
                    "model_name": model, "rubric_name": rubric, "question_key": question_key(model, rubric, question),
                    "rubric_version": "2" if late and rubric == "eth" else "1",
                    "rubric_hash": "h2" if late and rubric == "eth" else "h1", "judge_model": "judge-bench",
                    "question": question, "reference": REFERENCE, "answer": answer, "case_hash": case,
                    "headline": headline,
                    "passed": None if headline is None else headline >= 75,
                    "tag": rng.choice(ETH_TAGS) if rubric == "eth" and status == "scored" else None,
                    "tokens_in": 300, "tokens_out": 60, "latency_ms": 900, "attempts": 1,
                })
            conn.execute(table.insert(), batch)
            made += len(batch)
        voted = conn.execute(table.select().with_only_columns(table.c.id, table.c.judged_at)
                             .where(table.c.channel_id == CHANNEL, table.c.status == "scored")
                             .order_by(table.c.id.desc()).limit(rows // 50)).all()
        # A person votes on a judgment as it is posted: the newest judgments' votes fall in the weeks the digest's
        # "how far to trust the judge" calibrates.
        conn.execute(feedback.insert(), [{"judgment_id": i, "user_id": "U0BENCH", "agree": i % 4 != 0,
                                          "created_at": at, "updated_at": at} for i, at in voted])
        # Rows and votes written straight into the tables are chained and counted as an upgrade does.
        fill_replacements(conn, table)
        add_judgments(conn, table, JudgmentTally.__table__, true(), feedback=feedback)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="judgments in the channel of the digest")
    parser.add_argument("--weeks", type=int, default=52, help="weeks they are spread over")
    parser.add_argument("--other-rows", type=int, default=200_000, help="judgments in other channels")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--db", type=Path, help="SQLite file to use (default: a temporary one)")
    parser.add_argument("--scattered", action="store_true", help="each judgment at a time of its own, its question "
                        "at random, rather than in runs of the eval set (the tally compresses it least)")
    args = parser.parse_args()

    zone = ZoneInfo("Europe/Berlin")
    period = Period.before_day_of(datetime(2026, 11, 23, 9, 0, tzinfo=zone))
    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "bench.db"
        store = Store.open(f"sqlite:///{path}")
        with store.engine.connect() as conn:  # closed at once: a connection left open holds SQLite's write lock
            filled = conn.exec_driver_sql(f"SELECT 1 FROM judgment WHERE channel_id = '{CHANNEL}' LIMIT 1").first()
        if not filled:
            began = time.perf_counter()
            fill(store, rows=args.rows, weeks=args.weeks, other_rows=args.other_rows,
                 end=period.end.astimezone(UTC), runs=not args.scattered)
            print(f"filled {args.rows:,} judgments over {args.weeks} weeks (+{args.other_rows:,} elsewhere) in "
                  f"{time.perf_counter() - began:.1f} s; database {path.stat().st_size / 1e6:.0f} MB")
        store.engine.dispose()
        times = []
        for _ in range(args.repeats):
            store = Store.open(f"sqlite:///{path}")  # a fresh connection each time: no statement cache carried over
            began = time.perf_counter()
            digest = build_digest(store, channel_id=CHANNEL, period=period)
            times.append(time.perf_counter() - began)
            store.engine.dispose()
        print(f"digest of {period.label} ({period.week}): {digest.cases:,} cases this week, "
              f"{len(digest.lines)} model/rubric lines, {len(digest.regressions)} regressions, "
              f"{len(digest.changes)} judge change(s), trend of {len(digest.weeks)} weeks")
        print(f"build_digest: first {times[0] * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms over {args.repeats} runs (targets: 8 weeks < 500 ms, 52 weeks < 300 ms)")


if __name__ == "__main__":
    main()
