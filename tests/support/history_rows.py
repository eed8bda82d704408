"""A history described row by row (model, status, verdict, age) and written into a store through a real run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

from bot.csvfiles.rows import CsvRow, MalformedRow
from bot.records import Verdict
from bot.rubric import Rubric
from bot.runs import Origin, start_run
from bot.store import Store, iter_judgments, save_verdict

COLUMNS = ["question", "reference", "answer", "model"]


@dataclass(frozen=True)
class Row:
    """One row of the history to build: what the judge made of it (or that it was never judged)."""

    model: str | None
    status: str  # scored, error, invalid, pending or malformed
    headline: float | None = None
    passed: bool | None = None
    tag: str | None = None
    days_ago: int = 0  # judged that many days before now


def verdict(rubric: Rubric, row: Row) -> Verdict:
    common: dict[str, Any] = {"rubric_name": rubric.name, "rubric_version": rubric.version,
                              "rubric_hash": rubric.content_hash, "judge_model": "judge-test", "prompt_hash": "p" * 16}
    if row.status == "scored":
        return Verdict(status="scored", output={"x": 1}, headline=row.headline, passed=row.passed,
                       label=f"headline {row.headline}", tag=row.tag, raw_reply='{"x": 1}', tokens_in=10,
                       tokens_out=5, latency_ms=100, attempts=1, **common)
    return Verdict(status=row.status, error=f"the judge's reply was {row.status}", raw_reply="oops", attempts=1,
                   **common)


def add(store: Store, rubric: Rubric, rows: list[Row], *, channel: str, user: str, team: str = "T1") -> list[int]:
    """Start a run of `rows` from Slack in `channel`, judge them as described; the judgment ids in row order."""
    items: list[CsvRow | MalformedRow] = []
    for line, row in enumerate(rows, 2):
        if row.status == "malformed":
            cells = ["q", "r", "", row.model or ""]
            items.append(MalformedRow(line=line, reason="the answer cell is empty", cells=cells))
        else:
            text = f"{channel} {user} row {line}"
            items.append(CsvRow(line=line, question=f"Q {text}", reference=f"R {text}", answer=f"A {text}",
                                model=row.model, cells={"question": f"Q {text}"}))
    origin = Origin(source="slack", team_id=team, channel_id=channel, user_id=user)
    run = start_run(store, rubric=rubric, rows=items, judge_model="judge-test", columns=COLUMNS, origin=origin)
    ids = [judgment.id for judgment in iter_judgments(store, run.id)]
    assert len(ids) == len(rows)
    for judgment_id, row in zip(ids, rows):
        if row.status not in ("pending", "malformed"):
            with time_machine.travel(datetime.now(UTC) - timedelta(days=row.days_ago), tick=False):
                assert save_verdict(store, judgment_id, verdict(rubric, row), cache_key="k")
    return ids
