"""A big SQLite history for benchmarking the web view, written straight into the store's own schema in batches.

One run of 20,000 rows (four models under test, judged in the last day) among runs of 2,000 rows (two models each,
their channel's 1,000 questions asked again and again, so cases are re-judged and replaced) in eight channels and the
terminal over 26 weeks, with judge errors, invalid replies, unsure and injection-flagged verdicts, a judge change half
way, people's votes, about 6,000 labels and review cases (open and labeled). Verdicts are the eth rubric's own scoring of a few
replies; case keys, question keys, `replaced_at`, the hourly tally and the billed tally are filled by the store's own
functions (as an upgrade of a history written before them does), so every figure reads it as it reads a judged one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.rubric import Rubric, load_rubrics
from bot.store import (
    BilledTally,
    Feedback,
    Judgment,
    JudgmentTally,
    Label,
    ReviewCase,
    Run,
    Store,
    add_judgments,
    bill_judgments,
    case_key,
    counted_case,
    fill_replacements,
    question_key,
    table_of,
)
from bot.trust.labels import HumanValues, complete

TEAM = "T0BENCH"
BIG_CHANNEL = "C0BIG"
CHANNELS = (*(f"C0CH{n:02d}" for n in range(1, 9)), None)  # None: the terminal
MODELS = ("gpt-4o", "gpt-4o-mini", "llama-3.1-70b", "mistral-large", "qwen2.5-72b", "claude-3.5-haiku")
BIG_MODELS = MODELS[:4]
JUDGES = ("gpt-4o-mini", "gpt-4.1-mini")  # the judge changed half way
QUESTIONS = 1_000  # a channel's eval set
RUN_ROWS = 2_000  # a run: two models answering the channel's eval set
BIG_ROWS = 20_000
WEEKS = 26
BATCH = 10_000
USERS = tuple(f"U0REV{n:02d}" for n in range(1, 13))
TASKS = ("print a document", "register for an exam", "book a room in the library", "reset my password",
         "get a parking permit", "join ASVZ sports", "find my grades", "pay the semester fee", "use the Euler cluster",
         "apply for a leave of absence", "find the lecture recordings", "connect to eduroam")
REPLIES = {  # tag -> (correctness, completeness): every one obeys the eth rules
    "Correct": [(2, 2), (2, 1)], "Generic": [(0, 1), (1, 1)], "Refusal": [(0, 0)], "Hallucination": [(0, 0), (0, 1)],
}
LABELED = 0.22  # share of the older picked cases people labeled: about 6,000 labels, 12 people's 20 a week for 26 weeks
SKILL = {model: 0.45 + 0.08 * n for n, model in enumerate(reversed(MODELS))}  # share of Correct replies


@dataclass(frozen=True)
class Outcome:
    """A reply of the judge as the eth rubric scores it."""

    output: dict[str, Any]
    derived: dict[str, Any]
    headline: float
    passed: bool
    label: str
    tag: str | None


def outcomes(eth: Rubric) -> dict[str, list[Outcome]]:
    """The replies a row can get, per tag, each scored by the rubric itself."""
    found: dict[str, list[Outcome]] = {}
    for tag, pairs in REPLIES.items():
        for correctness, completeness in pairs:
            output = {"correctness": correctness, "completeness": completeness, "result_tag": tag,
                      "reasoning": f"The answer is {tag.lower()}: the ground truth names the ETH tool."}
            scoring = eth.score(output)
            found.setdefault(tag, []).append(Outcome(output, dict(scoring.derived), scoring.headline, scoring.passed,
                                                     scoring.label, scoring.tag))
    return found


@dataclass(frozen=True)
class RunPlan:
    """One run to write: its channel, models, questions and when it was judged."""

    id: int
    channel: str | None
    models: tuple[str, ...]
    questions: int
    started: datetime
    judge: str


def plans(judgments: int, now: datetime) -> list[RunPlan]:
    """The runs, oldest first: the small ones spread over the weeks, the big one last (yesterday)."""
    small = max((judgments - BIG_ROWS) // RUN_ROWS, 0)
    start = now - timedelta(weeks=WEEKS)
    step = (now - timedelta(days=1) - start) / max(small, 1)
    found = []
    for n in range(small):
        at = start + step * n
        models = (MODELS[n % len(MODELS)], MODELS[(n + 1 + n // len(MODELS)) % len(MODELS)])
        if models[0] == models[1]:
            models = (models[0], MODELS[(MODELS.index(models[0]) + 1) % len(MODELS)])
        found.append(RunPlan(n + 1, CHANNELS[n % len(CHANNELS)], models, QUESTIONS, at,
                             JUDGES[0] if at < start + (now - start) / 2 else JUDGES[1]))
    found.append(RunPlan(small + 1, BIG_CHANNEL, BIG_MODELS, BIG_ROWS // len(BIG_MODELS), now - timedelta(hours=20),
                         JUDGES[1]))
    return found


def question_of(channel: str | None, n: int) -> str:
    return f"How do I {TASKS[n % len(TASKS)]} at ETH? ({channel or 'terminal'}, question {n})"


def reference_of(n: int) -> str:
    return f"Use the ETH tool for it: myStudies, Web Print or ASVZ as the case may be (reference {n})."


def answer_of(model: str, n: int) -> str:
    return (f"{model} says: you can {TASKS[n % len(TASKS)]} through the portal; ask the service desk if it fails. "
            f"(answer {n})")


def rows_of(plan: RunPlan, eth: Rubric, replies: dict[str, list[Outcome]], rng: random.Random, first_id: int
            ) -> Iterator[dict[str, Any]]:
    """The judgment rows of a run, each model answering its questions in turn, 0.2 s apart."""
    common = {"run_id": plan.id, "team_id": TEAM if plan.channel else None, "channel_id": plan.channel,
              "user_id": USERS[plan.id % len(USERS)] if plan.channel else None, "rubric_name": "eth",
              "rubric_version": eth.version, "rubric_hash": eth.content_hash, "judge_model": plan.judge,
              "prompt_hash": "p" * 32}
    number = 0
    for model in plan.models:
        for n in range(plan.questions):
            at = (plan.started + timedelta(seconds=0.2 * number)).replace(tzinfo=None)
            question, reference, answer = question_of(plan.channel, n), reference_of(n), answer_of(model, n)
            row: dict[str, Any] = {
                **common, "id": first_id + number, "row_number": number + 2, "created_at": at, "judged_at": at,
                "model_name": model, "question": question, "reference": reference, "answer": answer,
                "question_key": question_key(model, "eth", question), "cells": {"id": str(n)},
                "case_hash": counted_case(case_key(common["team_id"], plan.channel, "eth", question, reference,
                                                   answer), model),
                "cache_key": f"{plan.judge}:{model}:{n}", "attempts": 1, "latency_ms": 800 + number % 400,
                "tokens_in": 900, "tokens_out": 120}
            draw = rng.random()
            if draw < 0.02:
                row.update(status="error", error="the judge's endpoint answered 503 three times", tokens_in=0,
                           tokens_out=0)
            elif draw < 0.03:
                row.update(status="invalid", error="correctness is 2 exactly when result_tag is Correct",
                           raw_reply='{"correctness": 2, "result_tag": "Generic"}')
            else:
                correct = rng.random() < SKILL[model]
                tag = "Correct" if correct else rng.choice(("Generic", "Refusal", "Hallucination", "Generic"))
                outcome = rng.choice(replies[tag])
                row.update(status="scored", output=outcome.output, derived=outcome.derived,
                           headline=outcome.headline, passed=outcome.passed, label=outcome.label, tag=outcome.tag,
                           raw_reply="{}", cost_usd=0.00021)
                if rng.random() < 0.03:
                    row.update(unsure=True, samples=3, agreement=0.67, spread=25.0)
                if rng.random() < 0.005:
                    row["flags"] = ["possible prompt injection: the answer addresses the judge"]
            number += 1
            yield row


def run_row(plan: RunPlan, eth: Rubric) -> dict[str, Any]:
    at = plan.started.replace(tzinfo=None)
    total = plan.questions * len(plan.models)
    return {"id": plan.id, "created_at": at, "started_at": at, "finished_at": at + timedelta(seconds=0.2 * total),
            "status": "done", "rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
            "judge_model": plan.judge, "source": "slack" if plan.channel else "cli",
            "source_name": f"eval-{plan.id:04d}.csv", "columns": ["id", "question", "reference", "answer", "model"],
            "total_rows": total, "team_id": TEAM if plan.channel else None, "channel_id": plan.channel,
            "user_id": USERS[plan.id % len(USERS)] if plan.channel else None}


def build(store: Store, *, judgments: int = 1_000_000, seed: int = 46, say: Any = print) -> None:
    """Write the history into an empty store (made by Store.open: the schema and its migrations)."""
    began = time.perf_counter()
    eth = load_rubrics().get("eth")
    replies = outcomes(eth)
    rng = random.Random(seed)
    now = datetime.now(UTC)
    runs = plans(judgments, now)
    judgment, feedback = table_of(Judgment), table_of(Feedback)
    picked: list[dict[str, Any]] = []  # rows people labeled, voted on or queued for review
    with store.engine.begin() as conn:
        conn.execute(table_of(Run).insert(), [run_row(plan, eth) for plan in runs])
        next_id, batch = 1, []
        for plan in runs:
            for row in rows_of(plan, eth, replies, rng, next_id):
                batch.append(row)
                if row["status"] == "scored" and (row.get("unsure") or rng.random() < 0.004):
                    picked.append({key: row[key] for key in ("id", "run_id", "team_id", "channel_id", "question",
                                                            "reference", "answer", "judge_model", "rubric_hash",
                                                            "passed", "tag", "judged_at")} | {"unsure": bool(row.get("unsure"))})
                if len(batch) >= BATCH:
                    conn.execute(judgment.insert(), _filled(batch))
                    batch = []
            next_id += plan.questions * len(plan.models)
        if batch:
            conn.execute(judgment.insert(), _filled(batch))
        say(f"  {next_id - 1:,} judgments in {len(runs)} runs written in {time.perf_counter() - began:.0f} s")
        _trust(conn, picked, eth, rng)
        fill_replacements(conn, judgment)  # rows written straight into the table are chained as an upgrade does
        add_judgments(conn, judgment, table_of(JudgmentTally), sa.true(), feedback=feedback)
        conn.execute(bill_judgments(conn.dialect.name, judgment, table_of(BilledTally), sa.true()))
    say(f"  chained, tallied and billed: {time.perf_counter() - began:.0f} s in all")


VERDICT_COLUMNS = ("output", "derived", "headline", "passed", "label", "tag", "raw_reply", "error", "cost_usd",
                   "unsure", "samples", "agreement", "spread", "flags")


def _filled(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with every column an executemany needs (each row the same keys)."""
    return [{**dict.fromkeys(VERDICT_COLUMNS), **row} for row in batch]


