"""judgebot from Python (a notebook, a script): rows judged with a rubric and a judge, and runs, verdicts, labels and
the figures of compare and calibration read back as typed records, through the functions the command line calls.

    from bot.api import Judgebot

    bot = Judgebot()                       # the settings and history `judgebot` uses (environment, .env)
    judged = bot.judge(rows, rubric="eth") # a list of dicts or a pandas DataFrame; judged.frame() is a DataFrame
    bot.compare(12, 15).rubrics[0].mean_difference

Every function has an `a`-prefixed coroutine beside it (`await bot.ajudge(...)`). The plain ones work inside a
running event loop too (Jupyter's): they then run in a worker thread with a loop of its own. docs/python.md walks
through a session.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import csv
import json
import math
import tempfile
from collections.abc import Coroutine, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict

from bot.cli.json_output import Document, UtcTime
from bot.cli.json_output.calibration import CalibrationDocument
from bot.cli.json_output.compare import CompareDocument
from bot.cli.json_output.history import JudgmentEntry, RunEntry
from bot.config import Settings
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.rubric import Rubric, RubricSet
    from bot.runs import Face, Question
    from bot.store import Judgment, Store

__all__ = ["Judgebot", "Judged", "LabelEntry", "RowVerdict", "run_sync", "to_frame"]

T = TypeVar("T")
API = "api"  # the source of the runs judged from Python (`judgebot runs` lists them)


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine, awaited in an event loop of its own: in this thread when none runs here, else (in
    Jupyter, whose loop runs in this thread) in a worker thread, this one waiting for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgebot") as worker:
        return worker.submit(asyncio.run, work).result()


class RowVerdict(JudgmentEntry):
    """One row's verdict: what `judgebot history --json` gives of a judgment, with the row's texts and the judge's
    whole output."""

    row: int | None
    """The row's number as a spreadsheet shows it (the header is row 1)."""
    reference: str
    """The reference answer."""
    answer: str
    """The answer graded."""
    context: list[str] | None
    """The passages retrieved for the question, for a rubric that reads them."""
    output: dict[str, Any] | None
    """The judge's reply, as the rubric's fields (its reasoning among them)."""
    error: str | None
    """Why the row has no score (a judge error, an invalid reply, a malformed row)."""
    unsure: bool | None
    """Whether its samples split (several samples or a jury)."""
    cost_usd: float | None
    """What its judgment cost; null when the judge's price is unknown."""

    @classmethod
    def of_judgment(cls, row: Judgment) -> RowVerdict:
        """A judgment of the history as a record."""
        from bot.records import context_of

        return cls(**dict(JudgmentEntry.of(row)), row=row.row_number, reference=row.reference, answer=row.answer,
                   context=context_of(row.context), output=row.output, error=row.error, unsure=row.unsure,
                   cost_usd=row.cost_usd)


class LabelEntry(Document):
    """A person's label or vote of a judgment, with what they said as the rubric's field values."""

    judgment_id: int
    """The judgment labeled."""
    labeled_by: str
    """Who: a Slack member id, a login name, or `file`."""
    labeled_at: UtcTime
    """When."""
    passed: bool | None
    """Their pass/fail; null when they did not give one and the rubric's pass rule cannot read their values."""
    values: dict[str, Any]
    """Their value of each field they gave, by dotted path."""
    source: str | None
    """Where pass/fail came from: given, rule, or a vote (vote: agree, vote: disagree)."""
    note: str | None
    """What they wrote with it."""
    judge_passed: bool | None
    """What the judge said: pass/fail."""
    judge_tag: str | None
    """What the judge said: the tag."""
    question: str
    """The question."""
    model: str | None
    """The model under test."""


class Judged(BaseModel):
    """A list of rows judged: the run they make in the history, every row's verdict in row order, and what went to
    the review queue."""

    model_config = ConfigDict(frozen=True)

    run: RunEntry
    verdicts: list[RowVerdict]
    sent_to_review: str  # "3 cases sent to review (3 at random)", or "" when none was

    def frame(self) -> Any:
        """The verdicts as a pandas DataFrame (pandas must be installed)."""
        return to_frame(self.verdicts)


def to_frame(records: Iterable[BaseModel]) -> Any:
    """Records (verdicts, runs, labels) as a pandas DataFrame, one row each, a column per key (pandas must be
    installed: `pip install pandas`)."""
    try:
        import pandas  # type: ignore[import-untyped]  # optional, and without stubs
    except ImportError:
        raise UsageError("a DataFrame needs pandas: `pip install pandas`") from None
    return pandas.DataFrame([record.model_dump() for record in records])


