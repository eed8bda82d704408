"""How far several judgments of one row agree: the one closest to the others (the medoid), the outcomes they split
into, and their names. bot.judge.verdicts makes the row's verdict of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.records import Verdict

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


def even_split(verdicts: Sequence[Graded]) -> bool:
    """Whether two outcomes or more tie for the most samples (2/2, 1/1/1): no majority says which is the row's."""
    counts = Counter(outcome(verdict) for verdict in verdicts).most_common()
    return len(counts) > 1 and counts[0][1] == counts[1][1]


def chosen(verdicts: Sequence[Graded]) -> int:
    """The index of the row's verdict among scored samples: the medoid, except in an even split, where the outcome
    with the lower headline (the stricter verdict) is taken, and its sample closest to all the others.

    Without this rule a 2/2 tie would be decided by the order the samples came in.
    """
    if not even_split(verdicts):
        return medoid(verdicts)
    counts = Counter(outcome(verdict) for verdict in verdicts)
    top = max(counts.values())
    headlines: dict[tuple[bool | None, str | None], list[float]] = {}
    for verdict in verdicts:
        headlines.setdefault(outcome(verdict), []).append(verdict.headline if verdict.headline is not None else 0.0)

    def key(i: int) -> tuple[float, float, int]:
        scores = headlines[outcome(verdicts[i])]
        return sum(scores) / len(scores), sum(_distance(verdicts[i], other) for other in verdicts), i

    return min((i for i in range(len(verdicts)) if counts[outcome(verdicts[i])] == top), key=key)


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
    """"2/1: Correct, Generic" for samples that split, "" when they agree; an even split names the outcome taken first
    and says why: "2/2: Generic, Correct (even: the lower headline taken)"."""
    parts = split(verdicts)
    if len(parts) < 2:
        return ""
    note = ""
    if even_split(verdicts):
        taken = outcome_names(verdicts)[outcome(verdicts[chosen(verdicts)])]
        parts = sorted(parts, key=lambda part: part[0] != taken)  # stable: the others keep their order
        note = " (even: the lower headline taken)"
    return "/".join(str(count) for _, count in parts) + ": " + ", ".join(name for name, _ in parts) + note