def _trust(conn: sa.Connection, picked: list[dict[str, Any]], eth: Rubric, rng: random.Random) -> None:
    """Review cases (the unsure verdicts, and a few drawn at random: of those, the older half labeled), people's
    labels of the labeled ones and of some more, and votes."""
    cases: dict[str, dict[str, Any]] = {}
    labels, votes = [], []
    cutoff = max((row["judged_at"] for row in picked), default=datetime.now(UTC)) - timedelta(days=30)
    for row in picked:
        key = case_key(row["team_id"], row["channel_id"], "eth", row["question"], row["reference"], row["answer"])
        labeled = row["judged_at"] < cutoff and rng.random() < LABELED
        user = rng.choice(USERS)
        if key not in cases and (row["unsure"] or rng.random() < 0.5):
            cases[key] = {"team_id": row["team_id"], "channel_id": row["channel_id"], "case_key": key,
                          "judgment_id": row["id"], "run_id": row["run_id"], "rubric_name": "eth",
                          "reason": "unsure" if row["unsure"] else "random", "random": not row["unsure"],
                          "state": "labeled" if labeled else "open", "created_at": row["judged_at"],
                          "labeled_by": user if labeled else None}
        if labeled:
            agrees = rng.random() < 0.8
            passed = row["passed"] if agrees else not row["passed"]
            tag = row["tag"] if agrees else rng.choice(("Correct", "Generic", "Refusal", "Hallucination"))
            label = complete(HumanValues(values={"result_tag": tag}, passed=passed), eth)
            labels.append({"judgment_id": row["id"], "team_id": row["team_id"], "channel_id": row["channel_id"],
                           "user_id": user, "source": "correction", "case_key": key, "rubric_name": "eth",
                           "rubric_hash": row["rubric_hash"], "judge_model": row["judge_model"],
                           "values": label.values, "passed": label.passed, "pass_from": label.pass_from,
                           "tag": label.tag, "headline": label.headline, "note": None,
                           "created_at": row["judged_at"] + timedelta(hours=3),
                           "updated_at": row["judged_at"] + timedelta(hours=3)})
        elif row["channel_id"] and rng.random() < 0.5:
            votes.append({"judgment_id": row["id"], "user_id": user, "agree": rng.random() < 0.8, "case_key": key,
                          "created_at": row["judged_at"], "updated_at": row["judged_at"]})
    if cases:
        conn.execute(table_of(ReviewCase).insert(), list(cases.values()))
    if labels:
        conn.execute(table_of(Label).insert(), labels)
    if votes:
        conn.execute(table_of(Feedback).insert(), votes)
