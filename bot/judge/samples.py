"""Several judgments of one row made one: the canonical verdict (the medoid of the samples), their agreement, spread
and splits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.records import RowState, Verdict

UNSURE_SPREAD = 25.0  # headline points between the highest and lowest sample from which a row is unsure


class Graded(Protocol):
    """What agreement looks at in a verdict or a saved sample."""

    @property
    def headline(self) -> float | None: ...
    @property
    def passed(self) -> bool | None: ...
    @property
    def tag(self) -> str | None: ...


@dataclass(frozen=True)
class Sampled:
    """One judge's judgment of a row: which judge, which of its samples, and the verdict it gave."""

    judge_model: str
    sample: int
    verdict: Verdict
    reused_from: int | None = None  # the judgment whose sample this verdict was reused from, if it was


def outcome(verdict: Graded) -> tuple[bool | None, str | None]:
    """What two samples must share to agree: pass/fail and the tag."""
    return verdict.passed, verdict.tag


def _distance(one: Graded, other: Graded) -> float:
    """How far apart two scored samples are: headline points as a share of the 0-100 scale, plus one for a different
    pass/fail and one for a different tag."""
    gap = abs(one.headline - other.headline) / 100 if one.headline is not None and other.headline is not None else 0.0
    return gap + (one.passed != other.passed) + (one.tag != other.tag)


def medoid(verdicts: Sequence[Graded]) -> int:
    """The index of the verdict closest to all the others (the first of equals): an actual sample, so the rubric's
    rules hold on it, unlike an average."""
    return min(range(len(verdicts)), key=lambda i: (sum(_distance(verdicts[i], other) for other in verdicts), i))


def outcome_names(verdicts: Sequence[Graded]) -> dict[tuple[bool | None, str | None], str]:
    """A short name for each outcome among `verdicts`: its tag, its pass/fail when there is no tag, and both when
    samples with one tag differ on pass/fail."""
    outcomes = {outcome(verdict) for verdict in verdicts}
    tags = Counter(tag for _, tag in outcomes)

    def name(passed: bool | None, tag: str | None) -> str:
        verdict = "pass" if passed else "fail" if passed is not None else "no pass/fail"
        if tag is None:
            return verdict
        return f"{tag} ({verdict})" if tags[tag] > 1 else tag

    return {(passed, tag): name(passed, tag) for passed, tag in outcomes}


def split(verdicts: Sequence[Graded]) -> list[tuple[str, int]]:
    """The outcomes of scored samples with how many gave each, most first (one entry when they all agree)."""
    names = outcome_names(verdicts)
    counts = Counter(names[outcome(verdict)] for verdict in verdicts)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def split_text(verdicts: Sequence[Graded]) -> str:
    """"2/1: Correct, Generic" for samples that split, "" when they agree."""
    parts = split(verdicts)
    if len(parts) < 2:
        return ""
    return "/".join(str(count) for _, count in parts) + ": " + ", ".join(name for name, _ in parts)


def combine(sampled: Sequence[Sampled], *, judge_model: str, unsure_spread: float = UNSURE_SPREAD) -> Verdict:
    """The row's verdict from its samples, in judge then sample order.

    The row is scored when most samples scored; its verdict is then the medoid of the scored samples, with the share
    that agree with it on pass/fail and tag, the spread of their headlines, and `unsure` when they split or spread by
    `unsure_spread` points or more. Otherwise it is an error (or invalid, when most failures are) naming how many
    samples failed and the first reason. Tokens, latency and attempts add up over every sample.
    """
    if not sampled:
        raise ValueError("a row needs at least one sample")
    verdicts = [item.verdict for item in sampled]
    scored = [verdict for verdict in verdicts if verdict.status == RowState.SCORED]
    costs: dict[str, Any] = {name: sum(getattr(verdict, name) for verdict in verdicts)
                             for name in ("tokens_in", "tokens_out", "tokens_cached", "latency_ms", "attempts")}
    priced = [verdict.cost_usd for verdict in verdicts]
    costs["cost_usd"] = None if None in priced else sum(cost for cost in priced if cost is not None)
    flags = list(dict.fromkeys(flag for verdict in verdicts for flag in verdict.flags))
    common = {"judge_model": judge_model, "samples": len(verdicts), "flags": flags, **costs}
    if 2 * len(scored) <= len(verdicts):
        failed = [verdict for verdict in verdicts if verdict.status != RowState.SCORED]
        statuses = Counter(verdict.status for verdict in failed)
        status = RowState.INVALID if statuses[RowState.INVALID] > statuses[RowState.ERROR] else RowState.ERROR
        first = next(verdict for verdict in failed if verdict.status == status)
        error = f"{len(failed)} of {len(verdicts)} samples failed; the first: {first.error or 'no reason given'}"
        return first.model_copy(update={**common, "status": status, "error": error, "output": None, "derived": {},
                                        "headline": None, "passed": None, "label": None, "tag": None})
    canonical = scored[medoid(scored)]
    agreeing = sum(outcome(verdict) == outcome(canonical) for verdict in scored)
    headlines = [verdict.headline for verdict in scored if verdict.headline is not None]
    spread = round(max(headlines) - min(headlines), 2) if headlines else None
    unsure = agreeing < len(scored) or (spread is not None and spread >= unsure_spread)
    return canonical.model_copy(update={**common, "agreement": round(agreeing / len(scored), 4), "spread": spread,
                                        "unsure": unsure})
