"""The end of a judged run, the same for every face: a file's labels saved, its results written and summarised, the
cases that want a person sent to review, two models compared, one triple's verdict read back; and the judges whose
shutdown is near."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.judge.lifetime import JudgeWatch, judges_of_run
from bot.records import RowState
from bot.rubric import Rubric
from bot.runs.progress import RunOutcome
from bot.runs.start import ONE_TRIPLE
from bot.store import Judgment, Run, Store, first_judgment, status_counts, update_run, utcnow
from bot.trust.review import SentToReview, send_pairs_to_review, send_to_review

if TYPE_CHECKING:
    from bot.llm.shutdowns import JudgeShutdown
    from bot.runs.pairwise_summary import PairsSummary
    from bot.runs.summary import Summary
    from bot.trust.file_labels import FileLabels
    from bot.trust.model_comparison import ModelComparison

log = logging.getLogger(__name__)


class ResultsUnwritable(Exception):
    """The results file could not be written; every verdict is saved, and a resume writes them elsewhere."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write {path}: {error.strerror or error}")
        self.path, self.error = path, error


@dataclass(frozen=True)
class End:
    """What a judged run ends with, for a face to show: a file's figures (`summary`; a pairwise run's `pairs` too) or
    one triple's `judgment`, what went to review, and the judges whose shutdown is near."""

    run: Run
    review: SentToReview
    shutdowns: list[JudgeShutdown] = field(default_factory=list)
    summary: Summary | None = None
    pairs: PairsSummary | None = None
    labels: FileLabels | None = None  # what the file's human_ columns gave
    models: tuple[str, str, ModelComparison] | None = None  # two models under test of the file, B against A
    judgment: Judgment | None = None  # one triple's verdict
    results: Path | None = None  # where the results were written; None: not written (`kept`, or none asked for)
    kept: bool = False  # a file was there and the run has rows pending: it is left as it was


@dataclass(frozen=True)
class Ending:
    """How runs end here: the share of a file's rows sent to review at random (REVIEW_SAMPLE_RATE; a triple one
    person asked for is not part of it) and the judges' announced shutdowns."""

    review_rate: float = 0.05
    watch: JudgeWatch = field(default_factory=JudgeWatch)

    async def end(self, store: Store, run: Run, rubric: Rubric, *, outcome: RunOutcome | None = None,
                  results: Path | None = None, record: bool = False) -> End:
        """End a judged run (off the event loop). A file's results go to `results` (none without it), unless a file
        is there and the run has rows pending: results of a run stopped half-way never replace what may be good
        ones. With `record` the run keeps where its results are, whole (for a resume to write there again).
        ResultsUnwritable when the results cannot be written; every verdict is saved before."""
        return await asyncio.to_thread(self._end, store, run, rubric, outcome, results, record)

    def _end(self, store: Store, run: Run, rubric: Rubric, outcome: RunOutcome | None, results: Path | None,
             record: bool) -> End:
        shutdowns = self.watch.near(judges_of_run(run.judge_model, run.judges))
        if run.source_name == ONE_TRIPLE:
            judgment = first_judgment(store, run.id)
            return End(run, self._review(lambda: send_to_review(store, run, rate=0)), shutdowns, judgment=judgment)
        counts = outcome.counts if outcome is not None else None
        kept = results is not None and results.exists() and bool(
            (counts if counts is not None else status_counts(store, run.id)).get(RowState.PENDING))
        out = None if kept else results
        try:
            end = self._pairs(store, run, rubric, out) if rubric.pairwise else self._file(store, run, rubric, out)
        except OSError as err:
            if out is None:
                raise
            raise ResultsUnwritable(out, err) from err
        if record and out is not None:
            update_run(store, run.id, results_path=str(out.resolve()), results_written_at=utcnow())
        return replace(end, shutdowns=shutdowns, kept=kept)

    def _file(self, store: Store, run: Run, rubric: Rubric, out: Path | None) -> End:
        """A file's labels saved, its cases sent to review, its results written to `out`, its models compared."""
        # A file's figures bring their statistics along: loaded here, not where one triple is judged.
        from bot.runs.summary import export_run
        from bot.store import graded_answers
        from bot.trust.file_labels import save_file_labels
        from bot.trust.model_comparison import graded, models_compared

        labels = save_file_labels(store, run, rubric)
        review = self._review(lambda: send_to_review(store, run, rate=self.review_rate))
        summary = export_run(store, run=run, rubric=rubric, out=out)
        models = models_compared(graded(graded_answers(store, run_id=run.id)))
        return End(run, review, summary=summary, labels=labels, models=models, results=out)

    def _pairs(self, store: Store, run: Run, rubric: Rubric, out: Path | None) -> End:
        """A pairwise run's results written to `out` (one row per pair), its inconsistent pairs sent to review."""
        from bot.runs.pairwise_summary import export_pairs  # the ranking of models: loaded for a pairwise run only

        found = export_pairs(store, run=run, rubric=rubric, out=out)
        review = self._review(lambda: send_pairs_to_review(store, run, found.unsettled))
        return End(run, review, summary=found.summary, pairs=found, results=out)

    @staticmethod
    def _review(send: Callable[[], SentToReview]) -> SentToReview:
        """The cases sent to review; a queue that cannot be written misses them (logged): the verdicts are saved and
        shown all the same."""
        try:
            return send()
        except Exception:
            log.warning("could not queue the cases of a run for review", exc_info=True)
            return SentToReview({})
