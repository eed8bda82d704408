"""What a run will cost before it starts: tokens in from the rubric's prompt and each row's texts, tokens out from
the reply the rubric asks for (refined by this rubric's recent replies in the history), times samples and judges,
at each judge's price; rows the history or an identical row spares, and rows a judge's context window refuses, are
left out."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from bot.figures import money, plural
from bot.judge.panel import Panel
from bot.judge.window import prompt_tokens, room_for, schema_reply_tokens, window_of
from bot.llm.context_window import ContextWindow
from bot.llm.prices import PriceTable
from bot.llm.sampling import REASONING_PRIOR, Effort
from bot.llm.tokens import texts_tokens
from bot.records import Triple
from bot.rubric import Rubric
from bot.runs.job import RowKeys, RunJob
from bot.store import (
    Run,
    Store,
    find_cached_many,
    pending_texts,
    recent_reasoning_tokens,
    recent_reply_tokens,
    update_run,
)

RECENT_REPLIES = 200  # replies of the rubric in the history that refine the expected reply size
FROM_SCHEMA = "the rubric's reply schema"


class Estimate(BaseModel):
    """A run's expected tokens and cost, and what they rest on."""

    rows: int
    samples: int
    judges: list[str]
    tokens_in: int
    tokens_out: int  # reasoning tokens included, billed as output
    cost_usd: float | None  # the priced judges' part; None when no judge's price is known
    unpriced: list[str] = []  # the judges whose price is unknown

    @property
    def requests(self) -> int:
        """The judgments asked of the judges: each row by each judge, `samples` times."""
        return self.rows * self.samples * len(self.judges)

    @property
    def unpriced_requests(self) -> int:
        """The judgments asked of judges whose price is unknown, which no cost weighs."""
        return self.rows * self.samples * len(self.unpriced)
    reply_basis: str = FROM_SCHEMA  # where the expected reply size comes from
    tokens_reasoning: int = 0  # of tokens_out, those the judges are expected to spend reasoning
    reasoning_basis: list[str] = []  # where each reasoning judge's expected reasoning comes from
    batch: bool = False  # at the Batch API's price
    background: str | None = None  # in the background within this completion window ("2h", "8h"), at its price
    tier_costs: dict[str, float] = {}  # the priced judges' part at each tier: live, each background window, batch
    reused: int = 0  # rows left out: their verdict is in the history, or another row with the same texts is sent
    too_long: int = 0  # rows left out for a judge whose context window they overflow: refused, never sent to it
    pairs: bool = False  # each row is a pair of answers in one order (a pairwise rubric)

    def through_batch(self, share: float) -> Estimate:
        """The same rows through the Batch API, at `share` of the live price."""
        cost = None if self.cost_usd is None else self.cost_usd * share
        return self.model_copy(update={"batch": True, "background": None, "cost_usd": cost})

    def in_background(self, window: str, share: float) -> Estimate:
        """The same rows in the background within the completion `window`, at `share` of the live price."""
        cost = None if self.cost_usd is None else self.cost_usd * share
        return self.model_copy(update={"batch": False, "background": window, "cost_usd": cost})

    def tier_text(self) -> str | None:
        """The same rows' cost at every tier, side by side: "live $4.20 · background 2h $2.94 · background 8h $2.52 ·
        batch $2.10"; None when no judge's price is known."""
        if not self.tier_costs:
            return None
        names = {"live": "live", "2h": "background 2h", "8h": "background 8h", "batch": "batch 24h"}
        return " · ".join(f"{names.get(tier, tier)} {money(cost)}" for tier, cost in self.tier_costs.items())

    def cost_text(self) -> str:
        """"about $4.20", which judges have no known price, or both: the priced judges' part is never dropped."""
        unknown = f"price unknown for {', '.join(self.unpriced)} (JUDGE_PRICES can add it)"
        if self.cost_usd is None:
            return unknown
        return f"about {money(self.cost_usd)}" + (f" for the judges of known price; {unknown}" if self.unpriced else "")

    def text(self) -> str:
        """One line: "about $4.20 for 2,000 rows x 3 samples with gpt-4o (1,234,000 tokens in, 300,000 out)"."""
        times = f" x {self.samples} samples" if self.samples > 1 else ""
        batch = " through the Batch API" if self.batch else (
            f" in the background (within {self.background})" if self.background else "")
        others = (f", {self.reused:,} more {plural(self.reused, 'row')} reused from the history or sent once for "
                  "identical texts" if self.reused else "")
        if self.too_long:
            whose = "the judge's context window" if len(self.judges) == 1 else "a judge's context window"
            others += (f", {self.too_long:,} {plural(self.too_long, 'row')} too long for {whose} left out: refused, "
                       "never sent")
        rows = (f"{self.rows:,} {plural(self.rows, 'judgment')} of pairs (each pair once per order shown)" if self.pairs
                else f"{self.rows:,} {plural(self.rows, 'row')}")
        reasoning = f" ({self.tokens_reasoning:,} of them reasoning)" if self.tokens_reasoning else ""
        what = (f"{rows}{times} with {' + '.join(self.judges)}{batch} "
                f"({self.tokens_in:,} tokens in, {self.tokens_out:,} out{reasoning}{others})")
        return f"{self.cost_text()} for {what}" if self.cost_usd is not None and not self.unpriced else \
            f"{what}: {self.cost_text()}"


