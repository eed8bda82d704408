"""A pairwise run's results CSV (one row per pair, with both orders' verdicts) and its figures, in one streaming pass
over its rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.csvfiles.passages import input_cells
from bot.csvfiles.results import ResultsWriter, flatten
from bot.rubric import Rubric, leaves
from bot.runs.summary import Summary, beside_columns
from bot.store import Run, Store, iter_columns, pair_case, pair_labels, run_billed
from bot.trust.pairwise import FLIP, JudgedPair, PairwiseReport, pair_of, people_winner, report

ORDERS = {False: "ab", True: "ba"}  # the suffix of each order's columns: shown A first, or B first
PAIR_COLUMNS = ["winner", "consistent", "people"]
ORDER_COLUMNS = ["status", "error", "flags"]
RUN_COLUMNS = ["judge_model", "rubric_version", "cached"]
LABELS_READ = 500  # pairs whose people's labels are read in one query


@dataclass
class PairsSummary:
    """A pairwise run's figures: its judgments counted as any run's (`summary`), and its pairs' (`report`)."""

    summary: Summary
    report: PairwiseReport
    malformed: int = 0  # rows of the file that were not pairs (see the summary's problems)
    pairs: list[JudgedPair] = field(default_factory=list)
    unsettled: list[tuple[int, str]] = field(default_factory=list)  # inconsistent pairs nobody labeled: (row, case)


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
    unsettled: list[tuple[int, str]] = []
    malformed = 0
    # Written whole or not at all: a failure part-way leaves whatever was at `out` as it was.
    with ResultsWriter(out, fieldnames) if out else nullcontext(None) as writer:
        for group, people in _labeled(store, _pairs(store, run.id)):
            for rows in group:
                for row in rows:
                    summary.add(row, {}, [])
                first = rows[0]
                if first.swapped is None:  # a row of the file that could not be read as a pair
                    malformed += 1
                    if writer is not None:
                        writer.write({**input_cells(first.cells, first.context), names["status_ab"]: first.status,
                                      names["error_ab"]: first.error, names["row"]: first.row_number})
                    continue
                case = pair_case(first)
                pair = pair_of(rows, people.get(case))
                pairs.append(pair)
                if pair.consistent is False and pair.human is None:
                    unsettled.append((next((row.id for row in rows if not row.swapped), first.id), case))
                if writer is not None:
                    writer.write({**input_cells(first.cells, first.context), **_pair_cells(rows, pair, names)})
    summary.bill(run_billed(store, run.id))
    return PairsSummary(summary, report(pairs, swapped=_swapped_run(pairs)), malformed, pairs, unsettled)


def _swapped_run(pairs: Sequence[JudgedPair]) -> bool:
    """Whether the run showed its pairs in both orders (rather than each once)."""
    return any(len(pair.shown) > 1 for pair in pairs)


def _pair_cells(rows: Sequence[Any], pair: JudgedPair, names: dict[str, str]) -> dict[str, Any]:
    """The results cells of a pair: its outcome, then each order's verdict (winners in the file's terms: A is its
    answer_a whatever order the judge saw)."""
    cells: dict[str, Any] = {names["row"]: pair.line, names["winner"]: pair.outcome, names["consistent"]: pair.consistent,
                             names["people"]: pair.human,
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


def _labeled(store: Store, pairs: Iterator[list[Any]]) -> Iterator[tuple[list[list[Any]], dict[str, str]]]:
    """The pairs in groups of LABELS_READ, each group with what people said of its pairs (the winner by case)."""
    group: list[list[Any]] = []
    for rows in pairs:
        group.append(rows)
        if len(group) == LABELS_READ:
            yield group, _people(store, group)
            group = []
    if group:
        yield group, _people(store, group)


def _people(store: Store, group: list[list[Any]]) -> dict[str, str]:
    said = pair_labels(store, (pair_case(rows[0]) for rows in group if rows[0].swapped is not None))
    return {key: winner for key, winners in said.items() if (winner := people_winner(winners)) is not None}


def _pairs(store: Store, run_id: int) -> Iterator[list[Any]]:
    """A run's rows in order, those of one pair together (its orders are saved one after the other)."""
    group: list[Any] = []
    for row in iter_columns(store, run_id):
        if group and (row.row_number != group[0].row_number or row.swapped is None):
            yield group
            group = []
        group.append(row)
    if group:
        yield group
