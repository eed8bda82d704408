"""A row judged by a panel (several judges, or samples of one): each judge's samples asked at once, each saved as it
arrives, and made one verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from bot.judge.panel import Panel
from bot.judge.samples import Sampled
from bot.judge.verdicts import combine, from_sample
from bot.llm.client import JudgeClient
from bot.records import Triple, Verdict
from bot.rubric import Rubric
from bot.runs.job import RunJob
from bot.store import Store, known_samples, save_sample


class PanelRows:
    """The part of a run's execution that judges a row with a panel (mixed into bot.runs.execute's)."""

    job: RunJob
    panel: Panel
    store: Store
    rubric: Rubric
    run_id: int
    in_db: Callable[..., Any]
    charge: Callable[[Verdict], None]
    judge: Callable[[Triple, JudgeClient], Awaitable[Verdict]]  # one judgment, a failure made a failed verdict

    async def judge_panel(self, judgment_id: int, triple: Triple) -> tuple[Verdict, int | None]:
        """Every judge's samples of a row (those saved before a stop are kept, not asked again), made one verdict.

        Each sample is saved as it arrives. When a judge cannot be used (RunStopped), the other samples in flight
        still land and are saved, then the row stays pending.
        """
        if (decided := self.job.screened(triple)) is not None:  # not sent to any judge
            return decided, None
        keys = {(client.model, number): self.job.sample_key(triple, client, number)
                for client, number in self.panel.slots}
        rows, cached = await self.in_db(known_samples, self.store, judgment_id, keys.values(), run_id=self.job.scope)
        saved = {(row.judge_model, row.sample): row for row in rows}

        async def slot(client: JudgeClient, number: int) -> Sampled:
            if (found := saved.get((client.model, number))) is not None:
                return Sampled(client.model, number, from_sample(found, self.rubric, triple), None)
            key = keys[(client.model, number)]
            earlier = cached.get(key)
            verdict = (from_sample(earlier, self.rubric, triple, reused=True) if earlier is not None
                       else await self.judge(triple, client))
            self.charge(verdict)
            await self.in_db(save_sample, self.store, judgment_id=judgment_id, run_id=self.run_id,
                             judge_model=client.model, sample=number, verdict=verdict, cache_key=key,
                             cached_from=earlier.id if earlier is not None else None)
            return Sampled(client.model, number, verdict, earlier.judgment_id if earlier is not None else None)

        results = await asyncio.gather(*(slot(client, number) for client, number in self.panel.slots),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        sampled = [result for result in results if isinstance(result, Sampled)]
        verdict = combine(sampled, judge_model=self.job.judge_model, unsure_spread=self.job.unsure_spread)
        sources = {item.reused_from for item in sampled}
        return verdict, (sources.pop() if len(sources) == 1 and None not in sources else None)

