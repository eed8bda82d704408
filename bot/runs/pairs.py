"""A pairwise run's results CSV (one row per pair, with both orders' verdicts) and its figures, in one streaming pass
over its rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.csvfiles.results import ResultsWriter, flatten
from bot.rubric import Rubric, leaves
from bot.runs.summary import Summary, beside_columns
from bot.store import Run, Store
from bot.store.history import run_billed
from bot.trust.pairwise import FLIP, UNNAMED, JudgedPair, PairwiseReport, report, shown_of

ORDERS = {False: "ab", True: "ba"}  # the suffix of each order's columns: shown A first, or B first
PAIR_COLUMNS = ["winner", "consistent"]
ORDER_COLUMNS = ["status", "error", "flags"]
RUN_COLUMNS = ["judge_model", "rubric_version", "cached"]


@dataclass
class PairsSummary:
    """A pairwise run's figures: its judgments counted as any run's (`summary`), and its pairs' (`report`)."""

    summary: Summary
    report: PairwiseReport
    malformed: int = 0  # rows of the file that were not pairs (see the summary's problems)
    pairs: list[JudgedPair] = field(default_factory=list)


def pair_fieldnames(run: Run, rubric: Rubric) -> dict[str, str]:
    """The results column of each field: row, the pair's outcome, then each order's fields and status."""
    per_order = [*(path for path, _ in leaves(rubric.output)), *ORDER_COLUMNS]
    fields = ["row", *PAIR_COLUMNS, *(f"{name}_{order}" for order in ORDERS.values() for name in per_order),
              *RUN_COLUMNS]
    return beside_columns(run.columns or [], fields)


def export_pairs(store: Store, *, run: Run, rubric: Rubric, out: Path | None) -> PairsSummary:
    """Stream a pairwise run's rows once: write one results row per pair to `out` (when given) and return the
    figures."""
    summary = Summary(criteria=[], columns=run.column_roles or {}, estimate=run.estimate)
    names = pair_fieldnames(run, rubric)
    fieldnames = [names["row"], *(run.columns or []), *list(names.values())[1:]]
    pairs: list[JudgedPair] = []
    malformed = 0
    # Written whole or not at all: a failure part-way leaves whatever was at `out` as it was.
    with ResultsWriter(out, fieldnames) if out else nullcontext(None) as writer:
        for rows in _pairs(store, run.id):
            for row in rows:
                summary.add(row, {}, [])
            first = rows[0]
            if first.swapped is None:  # a row of the file that could not be read as a pair
                malformed += 1
                if writer is not None:
                    writer.write({**(first.cells or {}), names["status_ab"]: first.status, names["error_ab"]: first.error,
                                  names["row"]: first.row_number})
                continue
            pair = JudgedPair(first.row_number, first.question, first.model_name or UNNAMED[0],
                              first.model_b or UNNAMED[1], tuple(shown_of(row) for row in rows))
            pairs.append(pair)
            if writer is not None:
                writer.write({**(first.cells or {}), **_pair_cells(rows, pair, names)})
    summary.bill(run_billed(store, run.id))
    return PairsSummary(summary, report(pairs, swapped=_swapped_run(pairs)), malformed, pairs)


def _swapped_run(pairs: Sequence[JudgedPair]) -> bool:
    """Whether the run showed its pairs in both orders (rather than each once)."""
    return any(len(pair.shown) > 1 for pair in pairs)


def _pair_cells(rows: Sequence[Any], pair: JudgedPair, names: dict[str, str]) -> dict[str, Any]:
    """The results cells of a pair: its outcome, then each order's verdict (winners in the file's terms: A is its
    answer_a whatever order the judge saw)."""
    cells: dict[str, Any] = {names["row"]: pair.line, names["winner"]: pair.outcome, names["consistent"]: pair.consistent,
                             names["judge_model"]: rows[0].judge_model, names["rubric_version"]: rows[0].rubric_version,
                             names["cached"]: all(row.cached_from is not None for row in rows)}
    for row in rows:
        order = ORDERS[bool(row.swapped)]
        values = flatten(row.output or {})
        if row.swapped and isinstance(values.get("winner"), str):
            values["winner"] = FLIP.get(str(values["winner"]), values["winner"])
        values |= {"status": row.status, "error": row.error, "flags": row.flags or None}
        cells |= {names[f"{name}_{order}"]: value for name, value in values.items() if f"{name}_{order}" in names}
    return cells


def _pairs(store: Store, run_id: int) -> Iterator[list[Any]]:
    """A run's rows in order, those of one pair together (its orders are saved one after the other)."""
    group: list[Any] = []
    for row in store.iter_columns(run_id):
        if group and (row.row_number != group[0].row_number or row.swapped is None):
            yield group
            group = []
        group.append(row)
    if group:
        yield group