def reasoning_tokens(rubric: Rubric, judge: str, effort: Effort | None, store: Store | None) -> tuple[float, str | None]:
    """(the reasoning tokens one judgment by `judge` at `effort` is expected to take, where that comes from): what its
    recent replies under the rubric took, else the rough prior of the effort (REASONING_PRIOR); (0, None) for a judge
    that is sent no effort and has no reasoning in its history."""
    recent = recent_reasoning_tokens(store, rubric.name, judge, RECENT_REPLIES) if store is not None else None
    if recent is not None and (recent[0] > 0 or effort is not None):
        return recent[0], f"{judge}'s last {recent[1]:,} replies of {rubric.name}"
    if effort is None or not REASONING_PRIOR[effort]:
        return 0.0, None
    return float(REASONING_PRIOR[effort]), f"a rough prior for {judge} at effort {effort}"


def reply_tokens(rubric: Rubric, store: Store | None) -> tuple[float, str]:
    """(the tokens one reply under the rubric is expected to take, its reasoning left out, where that comes from): the
    mean of the rubric's recent replies in the history, else what its reply schema shapes."""
    recent = recent_reply_tokens(store, rubric.name, RECENT_REPLIES) if store is not None else None
    if recent:
        return recent[0], f"the last {recent[1]:,} replies of {rubric.name}"
    return schema_reply_tokens(rubric), FROM_SCHEMA


def estimate_rows(rubric: Rubric, triples: Iterable[Triple], *, judges: Sequence[str], samples: int,
                  prices: PriceTable, store: Store | None = None, batch: bool = False,
                  windows: Sequence[ContextWindow | None] = (),
                  efforts: Sequence[Effort | None] = (), background: str | None = None,
                  offers_windows: bool = True) -> Estimate:
    """The estimate of judging `triples` with the rubric, by each judge `samples` times; with `windows` (each judge's
    context window, None where not known), a row is left out for each judge whose window it overflows, as the
    judgment refuses it there before sending it. Each judge's reasoning (at its effort in `efforts`, or its own) is
    counted as output; a row whose prompt is over a judge's long-prompt threshold is priced at that rate. The cost at
    each tier is given beside it, the background windows only where they are offered (`offers_windows`: the judges
    ask through the Responses API)."""
    fixed = prompt_tokens(rubric)
    room = room_for(rubric) if any(windows) else 0.0
    rows = too_long = 0
    sent = [0] * len(judges)  # rows each judge is sent, and the tokens of their texts
    texts = [0.0] * len(judges)
    listed = [prices.price_of(judge) for judge in judges]
    long_at = [price.long_prompt.above - fixed if price is not None and price.long_prompt is not None else None
               for price in listed]  # the tokens of texts over which a row's prompt is billed at the long rate
    long_sent = [0] * len(judges)  # of those rows, the long ones, and the tokens of their texts
    long_texts = [0.0] * len(judges)
    for triple in triples:
        fits = [window is None or window.overflow(room, triple.texts()) is None for window in windows] or [True]
        too_long += not all(fits)
        if not any(fits):
            continue
        rows += 1
        tokens = texts_tokens(triple.texts())
        for index in range(len(judges)):
            if fits[index % len(fits)]:
                sent[index] += 1
                texts[index] += tokens
                if (above := long_at[index]) is not None and tokens > above:
                    long_sent[index] += 1
                    long_texts[index] += tokens
    reply, basis = reply_tokens(rubric, store)
    thought = [reasoning_tokens(rubric, judge, efforts[number] if number < len(efforts) else None, store)
               for number, judge in enumerate(judges)]
    costs: dict[str, float | None] = {}
    tokens_in = tokens_out = tokens_reasoning = 0
    for number, judge in enumerate(judges):
        per_reply = reply + thought[number][0]
        short, long = sent[number] - long_sent[number], long_sent[number]
        short_in = math.ceil((fixed * short + texts[number] - long_texts[number]) * samples)
        long_in = math.ceil((fixed * long + long_texts[number]) * samples)
        short_out, long_out = math.ceil(per_reply * short * samples), math.ceil(per_reply * long * samples)
        parts = [prices.cost(judge, short_in, short_out), prices.cost(judge, long_in, long_out, long=True)]
        costs[judge] = None if None in parts else sum(part for part in parts if part is not None)
        tokens_in += short_in + long_in
        tokens_out += short_out + long_out
        tokens_reasoning += math.ceil(thought[number][0] * sent[number] * samples)
    unpriced = [judge for judge, cost in costs.items() if cost is None]
    priced = [cost for cost in costs.values() if cost is not None]
    live = sum(priced) if priced else None  # every tier bills a share of the live price, long prompts included
    offered = ("live", *(prices.background_shares if offers_windows else ()), "batch")
    tiers = {} if live is None else {tier: live * prices.share_of(tier) for tier in offered}
    cost = None if live is None else live * prices.share_of("batch" if batch else background or "live")
    return Estimate(rows=rows, samples=samples, judges=list(judges), tokens_in=tokens_in, tokens_out=tokens_out,
                    tokens_reasoning=tokens_reasoning, cost_usd=cost, unpriced=unpriced, reply_basis=basis,
                    reasoning_basis=[said for _, said in thought if said is not None], batch=batch, background=background,
                    tier_costs=tiers,
                    pairs=rubric.pairwise, too_long=too_long)


