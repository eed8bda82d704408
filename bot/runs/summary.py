"""A run's results CSV and summary figures, computed in one streaming pass over its rows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.figures import ratio
from bot.records import REJUDGEABLE, RowState
from bot.results_csv import ResultsWriter, flatten
from bot.rubric import Rubric, leaves
from bot.store import Judgment, Run, Store

# USD per million tokens (input, output) of judge models whose price is public; the longest matching prefix wins.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "o4-mini": (1.10, 4.40),
}
RESULT_COLUMNS = ["headline", "passed", "label", "status", "error", "flags", "judge_model", "rubric_version", "cached"]
WORST_KEPT = 3
PROBLEMS_KEPT = 20
BANDS = ("0-19", "20-39", "40-59", "60-79", "80-100")  # headline bands of the score distribution
QUESTION_KEPT = 200  # characters of a lowest row's question kept for the summary


def band_of(headline: float) -> int:
    """The index in BANDS of a 0-100 headline."""
    return min(int(headline // 20), len(BANDS) - 1)


@dataclass
class ModelFigures:
    """How one model under test did in a run."""

    rows: int = 0
    scored: int = 0
    passed: int = 0
    headline_total: float = 0.0
    bands: list[int] = field(default_factory=lambda: [0] * len(BANDS))
    errors: int = 0

    @property
    def mean_headline(self) -> float | None:
        """Mean 0-100 headline of its scored rows."""
        return ratio(self.headline_total, self.scored)

    @property
    def pass_rate(self) -> float | None:
        """Share of its scored rows that passed."""
        return ratio(self.passed, self.scored)


def price_of(judge_model: str) -> tuple[float, float] | None:
    """The (input, output) price per million tokens of a known judge model."""
    matches = [name for name in PRICES if judge_model.lower().startswith(name)]
    return PRICES[max(matches, key=len)] if matches else None


@dataclass
class Summary:
    """Figures of a run: counts by status, mean of each criterion, tag counts, pass rate, tokens, cost, and the
    column of each role (`columns`, {"answer": "model_response"}) its file was read with."""

    criteria: list[str]
    counts: Counter[str] = field(default_factory=Counter)
    totals: dict[str, float] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)
    tags: dict[str, Counter[str]] = field(default_factory=dict)
    passed: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)
    worst: list[tuple[float, int | None, str]] = field(default_factory=list)
    models: dict[str, ModelFigures] = field(default_factory=dict)
    price: tuple[float, float] | None = None
    columns: dict[str, str] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """Every row of the run, malformed ones included."""
        return sum(self.counts.values())

    @property
    def scored(self) -> int:
        """Rows with a score."""
        return self.counts[RowState.SCORED]

    @property
    def errors(self) -> int:
        """Rows the judge could not score (transport errors and replies that broke the rubric)."""
        return self.counts[RowState.ERROR] + self.counts[RowState.INVALID]

    @property
    def pass_rate(self) -> float | None:
        """Share of scored rows that passed."""
        return ratio(self.passed, self.scored)

    @property
    def cost(self) -> float | None:
        """Dollars spent on the judge, when its price is known."""
        if self.price is None:
            return None
        return (self.tokens_in * self.price[0] + self.tokens_out * self.price[1]) / 1_000_000

    @property
    def column_text(self) -> str:
        """The column of each role, as `--columns` takes it: "question=Query, ..., answer=model_response"."""
        return ", ".join(f"{role}={column}" for role, column in self.columns.items())

    def mean(self, criterion: str) -> float | None:
        """Mean of one criterion over the scored rows."""
        return self.totals[criterion] / self.seen[criterion] if self.seen[criterion] else None

    def add(self, row: Judgment, values: dict[str, Any], tag_paths: list[str]) -> None:
        """Count one row."""
        self.counts[row.status] += 1
        self.tokens_in += row.tokens_in
        self.tokens_out += row.tokens_out
        self.cached += row.cached_from is not None
        model = self.models.setdefault(row.model_name or "(no model)", ModelFigures())
        model.rows += 1
        if row.status != RowState.SCORED:
            model.errors += row.status in REJUDGEABLE
            if row.status != RowState.PENDING and len(self.problems) < PROBLEMS_KEPT:
                self.problems.append((row.row_number, row.status, row.error or ""))
            return
        self.passed += bool(row.passed)
        model.scored += 1
        model.passed += bool(row.passed)
        model.headline_total += row.headline or 0.0
        if row.headline is not None:
            model.bands[band_of(row.headline)] += 1
        for criterion in self.criteria:
            if isinstance(values.get(criterion), (int, float)):
                self.totals[criterion] = self.totals.get(criterion, 0.0) + values[criterion]
                self.seen[criterion] += 1
        for path in tag_paths:
            if values.get(path) is not None:
                self.tags.setdefault(path, Counter())[str(values[path])] += 1
        if row.headline is not None:
            low = (row.headline, row.row_number, row.question[:QUESTION_KEPT])
            self.worst = sorted([*self.worst, low], key=lambda item: item[:2])[:WORST_KEPT]


def result_fieldnames(run: Run, rubric: Rubric) -> list[str]:
    """Columns of the results CSV: row number, the original columns, the rubric's fields, then the verdict."""
    names = list(verdict_names(run, rubric).values())
    return [names[0], *(run.columns or []), *names[1:]]


def verdict_names(run: Run, rubric: Rubric) -> dict[str, str]:
    """The results column of each verdict field: `judge_` put before its name until no input column has it."""
    taken = set(run.columns or [])
    names: dict[str, str] = {}
    for name in ["row", *(path for path, _ in leaves(rubric.output)), *rubric.derived, *RESULT_COLUMNS]:
        unique = name
        while unique in taken:
            unique = f"judge_{unique}"
        taken.add(unique)
        names[name] = unique
    return names


def export_run(
    store: Store, *, run: Run, rubric: Rubric, out: Path | None, price: tuple[float, float] | None = None
) -> Summary:
    """Stream a run's rows once: write the results CSV to `out` (when given) and return the summary."""
    summary = Summary(criteria=[*rubric.criteria(), "headline"], price=price or price_of(run.judge_model),
                      columns=run.column_roles or {})
    tag_paths = rubric.tags()
    fieldnames = result_fieldnames(run, rubric)
    names = verdict_names(run, rubric)
    writer = ResultsWriter(out, fieldnames) if out else None
    try:
        for row in store.iter_judgments(run.id):
            values = {**flatten(row.output or {}), **(row.derived or {}), "headline": row.headline}
            summary.add(row, values, tag_paths)
            if writer is None:
                continue
            verdict = {
                "row": row.row_number, "headline": row.headline, "passed": row.passed, "label": row.label, "status": row.status,
                "error": row.error, "flags": row.flags or None, "judge_model": row.judge_model,
                "rubric_version": row.rubric_version, "cached": row.cached_from is not None,
            }
            judged = {names[k]: v for k, v in {**values, **verdict}.items() if k in names}
            writer.write({**(row.cells or {}), **judged})
    except BaseException:
        if writer is not None:
            writer.discard()  # whatever was at `out` stays as it was
        raise
    if writer is not None:
        writer.close()
    return summary
