"""Replicas helping each other with their runs: a process with room claims rows of runs another one is judging, so
that replicas on one database judge a large file together (and a worker-only process does nothing else)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot.config import Settings
from bot.errors import JudgebotError, SetupError
from bot.judge.panel import Bench, Panel, open_bench
from bot.rubric import Rubric, RubricSet, load_rubrics, rubric_from_text
from bot.runs.execute import execute_run
from bot.runs.shared_pauses import SharedPauses
from bot.runs.start import FILE_SOURCE
from bot.store import Run, Store, process_name, revision_by_hash, runs_to_help

log = logging.getLogger(__name__)

ASSIST_EVERY = 2.0  # seconds between looks for runs to help with
HELPED_AT_ONCE = 2  # runs helped at a time; each shares the judges' concurrency with the process's own runs
# The runs helped: those of files shared in Slack, started by replicas configured alike (the same judges at the same
# endpoints); a run of the terminal may use an endpoint of its own under a model's name, and is left to it.
SHARED = (FILE_SOURCE,)


class Assist:
    """Looks now and then for runs other processes judge that have rows left to claim, and judges some of them."""

    def __init__(self, store: Store, rubrics: RubricSet, panel_of: Callable[[Run], Panel], *, concurrency: int,
                 unsure_spread: float, own: Callable[[], set[int]] = set) -> None:
        self.store, self.rubrics, self.panel_of, self.concurrency = store, rubrics, panel_of, concurrency
        self.unsure_spread = unsure_spread  # UNSURE_SPREAD, as the process holding the run judges with
        self.own = own  # the runs this process judges itself: never helped
        self.helping: dict[int, asyncio.Task[None]] = {}
        self.revisions: dict[str, Rubric | None] = {}  # channels' revisions of rubrics, by hash

    async def forever(self) -> None:
        """Help until cancelled; the runs being helped then stop, giving back the rows they claimed."""
        try:
            while True:
                await self.look()
                await asyncio.sleep(ASSIST_EVERY)
        finally:
            tasks = list(self.helping.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def look(self) -> None:
        """Start helping with runs that need it, while fewer than HELPED_AT_ONCE are helped."""
        if len(self.helping) >= HELPED_AT_ONCE:
            return
        try:
            runs = await asyncio.to_thread(runs_to_help, self.store, process_name(), sources=SHARED)
        except Exception:
            log.warning("could not look for runs to help with", exc_info=True)
            return
        for run in runs:
            if len(self.helping) >= HELPED_AT_ONCE:
                return
            if run.id in self.helping or run.id in self.own():
                continue
            rubric = await self.rubric_of(run)
            try:
                panel = self.panel_of(run)
            except SetupError as err:
                log.info("run %s is not helped: %s", run.id, err)
                continue
            if rubric is not None:
                self.helping[run.id] = asyncio.create_task(self._help(run, rubric, panel), name=f"helping run {run.id}")

    async def stop_helping(self, run_id: int) -> None:
        """Stop helping with a run this process now takes itself (its claims given back first)."""
        task = self.helping.get(run_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def rubric_of(self, run: Run) -> Rubric | None:
        """The very rubric the run was started with: a loaded one, or a channel's revision of it from the history."""
        if (loaded := self.rubrics.exact(run.rubric_name, run.rubric_hash)) is not None:
            return loaded
        if run.rubric_hash not in self.revisions:
            revision = await asyncio.to_thread(revision_by_hash, self.store, run.rubric_hash)
            try:
                self.revisions[run.rubric_hash] = rubric_from_text(revision.content) if revision else None
            except Exception:
                log.warning("the revision %s of %s does not read as a rubric", run.rubric_hash, run.rubric_name)
                self.revisions[run.rubric_hash] = None
        return self.revisions[run.rubric_hash]

    async def _help(self, run: Run, rubric: Rubric, panel: Panel) -> None:
        try:
            await execute_run(self.store, run, rubric, panel, concurrency=self.concurrency, joining=True,
                              unsure_spread=self.unsure_spread)
            log.info("helped with run %s", run.id)
        except JudgebotError as err:  # the run ended, or its rubric changed: nothing to help with
            log.info("stopped helping with run %s: %s", run.id, err)
        except Exception:
            log.exception("helping with run %s failed", run.id)
        finally:
            self.helping.pop(run.id, None)


def run_panel(bench: Bench) -> Callable[[Run], Panel]:
    """The judges a run was started with, over `bench`'s connections (SetupError: one is not configured here)."""
    return lambda run: bench.panel_for(judge_model=run.judge_model, samples=run.samples, judges=run.judges,
                                       temperature=run.temperature)


async def work_only(settings: Settings, stop: asyncio.Event) -> None:
    """Judge rows of the runs other processes hold until `stop` is set: no Slack connection, nothing posted."""
    store = await asyncio.to_thread(Store.open, settings.db_url)
    bench = open_bench(settings)
    assist = Assist(store, load_rubrics(settings.rubrics_dir), run_panel(bench), concurrency=settings.concurrency,
                    unsure_spread=bench.unsure_spread)
    tasks = [asyncio.create_task(assist.forever(), name="helping the other processes"),
             asyncio.create_task(SharedPauses(store).forever(), name="sharing the judge endpoints' pauses")]
    try:
        await stop.wait()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await bench.aclose()
