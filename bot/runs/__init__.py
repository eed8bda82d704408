"""Runs: one engine behind every face (engine.py: a request saved, estimated, weighed by the budget rule in
budget.py, judged live or through the Batch API, and ended as ending.py says), and its parts: start one (every row
saved first), execute it (bounded concurrency, progress, pause, resume), summarise and export the results. (A
rubric's goldens are checked in bot.runs.goldens, loaded only by the command that checks them: it brings the
statistics of pairs along.)"""

from bot.errors import RubricChanged, RunBusy, RunNotResumable
from bot.records import STALE_AFTER
from bot.runs.budget import Budget, Limits
from bot.runs.engine import Answer, Ended, Engine, Face, NotJudged, Question, Request, Rows, Tier
from bot.runs.execute import execute_run
from bot.runs.one_triple import abandon_triple
from bot.runs.ownership import HEARTBEAT_SECONDS, busy, held_elsewhere
from bot.runs.progress import Progress, RunOutcome
from bot.runs.start import ONE_TRIPLE, Origin, start_csv_run, start_run, start_single_run
from bot.runs.summary import BANDS, Summary, export_run

__all__ = ["BANDS", "HEARTBEAT_SECONDS", "ONE_TRIPLE", "STALE_AFTER", "Answer", "Budget", "Ended", "Engine", "Face",
           "Limits", "NotJudged", "Origin", "Progress", "Question", "Request", "RubricChanged", "Rows", "RunBusy",
           "RunNotResumable", "RunOutcome", "Summary", "Tier", "abandon_triple", "busy", "execute_run", "export_run",
           "held_elsewhere", "start_csv_run", "start_run", "start_single_run"]
