"""A run's results CSV and summary figures, computed in one streaming pass over its rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.csvfiles.passages import input_cells
from bot.csvfiles.results import ResultsWriter, flatten
from bot.figures import money, percent, plural, ratio
from bot.judge.content_free import is_screened
from bot.records import REJUDGEABLE, RowState
from bot.rubric import Rubric, leaves
from bot.store import Billed, JudgmentSample, Run, Store, identical_rows, iter_columns, run_billed, samples_by_judgment
from bot.trust.panel_agreement import JudgesAlpha, member_samples

RESULT_COLUMNS = ["headline", "passed", "label", "status", "error", "flags", "judge_model", "rubric_version", "cached"]
WORST_KEPT = 3
PROBLEMS_KEPT = 20
BANDS = ("0-19", "20-39", "40-59", "60-79", "80-100")  # headline bands of the score distribution
QUESTION_KEPT = 200  # characters of a lowest row's question kept for the summary
UNSURE_KEPT = 50  # row numbers of unsure rows kept for the summary
PANEL_COLUMNS = ["samples", "agreement", "spread", "unsure"]


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
    cached: int = 0  # rows given a verdict judged before: of an identical row of the run, or of an earlier run
    identical: int = 0  # of those, the rows given the verdict of an identical row of the run (its texts sent once)
    identical_texts: int = 0  # the verdicts those rows were given
    tokens_in: int = 0
    tokens_out: int = 0
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)
    worst: list[tuple[float, int | None, str]] = field(default_factory=list)
    models: dict[str, ModelFigures] = field(default_factory=dict)
    tokens_cached: int = 0
    tokens_reasoning: int = 0  # of tokens_out, those the judges spent reasoning (billed as output)
    spent: float = 0.0  # USD billed by the judges whose price is known, every request counted
    unpriced: int = 0  # judgments that used tokens of a judge whose price is unknown
    estimate: dict[str, Any] | None = None  # what the run was estimated to cost before it started
    columns: dict[str, str] = field(default_factory=dict)
    unsure: int = 0
    content_free: int = 0  # scored rows the content-free screen failed, never sent to a judge (counted as failures)
    unsure_rows: list[int | None] = field(default_factory=list)
    samples: Counter[str] = field(default_factory=Counter)  # samples by status, when rows are judged several times
    efforts: Counter[str] = field(default_factory=Counter)  # rows by the reasoning effort their judge worked at
    # How far a jury's members (or one judge's samples) agree beyond chance: Krippendorff's alpha over the rows
    alphas: JudgesAlpha = field(default_factory=JudgesAlpha)

    @property
    def failed_samples(self) -> int:
        """Samples the judges could not score (the rows they belong to may still be scored by the others)."""
        return self.samples[RowState.ERROR] + self.samples[RowState.INVALID]

    def effort_text(self) -> str | None:
        """The reasoning effort the judges worked at: "low", or each with its rows ("low 40 · medium 8") when they
        differ; None when no row says."""
        if len(self.efforts) <= 1:
            return next(iter(self.efforts), None)
        return " · ".join(f"{effort} {rows:,}" for effort, rows in self.efforts.most_common())

    @property
    def rows(self) -> int:
        """Every row of the run, malformed ones included."""
        return sum(self.counts.values())

    @property
    def scored(self) -> int:
        """Rows with a score."""
        return self.counts[RowState.SCORED]

    @property
    def from_history(self) -> int:
        """Rows given a verdict of an earlier run (not billed)."""
        return self.cached - self.identical

    def identical_text(self) -> str | None:
        """What became of rows repeating another row's texts: "5 identical rows judged once"; None without any."""
        if not self.identical:
            return None
        rows = self.identical + self.identical_texts  # those that reused a verdict and those it came from
        if self.identical_texts == 1:
            return f"{rows:,} identical rows judged once"
        return f"{rows:,} identical rows judged once a text ({self.identical_texts:,} texts)"

    @property
    def errors(self) -> int:
        """Rows the judge could not score (transport errors and replies that broke the rubric)."""
        return self.counts[RowState.ERROR] + self.counts[RowState.INVALID]

    @property
    def pass_rate(self) -> float | None:
        """Share of scored rows that passed."""
        return ratio(self.passed, self.scored)

    def content_free_text(self) -> str | None:
        """"3 failed, not sent to the judge: the answer had nothing to grade (empty, only punctuation, an opener, the
        question repeated)"; None without any."""
        if not self.content_free:
            return None
        return (f"{self.content_free:,} failed, not sent to the judge: the answer had nothing to grade (empty, only "
                "punctuation, only an opener, the question repeated)")

    @property
    def cost(self) -> float | None:
        """Dollars billed by the judges, every request counted (a row judged again included), at the prices recorded
        with each judgment; None when a judge's price is unknown."""
        return None if self.unpriced else self.spent

    def bill(self, billed: Billed) -> None:
        """Take what the run's judges were billed: its tokens and cost."""
        self.tokens_in, self.tokens_out, self.tokens_cached = billed.tokens_in, billed.tokens_out, billed.tokens_cached
        self.tokens_reasoning = billed.tokens_reasoning
        self.spent, self.unpriced = billed.cost, billed.unpriced

    def cost_text(self) -> str:
        """What the run cost: "$0.0123", with the judgments of a judge of unknown price when there are any."""
        if not self.unpriced:
            return money(self.spent)
        known = f"{money(self.spent)} for the judgments of known price; " if self.spent else ""
        return (f"{known}{self.unpriced:,} {plural(self.unpriced, 'judgment')} by a judge of unknown price "
                "(JUDGE_PRICES can add it)")

    def estimate_text(self) -> str | None:
        """The estimate made before the run beside what it took, so its accuracy shows; None without one."""
        if not self.estimate:
            return None
        guess = self.estimate
        cost = money(guess.get("cost_usd"))
        took = (percent(ratio(self.tokens_in, guess["tokens_in"])), percent(ratio(self.tokens_out, guess["tokens_out"])))
        return (f"estimated {cost} ({guess['tokens_in']:,} tokens in, {guess['tokens_out']:,} out; the run took "
                f"{took[0]} and {took[1]} of that)")

    @property
    def column_text(self) -> str:
        """The column of each role, as `--columns` takes it: "question=Query, ..., answer=model_response"."""
        return ", ".join(f"{role}={column}" for role, column in self.columns.items())

    def mean(self, criterion: str) -> float | None:
        """Mean of one criterion over the scored rows."""
        return self.totals[criterion] / self.seen[criterion] if self.seen[criterion] else None

    def alpha_text(self, tagged: bool) -> str:
        """Krippendorff's alpha among the judges (or samples) on the outcome and the headline (JudgesAlpha.text)."""
        return self.alphas.text(tagged)

    def add_samples(self, samples: Sequence[JudgmentSample], *, tagged: bool = True) -> None:
        """Count the samples behind one row by status, and their agreement (JudgesAlpha.add)."""
        for sample in samples:
            self.samples[sample.status] += 1
        self.alphas.add(samples, tagged=tagged)

    def add(self, row: Any, values: dict[str, Any], tag_paths: list[str]) -> None:
        """Count one row (a judgment, or a row of its columns)."""
        self.counts[row.status] += 1
        self.cached += row.cached_from is not None
        if effort := getattr(row, "reasoning_effort", None):
            self.efforts[effort] += 1
        name = row.model_name or "(no model)"
        model = self.models.get(name) or self.models.setdefault(name, ModelFigures())
        model.rows += 1
        if row.status != RowState.SCORED:
            model.errors += row.status in REJUDGEABLE
            if row.status != RowState.PENDING and len(self.problems) < PROBLEMS_KEPT:
                self.problems.append((row.row_number, row.status, row.error or ""))
            return
        if row.unsure:
            self.unsure += 1
            if len(self.unsure_rows) < UNSURE_KEPT:
                self.unsure_rows.append(row.row_number)
        self.passed += bool(row.passed)
        self.content_free += is_screened(row.flags)
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
            if (tag := values.get(path)) is not None:
                (self.tags.get(path) or self.tags.setdefault(path, Counter()))[str(tag)] += 1
        if row.headline is not None and (len(self.worst) < WORST_KEPT or (row.headline, row.row_number) < self.worst[-1][:2]):
            low = (row.headline, row.row_number, row.question[:QUESTION_KEPT])
            self.worst = sorted([*self.worst, low], key=lambda item: item[:2])[:WORST_KEPT]


