"""A file run's progress as a streamed message: a plan of tasks (rows saved, cost estimated, judging, rows not scored,
unsure rows, summary) appended as the run advances, and the progress message that points to it and keeps Cancel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, ButtonElement, ConfirmObject
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk

from bot.figures import duration, money
from bot.runs import Progress
from bot.slack.text import escape, plain, shown
from bot.slack.views.blocks import message, section
from bot.slack.views.file_run import CANCEL_RUN
from bot.store import Run

TASK_TEXT = 256  # characters of a task's title, details or output, as Slack allows
NAME_ROOM = 80  # characters of the file's name in the plan's title
PENDING, WORKING, COMPLETE, ERROR = "pending", "in_progress", "complete", "error"


@dataclass(frozen=True)
class Ending:
    """How the streamed progress ends: the judging task's last status and its words."""

    status: str
    details: str
    summarised: bool = False  # the summary and results file were posted below


def _task(task_id: str, title: str, status: str, details: str | None = None) -> dict[str, Any]:
    """A task's update; its texts are shown literally by Slack, and cut to what it allows."""
    words = plain(details, TASK_TEXT) if details else None
    return TaskUpdateChunk(id=task_id, title=plain(title, TASK_TEXT), status=status, details=words).to_dict()


class RunStream:
    """The chunks that show one run's progress, and the progress message beside them."""

    def __init__(self, run: Run, rubric_title: str, who: str | None) -> None:
        self.run, self.rubric_title, self.who = run, rubric_title, who

    @property
    def _several(self) -> bool:
        return self.run.samples > 1 or len(self.run.judges or []) > 1

    def head(self) -> dict[str, Any]:
        """The progress message while the stream below it shows the progress: what is judged, for whom, and Cancel."""
        name = shown(self.run.source_name or "file", NAME_ROOM)[0]
        started = f" for <@{self.who}>" if self.who else ""
        cancel = ButtonElement(
            text="Cancel", action_id=CANCEL_RUN, value=str(self.run.id), style="danger",
            confirm=ConfirmObject(title="Cancel this run?", text="The rows graded so far are kept and summarised.",
                                  confirm="Cancel the run", deny="Keep going"))
        text = (f":hourglass_flowing_sand: Judging *{name}* · {escape(self.rubric_title)} · run #{self.run.id}"
                f"{started}. Its progress is streamed below.")
        return message([section(text), ActionsBlock(elements=[cancel])], f"Judging {name}")

    def opening(self) -> list[dict[str, Any]]:
        """The plan's title and the steps done before judging: the rows saved and the cost estimated."""
        name = plain(self.run.source_name or "file", NAME_ROOM)
        title = plain(f"Judging {name} with {self.rubric_title}", TASK_TEXT)
        return [PlanUpdateChunk(title=title).to_dict(),
                _task("rows", "Reading the file", COMPLETE, f"{self.run.total_rows:,} rows saved"),
                _task("estimate", "Estimating the cost", COMPLETE, self._estimate())]

    def _estimate(self) -> str:
        kept = self.run.estimate or {}  # what a run keeps of its estimate (bot.runs.estimate.as_saved)
        rows, cost = kept.get("rows"), kept.get("cost_usd")
        if not isinstance(rows, int):
            return "no estimate was made"
        sent = f"{rows:,} rows to send" + (f" ({self.run.total_rows - rows:,} reused)" if rows < self.run.total_rows
                                             else "")
        return f"about {money(cost)} for {sent}" if isinstance(cost, int | float) else f"{sent}, price unknown"

    def moving(self, event: Progress) -> list[dict[str, Any]]:
        """The tasks that follow the judging: rows done, rows not scored, unsure rows so far; the summary to come."""
        parts = [f"{event.done:,} / {event.total:,} rows"]
        if event.rate > 0:
            parts.append(f"{event.rate:.1f} rows/s")
        if event.eta is not None and event.done < event.total:
            parts.append(f"about {duration(event.eta)} left")
        if event.paced:
            parts.append(event.paced)
        tasks = [_task("judge", "Judging the rows", WORKING, " · ".join(parts)),
                 _task("errors", "Rows not scored", ERROR if event.errors else WORKING,
                       f"{event.errors:,} errors or invalid replies so far" if event.errors else "none so far")]
        if self._several:
            tasks.append(_task("unsure", "Unsure rows (samples or judges split)", WORKING,
                               f"{event.unsure:,} so far"))
        return [*tasks, _task("summary", "Summarising", PENDING)]

    def ending(self, event: Progress | None, end: Ending) -> list[dict[str, Any]]:
        """The last word on each task: how the judging ended, and whether the summary is below."""
        tasks = [_task("judge", "Judging the rows", end.status, end.details)]
        if event is not None:
            tasks.append(_task("errors", "Rows not scored", ERROR if event.errors else COMPLETE,
                               f"{event.errors:,} errors or invalid replies" if event.errors else "none"))
            if self._several:
                tasks.append(_task("unsure", "Unsure rows (samples or judges split)", COMPLETE, f"{event.unsure:,}"))
        if end.summarised:
            tasks.append(_task("summary", "Summarising", COMPLETE, "the summary and the results file are below"))
        return tasks


def finished(done: int, total: int, seconds: float | None, cancelled: bool) -> Ending:
    """The end of a run that was summarised: every row judged, or cancelled part way."""
    took = f" in {duration(seconds)}" if seconds is not None else ""
    if cancelled:
        return Ending(ERROR, f"cancelled at {done:,} / {total:,} rows", summarised=True)
    return Ending(COMPLETE, f"{done:,} / {total:,} rows{took}", summarised=True)


def paused(done: int, total: int, reason: str) -> Ending:
    """A run paused on a problem every request would hit: Resume is in the message above."""
    return Ending(ERROR, f"paused at {done:,} / {total:,} rows: {reason}. Resume is in the message above")


def interrupted(done: int, total: int) -> Ending:
    """The bot stopped mid-run: it goes on in a new stream when it is back."""
    return Ending(PENDING, f"the bot was stopped at {done:,} / {total:,} rows; it goes on when it is back")


def refused(reason: str) -> Ending:
    """The run could not go on at all (its rubric changed, its judges are gone)."""
    return Ending(ERROR, f"stopped: {reason}")


def elsewhere() -> Ending:
    """Another process of the bot took the run over: its progress goes on there."""
    return Ending(PENDING, "another process of the bot goes on with this run")


def restarted() -> list[dict[str, Any]]:
    """The last word of a stream an earlier process left open: the progress goes on in a new one."""
    return [_task("judge", "Judging the rows", PENDING, "the bot restarted: the progress goes on in a new message below")]


def moved_up() -> list[dict[str, Any]]:
    """The last word of a stream Slack stopped taking: the progress message above shows the rest."""
    return [_task("judge", "Judging the rows", PENDING, "the progress goes on in the message above")]
