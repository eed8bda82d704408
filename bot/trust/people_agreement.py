"""How far people agree with the judge on pass/fail: every counted label and vote (the stats' "people agree"), apart
from the trust report so that the stats load none of its queries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from bot.trust.calibration import Agreement, case_tables
from bot.trust.labels import vote_as_label


class Said(Protocol):
    """People's labels or votes counted alike: the judge's pass/fail, what the person said (a label's pass/fail, or a
    vote's Agree), whether it was a vote, the case, and how many."""

    @property
    def judge_passed(self) -> bool | None: ...
    @property
    def said(self) -> bool | None: ...
    @property
    def vote(self) -> bool: ...
    @property
    def case_key(self) -> str | None: ...
    @property
    def count(self) -> int: ...


def people_agreement(said: Sequence[Said]) -> Agreement:
    """The pass/fail figures of counted labels and votes (a vote read by `vote_as_label`), such as the stats' "people
    agree" of every label, correction and vote on a model's judgments."""
    return agreement_of(said)


def agreement_of(counts: Sequence[Said]) -> Agreement:
    passes: Counter[tuple[bool, bool]] = Counter()
    items: list[tuple[str | None, bool, bool, int]] = []
    for group in counts:
        human = vote_as_label(bool(group.said), passed=group.judge_passed).passed if group.vote else group.said
        if group.judge_passed is not None and human is not None:
            passes[group.judge_passed, human] += group.count
            items.append((group.case_key, group.judge_passed, human, group.count))
    return Agreement.of_tables(sum(group.count for group in counts), passes, case_tables(items))
