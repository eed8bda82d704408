"""What a run reports while it is judged (its progress) and how it ended."""

from __future__ import annotations

from dataclasses import dataclass

from bot.records import UNSCORED, RowState, RunState


@dataclass(frozen=True)
class Progress:
    """A snapshot of a run in flight, for a terminal bar or a Slack message."""

    run_id: int
    done: int
    total: int
    errors: int
    cached: int
    judged_now: int
    elapsed: float
    unsure: int = 0  # rows whose samples split (with several samples or judges)
    paced: str | None = None  # the limit the judge endpoint holds the run to, when one does

    @property
    def rate(self) -> float:
        """Rows finished per second in this session."""
        return self.judged_now / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until the last row, at the current rate."""
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: done, paused (resumable) or cancelled, with its row counts by status."""

    run_id: int
    status: RunState
    stop_reason: str | None
    counts: dict[str, int]
    rejudged: int = 0  # rows made pending again to be judged anew
    paced: str | None = None  # "paced by the tokens limit: 398,000 of 400,000 a minute", when a limit bound it
    cancelled_by: str | None = None  # who cancelled it through another process of the bot

    @property
    def all_scored(self) -> bool:
        """True when every row of the run got a score."""
        return self.status == RunState.DONE and not any(self.counts.get(s) for s in (*UNSCORED, RowState.PENDING))
