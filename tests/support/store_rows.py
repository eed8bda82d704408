"""Runs, rows and verdicts built by hand for the store tests, and a judgment read back through a brand new engine."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from bot.records import Verdict
from bot.store import Store, make_engine
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows

COMMON = {"rubric_name": "correctness", "rubric_version": "1.0", "rubric_hash": "h" * 32, "judge_model": "judge-m"}
T = TypeVar("T")
ARABIC = "ما هي عاصمة مصر؟"
ARABIC_ANSWER = "القاهرة هي عاصمة مصر."


def make_verdict(**overrides: Any) -> Verdict:
    """A scored verdict, built by hand."""
    fields: dict[str, Any] = {
        "status": "scored", "output": {"score": 4, "reason": ARABIC_ANSWER}, "derived": {"norm": 0.8},
        "headline": 0.8, "passed": True, "label": "good", "tag": "t", "raw_reply": '{"score": 4}', "flags": [],
        "tokens_in": 120, "tokens_out": 30, "latency_ms": 450, "attempts": 1,
        **{k: COMMON[k] for k in ("rubric_name", "rubric_version", "rubric_hash", "judge_model")},
        "prompt_hash": "p" * 32,
    }
    fields.update(overrides)
    return Verdict(**fields)


def row(run_id: int, number: int, **extra: Any) -> dict[str, Any]:
    """A pending judgment row as start_run builds it."""
    return {**COMMON, "run_id": run_id, "row_number": number, "status": "pending", "question": f"q{number}",
            "reference": f"ref{number}", "answer": f"a{number}", "cells": {"n": number}, **extra}


def reload(db_url: str, judgment_id: int) -> JudgmentTable:
    """A judgment read back through a brand new engine, so nothing comes from a session's memory."""
    fresh = Store(make_engine(db_url))
    try:
        with fresh.session() as session:
            found = session.get(JudgmentTable, judgment_id)
            assert found is not None
            return found
    finally:
        fresh.engine.dispose()


def at_once(db_url: str, act: Callable[[Store], T], *, stores: int = 6) -> list[T]:
    """`act` run at the same moment by `stores` stores of their own (each its own engine and connections, as a
    process has), each in a thread of its own; what each returned, in the order they returned."""
    opened = [Store.open(db_url) for _ in range(stores)]
    start, answers = threading.Barrier(len(opened)), []

    def run(each: Store) -> None:
        start.wait()
        answers.append(act(each))

    threads = [threading.Thread(target=run, args=(each,)) for each in opened]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for each in opened:
            each.engine.dispose()
    return answers