async def context_windows(panel: Panel) -> list[ContextWindow | None]:
    """Each judge's context window (None where its endpoint and the price table do not tell it), asked once per
    client, for the estimate to leave out the rows a live judgment refuses before sending them."""
    return [await window_of(client, panel.prices) for client in panel.clients]


def estimate_run(store: Store, run: Run, rubric: Rubric, panel: Panel, *, batch: bool = False,
                 keep: bool = False, windows: Sequence[ContextWindow | None] = (),
                 background: str | None = None, keys: RowKeys | None = None) -> Estimate:
    """The estimate of what judging a run's pending rows will send, by every judge and sample of `panel`: rows whose
    verdict the history holds (for one judge asked once) and rows whose texts another pending row has are left out,
    as the run leaves them out, and (judged live) rows too long for a judge's context window in `windows`
    (`context_windows`). With `keep`, saved with the run the first time, to be shown beside what it cost. The rows'
    keys are handed on in `keys`, for the judging of the same request to take."""
    sending = ToSend(RunJob(store, run, rubric, panel, keys=keys if keys is not None else RowKeys()))
    estimate = estimate_rows(rubric, sending, judges=[client.model for client in panel.clients], samples=panel.samples,
                             prices=panel.prices, store=store, batch=batch, windows=() if batch else windows,
                             background=background, offers_windows=all(client.api == "responses" for client in panel.clients),
                             efforts=[client.reasoning_effort or (client.rules.default if client.rules else None)
                                      for client in panel.clients])
    estimate = estimate.model_copy(update={"reused": sending.reused})
    if keep and run.estimate is None:
        update_run(store, run.id, estimate=as_saved(estimate))
    return estimate


class ToSend:
    """The texts of a run's pending rows that will be sent, read a page at a time (a run of 100,000 rows is never
    held whole): each set of identical texts once, and (one judge asked once) none whose verdict the history holds
    under the run's key. `reused` counts the rows left out, once iterated."""

    def __init__(self, job: RunJob, page: int = 500) -> None:
        self.job, self.page, self.reused = job, page, 0

    def __iter__(self) -> Iterator[Triple]:
        seen: set[str] = set()
        rows = iter(pending_texts(self.job.store, self.job.run.id))
        while chunk := list(itertools.islice(rows, self.page)):
            keyed: dict[str, Triple] = {}
            for judgment_id, triple in chunk:
                key = self.job.row_key(triple)
                self.job.keys.keep(judgment_id, key)  # the judging that follows takes it rather than work it out
                if key in seen or key in keyed:
                    self.reused += 1
                else:
                    keyed[key] = triple
            seen.update(keyed)
            cached = find_cached_many(self.job.store, list(keyed), run_id=self.job.scope) if self.job.single else {}
            self.reused += len(cached)
            yield from (triple for key, triple in keyed.items() if key not in cached)


class RequestCosts:
    """What one request of a run is expected to cost before its reply is known, priced as the run's estimate prices
    it: the prompt with the row's texts in, the reply and reasoning expected of its judge out, at `tier`'s share of
    that judge's price (a judge of unknown price counts nothing, as against a budget)."""

    def __init__(self, store: Store, rubric: Rubric, panel: Panel, tier: str | None) -> None:
        self.prices, self.tier = panel.prices, tier
        self.fixed = prompt_tokens(rubric)
        reply, _ = reply_tokens(rubric, store)
        self.judges = [(client.model, math.ceil(reply + reasoning_tokens(rubric, client.model, client.effort_in_force,
                                                                         store)[0]))
                       for client in panel.clients]

    def of(self, triple: Triple, judge_index: int) -> float:
        """The expected cost of asking the judge at `judge_index` about `triple` once."""
        model, tokens_out = self.judges[judge_index]
        tokens_in = math.ceil(self.fixed + texts_tokens(triple.texts()))
        return self.prices.request_cost(model, tokens_in, tokens_out, tier=self.tier) or 0.0


def as_saved(estimate: Estimate) -> dict[str, Any]:
    """What a run keeps of its estimate, to show beside what it cost."""
    return estimate.model_dump(include={"rows", "samples", "tokens_in", "tokens_out", "tokens_reasoning", "cost_usd",
                                        "batch", "background"})