class Judgebot:
    """judgebot over one history, with the settings the command line reads (the environment and .env), any of them
    given here instead: `Judgebot(database_url="sqlite:///evals.db", judge_model="gpt-6-luna")`."""

    def __init__(self, **settings: Any) -> None:
        self.settings = Settings(**settings)
        self._store: Store | None = None
        self._rubrics: RubricSet | None = None

    @property
    def store(self) -> Store:
        """The history (DATABASE_URL, else JUDGEBOT_DB), opened on first use."""
        if self._store is None:
            from bot.store import Store

            self._store = Store.open(self.settings.db_url)
        return self._store

    @property
    def rubrics(self) -> RubricSet:
        """The rubrics in force: the built-in ones, then those of RUBRICS_DIR."""
        if self._rubrics is None:
            from bot.rubric import load_rubrics

            self._rubrics = load_rubrics(self.settings.rubrics_dir)
        return self._rubrics

    def rubric(self, name: str) -> Rubric:
        """The rubric called `name` (or one of its aliases); UsageError naming the rubrics there are."""
        return self.rubrics.get(name)

    # -- judging --------------------------------------------------------------------------------------------------

    def judge(self, rows: Any, rubric: str, **options: Any) -> Judged:
        """Judge `rows` with a rubric: see `ajudge`."""
        return run_sync(self.ajudge(rows, rubric, **options))

    async def ajudge(self, rows: Any, rubric: str, *, judge_model: str | None = None, judges: str | None = None,
                     samples: int | None = None, model_name: str | None = None, fresh: bool = False,
                     yes: bool = False, concurrency: int | None = None, name: str = "rows") -> Judged:
        """Judge `rows` (a list of dicts, or a pandas DataFrame) with the rubric called `rubric`, as `judgebot judge`
        judges a CSV file of them: the same columns (question, reference, answer, and model, context; or answer_a
        and answer_b for a pairwise rubric), read by the same rules (a context holds a list of passages), saved as a
        run named `name` of the history, judged by `judge_model` (else JUDGE_MODEL) or a jury (`judges`: "m1,m2"),
        each row `samples` times, verdicts of the same texts reused from the history unless `fresh`.

        The budget rule holds as in a terminal: a run whose estimate is above CONFIRM_ABOVE_USD (or over
        JUDGE_MONTHLY_BUDGET) is judged only with `yes`; without it, UsageError says the estimate.
        """
        from bot.cli.panels import judge_panel
        from bot.cli.review import terminal_user
        from bot.csvfiles.reading import open_csv
        from bot.runs import Engine, Limits, Origin, Request, Rows
        from bot.store import get_run, iter_judgments

        found = self.rubric(rubric)
        if concurrency is not None and concurrency < 1:
            raise UsageError("concurrency must be at least 1")
        settings = self.settings if judge_model is None else self.settings.model_copy(update={"judge_model": judge_model})
        records = _records(rows)
        with tempfile.TemporaryDirectory(prefix="judgebot-api-") as folder:
            path = Path(folder) / f"{Path(name).name or 'rows'}.csv"
            _write_csv(path, records)
            source = open_csv(path, reference=found.uses_reference, pairs=found.pairwise, context=found.uses_context)
            chosen = argparse.Namespace(judges=judges, judges_file=None, samples=samples)
            panel = judge_panel(settings, chosen, found, concurrency)
            request = Request(found, panel, Rows(source, Origin(source=API, user_id=terminal_user()),
                                                 model_name=model_name, fresh=fresh),
                              limits=Limits.of_terminal(settings), concurrency=concurrency or settings.concurrency)
            ended = await Engine.from_settings(self.store, settings).judge(request, _notebook_face(yes))
        if ended.question is not None and ended.outcome is None:
            raise UsageError(_refusal(ended.question))
        run = get_run(self.store, ended.run.id) or ended.run
        verdicts = [RowVerdict.of_judgment(row) for row in iter_judgments(self.store, run.id)]
        review = ended.end.review.text() if ended.end is not None else ""
        return Judged(run=RunEntry.of(run), verdicts=verdicts, sent_to_review=review)

    # -- reading the history ----------------------------------------------------------------------------------------

    def runs(self, limit: int = 20) -> list[RunEntry]:
        """The most recent runs, newest first, as `judgebot runs --json` lists them."""
        from bot.cli.history import listed_runs

        if limit < 1:
            raise UsageError("limit must be at least 1")
        return [RunEntry.of(run) for run in listed_runs(self.store, limit)]

    async def aruns(self, limit: int = 20) -> list[RunEntry]:
        """`runs`, off the event loop."""
        return await asyncio.to_thread(self.runs, limit)

    def verdicts(self, run_id: int) -> list[RowVerdict]:
        """Every row of a run with its verdict, in row order; UsageError when there is no such run."""
        from bot.store import get_run, iter_judgments

        if get_run(self.store, run_id) is None:
            raise UsageError(f"no run {run_id}: `runs()` lists them")
        return [RowVerdict.of_judgment(row) for row in iter_judgments(self.store, run_id)]

    async def averdicts(self, run_id: int) -> list[RowVerdict]:
        """`verdicts`, off the event loop."""
        return await asyncio.to_thread(self.verdicts, run_id)

    def labels(self, rubric: str, channel: str | None = None) -> list[LabelEntry]:
        """Every label and vote of a rubric's judgments (of one Slack channel, else everywhere), the oldest first, as
        `judgebot labels export` writes them."""
        from bot.trust.cases import labeled_cases

        cases = labeled_cases(self.store, self.rubric(rubric), channel)
        return [LabelEntry(judgment_id=case.judgment.id, labeled_by=case.labeled_by, labeled_at=case.labeled_at,
                           passed=case.human.passed, values=case.human.values, source=case.source, note=case.note,
                           judge_passed=case.judgment.passed, judge_tag=case.judgment.tag,
                           question=case.judgment.question, model=case.judgment.model_name) for case in cases]

    async def alabels(self, rubric: str, channel: str | None = None) -> list[LabelEntry]:
        """`labels`, off the event loop."""
        return await asyncio.to_thread(self.labels, rubric, channel)

    # -- figures ------------------------------------------------------------------------------------------------------

    def compare(self, a: int | str, b: int | str, *, run: int | None = None, channel: str | None = None,
                since: datetime | None = None, rubric: str | None = None) -> CompareDocument:
        """Is B better than A? Two runs (`compare(12, 15)`), or two models under test (`compare("bot-v1", "bot-v2")`,
        of one `run`, else of a Slack `channel`'s history or the terminal's, `since` a moment): the figures of
        `judgebot compare --json`, one rubric at a time."""
        from bot.trust.sides import comparison

        runs = [a, b] if isinstance(a, int) and isinstance(b, int) else []
        models = [] if runs else [str(a), str(b)]
        names, reports = comparison(self.store, self.rubrics, runs=[int(side) for side in runs], models=models,
                                    run=run, channel=channel, since=since, rubric=rubric)
        return CompareDocument.of(names[0], names[1], reports)

    async def acompare(self, a: int | str, b: int | str, **options: Any) -> CompareDocument:
        """`compare`, off the event loop."""
        return await asyncio.to_thread(lambda: self.compare(a, b, **options))

    def calibration(self, rubric: str, *, channel: str | None = None, judge_model: str | None = None,
                    since: datetime | None = None) -> CalibrationDocument:
        """How far the judge agrees with people's labels of a rubric (of one Slack channel, else everywhere): the
        figures of `judgebot calibration --json`."""
        from bot.trust.calibration_report import calibration_report

        found = self.rubric(rubric)
        report = calibration_report(self.store, self.settings, found, channel=channel, judge_model=judge_model,
                                    since=since)
        return CalibrationDocument.of(report, rubric=found.name, channel=channel, judge_model=judge_model,
                                      since=since)

    async def acalibration(self, rubric: str, **options: Any) -> CalibrationDocument:
        """`calibration`, off the event loop."""
        return await asyncio.to_thread(lambda: self.calibration(rubric, **options))