def result_fieldnames(run: Run, rubric: Rubric) -> list[str]:
    """Columns of the results CSV: row number, the original columns, the rubric's fields, then the verdict."""
    names = list(verdict_names(run, rubric).values())
    return [names[0], *(run.columns or []), *names[1:]]


def jury_of(run: Run) -> list[str]:
    """The judge models of a run's jury (empty for one judge, however many samples it takes)."""
    models = [str(judge.get("model")) for judge in run.judges or []]
    return models if len(models) > 1 else []


def panel_columns(run: Run, rubric: Rubric) -> list[str]:
    """The verdict columns of a run judged several times per row: agreement, then each jury member's verdict."""
    if run.samples <= 1 and not jury_of(run):
        return []
    members = [f"{model} {part}" for model in jury_of(run) for part in ("headline", *(("tag",) if rubric.headline.tag
                                                                                      else ()))]
    return [*PANEL_COLUMNS, *members]


def member_verdicts(samples: Sequence[JudgmentSample]) -> dict[str, Any]:
    """Each jury member's verdict on a row: the headline and tag of its own chosen sample (`member_samples`)."""
    members = member_samples(samples)
    values: dict[str, Any] = {}
    for model in dict.fromkeys(sample.judge_model for sample in samples):
        member = members.get(model)
        values[f"{model} headline"] = member.headline if member is not None else None
        values[f"{model} tag"] = member.tag if member is not None else None
    return values


