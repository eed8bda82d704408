"""Runs: start one (every row saved first), execute it (bounded concurrency, progress, pause, resume), judge one
triple end to end, summarise and export the results. (A rubric's goldens are checked in bot.runs.goldens, loaded
only by the command that checks them: it brings the statistics of pairs along.)"""

from bot.errors import RubricChanged, RunBusy, RunNotResumable
from bot.runs.execute import execute_run
from bot.runs.ownership import HEARTBEAT_SECONDS, STALE_AFTER, busy, held_elsewhere
from bot.runs.progress import Budget, Progress, RunOutcome
from bot.runs.single import abandon_triple, finish_triple, start_triple
from bot.runs.start import ONE_TRIPLE, Origin, start_csv_run, start_run, start_single_run
from bot.runs.summary import BANDS, Summary, export_run

__all__ = ["BANDS", "HEARTBEAT_SECONDS", "ONE_TRIPLE", "STALE_AFTER", "Budget", "Origin",
           "Progress", "RubricChanged", "RunBusy", "RunNotResumable", "RunOutcome", "Summary", "abandon_triple",
           "busy", "execute_run", "held_elsewhere", "export_run", "finish_triple",
           "start_csv_run", "start_run", "start_single_run", "start_triple"]
