"""Every error judgebot raises on purpose, under one root: the errors a person can fix, whose text says how.

The CLI and the Slack layer catch `JudgebotError` and show its text (the Slack layer escaped); anything else is a
bug, logged with its traceback and shown as a sentence. Errors that end up inside a verdict (a judge request that failed for good,
a formula that failed on one reply) are here too, so that one `except JudgebotError` never misses a known case.
"""

from __future__ import annotations


class JudgebotError(Exception):
    """A problem a person can fix; str(err) says what went wrong and what to do."""


class SetupError(JudgebotError):
    """judgebot cannot start with these settings; the message says what to set and where to find it."""


class UsageError(JudgebotError):
    """A command given wrongly (CLI exit code 2); the message says how to give it."""


class RubricError(JudgebotError, ValueError):
    """A rubric file that cannot be used, or a rubric name that names none."""


class FormulaError(JudgebotError, ValueError):
    """A rubric expression that does not parse or cannot be evaluated on a reply."""


class CsvError(JudgebotError):
    """A whole-file problem with a CSV; the message says what is wrong and what to do."""


class StoreUnavailable(JudgebotError):
    """The history database cannot be opened; the message says which and why."""


class SchemaTooNew(JudgebotError):
    """The history database was written by a newer judgebot."""


class RunBusy(JudgebotError):
    """Another live process is judging this run right now."""


class RunNotResumable(JudgebotError):
    """A run whose rows could not all be loaded: it can only be started again."""


class RubricChanged(JudgebotError):
    """A run cannot go on with a rubric other than the one it started with."""


class JudgeCallError(JudgebotError):
    """A judge request that failed for good; the message says why in a sentence. The row becomes an error."""


class RunStopped(JudgeCallError):
    """A failure every further request would hit too (no quota, bad key, unknown model): the run pauses."""


class WeekError(JudgebotError, ValueError):
    """A week written wrongly; the message shows how to write it."""


class CommandError(JudgebotError, ValueError):
    """A `/judge` text that cannot be understood; the message says how to write it."""


class FileProblem(JudgebotError):
    """A file shared in Slack cannot be fetched or used; the message says why and what to do."""


class IllegalMove(RuntimeError):
    """A bug: a state change that the lifecycle does not allow (never a person's doing)."""
