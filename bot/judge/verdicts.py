"""Every way a verdict is made of a judge's work: its reply read (scored, invalid, an error), an error with no reply,
an earlier verdict or sample reused, and the samples of a row made one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.judge.prompt import provenance
from bot.judge.samples import UNSURE_SPREAD, Sampled, chosen, outcome
from bot.llm.answers import Completion
from bot.records import JUDGED_FIELDS, SAMPLE_FIELDS, Outcome, RowState, Triple, Verdict
from bot.rubric import Rubric


class SavedSample(Protocol):
    """A saved sample as the history holds it: one judge's judgment, with the SAMPLE_FIELDS of a verdict."""

    @property
    def judge_model(self) -> str: ...


@dataclass
class Usage:
    """What the requests of one judgment took: tokens, time and attempts, added up over the first and the repair."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    tokens_reasoning: int = 0
    latency_ms: int = 0
    attempts: int = 0
    replies: list[Completion] = field(default_factory=list)  # each reply counted (a first one, a repair): each is
    # priced alone, as a provider bills a long prompt's rate per request

    def add(self, completion: Completion) -> None:
        """Count one reply."""
        self.attempts += 1
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        self.tokens_cached += completion.cached_tokens
        self.tokens_reasoning += completion.reasoning_tokens
        self.latency_ms += completion.latency_ms
        self.replies.append(completion)


def answered(status: Outcome, rubric: Rubric, judge_model: str, triple: Triple, *, usage: Usage, flags: list[str],
             **fields: Any) -> Verdict:
    """The verdict of a judgment that asked the judge: what its replies gave, and what they took."""
    return Verdict(status=status, tokens_in=usage.tokens_in, tokens_out=usage.tokens_out,
                   tokens_cached=usage.tokens_cached, tokens_reasoning=usage.tokens_reasoning,
                   latency_ms=usage.latency_ms, attempts=usage.attempts,
                   flags=flags, **provenance(rubric, judge_model, triple), **fields)


def failed(rubric: Rubric, judge_model: str, triple: Triple, message: str) -> Verdict:
    """A judge error for `triple`: what went wrong, and no score."""
    return Verdict(status=RowState.ERROR, error=message, **provenance(rubric, judge_model, triple))


def unjudged(*, rubric_name: str, rubric_version: str, rubric_hash: str, judge_model: str, message: str) -> Verdict:
    """A judge error for a row whose rubric is no longer loaded: it keeps the rubric it was started with."""
    return Verdict(status=RowState.ERROR, error=message, rubric_name=rubric_name, rubric_version=rubric_version,
                   rubric_hash=rubric_hash, judge_model=judge_model, prompt_hash="")


def reused(cached: object, rubric: Rubric, judge_model: str, triple: Triple) -> Verdict:
    """An earlier verdict on the same texts (a history row), as this row's: what it found, at no cost, under today's
    provenance."""
    found = {name: getattr(cached, name) for name in (*JUDGED_FIELDS, "reasoning_effort")
             if getattr(cached, name, None) is not None}  # the effort that made it, not today's
    return Verdict(status=RowState.SCORED, **found, cost_usd=0.0, **provenance(rubric, judge_model, triple))


def from_sample(saved: SavedSample, rubric: Rubric, triple: Triple, *, reused: bool = False) -> Verdict:
    """A saved sample (a history row of one judge's judgment) as a verdict: as it was, or (reused from another row)
    at no cost under today's provenance."""
    found = {name: getattr(saved, name) for name in SAMPLE_FIELDS if getattr(saved, name) is not None}
    if reused:
        found.update(tokens_in=0, tokens_out=0, tokens_cached=0, tokens_reasoning=0, cost_usd=0.0, latency_ms=0,
                     attempts=0)
    return Verdict(**{**provenance(rubric, saved.judge_model, triple), **found})


def combine(sampled: Sequence[Sampled], *, judge_model: str, unsure_spread: float = UNSURE_SPREAD) -> Verdict:
    """The row's verdict from its samples, in judge then sample order.

    The row is scored when most samples scored; its verdict is then the medoid of the scored samples (in an even
    split, of the outcome with the lower headline: `chosen`), with the share that agree with it on pass/fail and tag,
    the spread of their headlines, and `unsure` when they split or spread by `unsure_spread` points or more. Otherwise
    it is an error (or invalid, when most failures are) naming how many samples failed and the first reason. Tokens,
    latency and attempts add up over every sample.
    """
    if not sampled:
        raise ValueError("a row needs at least one sample")
    verdicts = [item.verdict for item in sampled]
    scored = [verdict for verdict in verdicts if verdict.status == RowState.SCORED]
    costs: dict[str, Any] = {name: sum(getattr(verdict, name) for verdict in verdicts)
                             for name in ("tokens_in", "tokens_out", "tokens_cached", "tokens_reasoning", "latency_ms",
                                          "attempts")}
    priced = [verdict.cost_usd for verdict in verdicts]
    costs["cost_usd"] = None if None in priced else sum(cost for cost in priced if cost is not None)
    flags = list(dict.fromkeys(flag for verdict in verdicts for flag in verdict.flags))
    efforts = {verdict.reasoning_effort for verdict in verdicts}
    common = {"judge_model": judge_model, "samples": len(verdicts), "flags": flags, **costs,
              "reasoning_effort": efforts.pop() if len(efforts) == 1 else None}  # a jury's mixed efforts: per sample
    if 2 * len(scored) <= len(verdicts):
        failures = [verdict for verdict in verdicts if verdict.status != RowState.SCORED]
        statuses = Counter(verdict.status for verdict in failures)
        status = RowState.INVALID if statuses[RowState.INVALID] > statuses[RowState.ERROR] else RowState.ERROR
        first = next(verdict for verdict in failures if verdict.status == status)
        error = f"{len(failures)} of {len(verdicts)} samples failed; the first: {first.error or 'no reason given'}"
        return first.model_copy(update={**common, "status": status, "error": error, "output": None, "derived": {},
                                        "headline": None, "passed": None, "label": None, "tag": None})
    canonical = scored[chosen(scored)]
    agreeing = sum(outcome(verdict) == outcome(canonical) for verdict in scored)
    headlines = [verdict.headline for verdict in scored if verdict.headline is not None]
    spread = round(max(headlines) - min(headlines), 2) if headlines else None
    unsure = agreeing < len(scored) or (spread is not None and spread >= unsure_spread)
    return canonical.model_copy(update={**common, "agreement": round(agreeing / len(scored), 4), "spread": spread,
                                        "unsure": unsure})
