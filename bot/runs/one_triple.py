"""A run of one triple that nobody comes back to (a card, a Slack person's grade): its row ended as an error when the
judge cannot answer now, or without asking the judge at all."""

from __future__ import annotations

import asyncio

from bot.errors import RunBusy
from bot.judge.verdicts import failed, unjudged
from bot.llm.answers import RESUME
from bot.records import RESUMABLE, STALE_AFTER, RowState, RunState
from bot.rubric import Rubric
from bot.store import (
    Judgment,
    Run,
    Store,
    claim_run,
    first_judgment,
    get_judgment,
    get_run,
    process_name,
    save_verdict,
    triple_of,
    update_run,
)


async def abandon_triple(store: Store, *, run: Run, reason: str) -> Judgment:
    """End the pending row of a run of one triple as an error with `reason`, without asking the judge.

    RunBusy when the run is finished already or held by another live process.
    """
    owner = process_name()

    def claim_and_settle() -> Judgment:
        if not claim_run(store, run.id, owner=owner, stale_after=STALE_AFTER, statuses=RESUMABLE):
            raise RunBusy(f"run {run.id} is finished or held by another judgebot process")
        return settle_triple(store, run, None, reason, owner, holding=True)

    return await asyncio.to_thread(claim_and_settle)


def settle_triple(store: Store, run: Run, rubric: Rubric | None, stop_reason: str | None, owner: str, *,
                  holding: bool = False) -> Judgment:
    """The row of a run of one triple, read back; one still pending becomes an error with the reason (a judge that
    cannot be used right now would pause a file's run, and one triple has nothing to come back to), unless another
    process took the run."""
    row = first_judgment(store, run.id)
    assert row is not None and row.id is not None, "a run of one triple has one row"
    current = get_run(store, run.id)
    taken = current is not None and current.owner not in (None, owner)
    if row.status != RowState.PENDING or taken:
        return row
    # a stop reason says to resume the run; this row ends here, and judging it again is a retry
    reason = (stop_reason or "the judge did not answer").replace(RESUME, "try again")
    if rubric is not None:
        verdict = failed(rubric, run.judge_model, triple_of(row), reason)
    else:  # the rubric is gone or changed: the row keeps the one it was started with
        verdict = unjudged(rubric_name=run.rubric_name, rubric_version=run.rubric_version, rubric_hash=run.rubric_hash,
                           judge_model=run.judge_model, message=reason)
    save_verdict(store, row.id, verdict, cache_key="")
    update_run(store, run.id, held_by=owner if holding else None, status=RunState.DONE,
                     stop_reason=reason, owner=None)
    saved = get_judgment(store, row.id)
    assert saved is not None
    return saved
