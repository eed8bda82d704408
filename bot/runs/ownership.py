"""Who holds a run: the process judging it shows life with a heartbeat, and another may take it once that process is
gone."""

from __future__ import annotations

from bot.errors import RunBusy
from bot.records import STALE_AFTER, RunState
from bot.store import Run, Store, interrupt_run, owner_gone, process_name, release_claims, status_counts, utcnow

HEARTBEAT_SECONDS = 5.0


def busy(run_id: int) -> RunBusy:
    """Why a run another live process is judging cannot be taken, and what to do."""
    return RunBusy(f"run {run_id} is being judged by another judgebot process right now; let it finish, or stop that "
                   f"process (a run whose process died can be resumed at once on the same machine, or "
                   f"{STALE_AFTER:.0f} s after its last sign of life from another)")


def held_elsewhere(run: Run) -> bool:
    """Whether another live process is judging `run` now (as read just before): a resume is refused before anything
    is estimated or shown."""
    return (run.status == RunState.RUNNING and run.owner is not None and run.owner != process_name()
            and not owner_gone(run.owner, run.heartbeat_at, utcnow(), STALE_AFTER))


def let_go(store: Store, run_id: int) -> dict[str, int]:
    """A run this process was about to judge or judging when it was interrupted (Ctrl-C): the rows it claimed given
    back, and the run paused as interrupted unless it ended or another process holds it, so that `resume` takes it
    at once; the counts of its rows by state."""
    owner = process_name()
    release_claims(store, run_id, owner)
    interrupt_run(store, run_id, owner=owner)
    return status_counts(store, run_id)