def verdict_names(run: Run, rubric: Rubric) -> dict[str, str]:
    """The results column of each verdict field: `judge_` put before its name until no input column has it."""
    fields = ["row", *(path for path, _ in leaves(rubric.output)), *rubric.derived, *RESULT_COLUMNS,
              *panel_columns(run, rubric)]
    return beside_columns(run.columns or [], fields)


def beside_columns(columns: Sequence[str], fields: Sequence[str]) -> dict[str, str]:
    """The results column of each of `fields`: `judge_` put before its name until none of `columns` has it."""
    taken = set(columns)
    names: dict[str, str] = {}
    for name in fields:
        unique = name
        while unique in taken:
            unique = f"judge_{unique}"
        taken.add(unique)
        names[name] = unique
    return names


def export_run(store: Store, *, run: Run, rubric: Rubric, out: Path | None) -> Summary:
    """Stream a run's rows once: write the results CSV to `out` (when given) and return the summary."""
    summary = Summary(criteria=[*rubric.criteria(), "headline"], columns=run.column_roles or {}, estimate=run.estimate,
                      alphas=JudgesAlpha(jury=bool(jury_of(run))))
    tag_paths = rubric.tags()
    fieldnames = result_fieldnames(run, rubric)
    names = verdict_names(run, rubric)
    paneled = bool(panel_columns(run, rubric))
    # Written whole or not at all: a failure part-way leaves whatever was at `out` as it was.
    with ResultsWriter(out, fieldnames) if out else nullcontext(None) as writer:
        for row, samples in _rows(store, run.id, paneled):
            values = {**flatten(row.output or {}), **(row.derived or {}), "headline": row.headline}
            summary.add(row, values, tag_paths)
            summary.add_samples(samples, tagged=bool(rubric.headline.tag))
            if writer is None:
                continue
            verdict = {
                "row": row.row_number, "headline": row.headline, "passed": row.passed, "label": row.label, "status": row.status,
                "error": row.error, "flags": row.flags or None, "judge_model": row.judge_model,
                "rubric_version": row.rubric_version, "cached": row.cached_from is not None,
                "samples": row.samples, "agreement": row.agreement, "spread": row.spread, "unsure": row.unsure,
                **member_verdicts(samples),
            }
            judged = {names[k]: v for k, v in {**values, **verdict}.items() if k in names}
            writer.write({**input_cells(row.cells, row.context), **judged})
    summary.bill(run_billed(store, run.id))
    if summary.cached:
        summary.identical, summary.identical_texts = identical_rows(store, run.id)
    return summary


def _rows(store: Store, run_id: int, paneled: bool, page: int = 500) -> Iterator[tuple[Any, list[JudgmentSample]]]:
    """Every row of a run in order (as a row of a judgment's columns), each with its samples (read a page of rows at a
    time) when it has any."""
    batch: list[Any] = []
    for row in iter_columns(store, run_id):
        batch.append(row)
        if len(batch) == page:
            yield from _with_samples(store, batch, paneled)
            batch = []
    yield from _with_samples(store, batch, paneled)


def _with_samples(store: Store, rows: list[Any], paneled: bool) -> Iterator[tuple[Any, list[JudgmentSample]]]:
    found = samples_by_judgment(store, [row.id for row in rows]) if paneled and rows else {}
    for row in rows:
        yield row, found.get(row.id, [])
