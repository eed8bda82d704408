"""What a paused run goes on with when it is resumed: the judge configured now, when its own judge model is one its
endpoint said it does not know (JUDGE_MODEL corrected since, or the model shut down)."""

from __future__ import annotations

from bot.llm.client import UNKNOWN_MODEL
from bot.records import RunState
from bot.store import Run


def paused_for_unknown_model(run: Run) -> bool:
    """Whether the run paused because its endpoint does not know its judge model."""
    return run.status == RunState.PAUSED and (run.stop_reason or "").startswith(UNKNOWN_MODEL)


def judge_on_resume(run: Run, configured: str) -> str | None:
    """The judge model a run goes on with when resumed, when it is not its own: the `configured` one, for a run of one
    judge that paused because its endpoint does not know its model. None: the run keeps its judges (a jury keeps
    them always)."""
    if not paused_for_unknown_model(run) or run.judges or configured == run.judge_model:
        return None
    return configured