def _notebook_face(yes: bool) -> Face:
    """The engine's face for a caller in Python: nobody to ask, so what the budget rule asks about is judged only
    with `yes`; no progress shown."""
    from bot.runs import Answer, Face

    class Notebook(Face):
        async def agree(self, question: Question) -> Answer:
            return Answer.YES if yes or not question.asks else Answer.NO

    return Notebook()


def _refusal(question: Question) -> str:
    """Why a run was not judged: what the budget rule asks a person to agree to."""
    cost = question.estimate.cost_usd
    said = f"about ${cost:,.2f}" if cost is not None else "at an unknown price"
    why = ", ".join(str(ask) for ask in question.asks)
    return (f"nothing judged: the run of {question.estimate.rows:,} rows would cost {said} and the budget rule asks a "
            f"person to agree first ({why}); call again with yes=True to judge it")


def _records(rows: Any) -> list[Mapping[str, Any]]:
    """The rows as mappings: a DataFrame's records, or the dicts given."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a pandas DataFrame
        rows = rows.to_dict("records")
    if isinstance(rows, Mapping) or isinstance(rows, str | bytes):
        raise UsageError("rows are a list of dicts (one per row: question, reference, answer, ...) or a DataFrame")
    found = list(rows)
    if not found:
        raise UsageError("no rows to judge")
    if not all(isinstance(row, Mapping) for row in found):
        raise UsageError("each row is a dict of its columns (question, reference, answer, ...)")
    return found


def _write_csv(path: Path, rows: list[Mapping[str, Any]]) -> None:
    """The rows as a CSV file `judgebot judge` reads: every key a column, in the order first met; a list (a row's
    passages) as a JSON list, nothing (None, NaN) as an empty cell."""
    header: dict[str, None] = {}
    for row in rows:
        header.update(dict.fromkeys(str(key) for key in row))
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for row in rows:
            cells = {str(key): value for key, value in row.items()}
            writer.writerow([_cell(cells.get(key)) for key in header])


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, list | tuple):
        return json.dumps([str(item) for item in value], ensure_ascii=False)
    if hasattr(value, "tolist"):  # a numpy array of passages
        return _cell(value.tolist())
    return str(value)
