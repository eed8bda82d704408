"""What goes to the review queue: unsure rows and split juries, rows whose verdict a person's label contradicts, and a
random share of the cases a file brings to the history, so that agreement is also measured on cases nobody chose."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bot.figures import plural
from bot.records import channel_of_checks
from bot.store import DISAGREE, QueuedRow, Run, Store, add_cases, drawn_by, queued_rows
from bot.trust.review_reasons import INCONSISTENT, RANDOM, SPLIT, UNSURE
from bot.trust.review_reasons import REASONS as REASONS  # said where the queue is shown

RANDOM_AT_LEAST = 3  # the random share of a file is never fewer cases than this (when it has them)


@dataclass(frozen=True)
class Pick:
    """A row sent to review, and why."""

    judgment_id: int
    case_key: str
    reason: str
    random: bool


def random_count(scored: int, rate: float) -> int:
    """How many of `scored` cases are picked at random: `rate` of them, at least RANDOM_AT_LEAST (0 when rate is 0)."""
    if rate <= 0 or scored == 0:
        return 0
    return min(scored, max(RANDOM_AT_LEAST, math.ceil(rate * scored)))


def choose(rows: Sequence[QueuedRow], *, rate: float, seed: int, drawn: Collection[str] | None = None) -> list[Pick]:
    """The rows to send to review, in row order, one per case. The random share is drawn once per case: with `seed`
    from the cases of `rows` that no earlier run scored (each case's one chance) and nobody labeled yet, whatever
    else is said of them; or, when the run drew before, it is the cases it `drawn` then (labels given since change
    nothing)."""
    by_case: dict[str, QueuedRow] = {}
    for row in rows:  # each case by its first row
        by_case.setdefault(row.case_key, row)
    first = list(by_case.values())
    if drawn is None:
        new = [row for row in first if not row.labeled and not row.judged_before]
        drawn = {row.case_key for row in random.Random(seed).sample(new, random_count(len(new), rate))}
    picks = []
    for row in first:
        reason = _reason(row)
        if reason is None and row.case_key not in drawn:
            continue
        picks.append(Pick(row.judgment_id, row.case_key, reason or RANDOM, row.case_key in drawn))
    return picks


def _reason(row: QueuedRow) -> str | None:
    # One person contradicts the verdict: a second opinion is asked for (two people have spoken: it is not).
    if row.passed is not None and len(row.label_passes) == 1 and row.label_passes[0] != row.passed:
        return DISAGREE
    if row.unsure:
        return SPLIT if row.jury else UNSURE
    return None


@dataclass(frozen=True)
class SentToReview:
    """How many cases a run added to the review queue, by reason; and how many it would have sent that were queued
    before (by an earlier run)."""

    by_reason: dict[str, int]
    queued_before: int = 0
    judged_before: int = 0  # cases left out of the random share because an earlier run scored them (and drew them)
    noun: str = "case"  # what a case is to the person reading: a case, or a pair

    @property
    def total(self) -> int:
        """The cases the run added to the queue."""
        return sum(self.by_reason.values())

    def text(self) -> str:
        """"2 cases sent to review (1 unsure, 1 at random)"; when the run added none, "no new case sent to review"
        with why (all were queued before, or judged before: each case is drawn once); "" when it had none to send."""
        if not self.total:
            if self.queued_before:
                return f"no new {self.noun} sent to review: all were queued before"
            if self.judged_before:
                return f"no new {self.noun} sent to review: all were judged before (each is drawn for review once)"
            return ""
        parts = [f"{count:,} {_short[reason]}" for reason, count in self.by_reason.items() if count]
        return f"{self.total:,} {plural(self.total, self.noun)} sent to review ({', '.join(parts)})"


_short = {DISAGREE: "contradicting a label", SPLIT: "split juries", UNSURE: "unsure", RANDOM: "at random",
          INCONSISTENT: "inconsistent"}


def send_to_review(store: Store, run: Run, *, rate: float) -> SentToReview:
    """Queue a finished run's cases that want a person's label, once: a case queued before keeps its place, and a
    run summarised again draws and queues nothing new. How many cases the run added. `rate` 0 leaves the random
    share out (a card one person asked for)."""
    rows = queued_rows(store, run.id)
    picks = choose(rows, rate=rate, seed=run.id, drawn=drawn_by(store, run.id) or None)
    added = add_cases(store, [{"team_id": run.team_id, "channel_id": run.channel_id, "case_key": pick.case_key,
                     "judgment_id": pick.judgment_id, "run_id": run.id, "rubric_name": run.rubric_name,
                     "reason": pick.reason, "random": pick.random} for pick in picks])
    counted = Counter(pick.reason if not pick.random else RANDOM for pick in picks if pick.case_key in added)
    return SentToReview({reason: counted[reason] for reason in (UNSURE, SPLIT, DISAGREE, RANDOM) if counted[reason]},
                        queued_before=len(picks) - sum(counted.values()),
                        judged_before=len({row.case_key for row in rows if row.judged_before}) if rate > 0 else 0)


def send_pairs_to_review(store: Store, run: Run, unsettled: Sequence[tuple[int, str]]) -> SentToReview:
    """Queue a pairwise run's inconsistent pairs nobody labeled yet (each a case: the judgment shown A first, and the
    pair's key) in the review queue of the channel the run was asked in (the terminal's for a terminal run), where a
    person says which answer is better."""
    channel = channel_of_checks(run.channel_id)
    added = add_cases(store, [{"team_id": run.team_id, "channel_id": channel, "case_key": key,
                               "judgment_id": judgment_id, "run_id": run.id, "rubric_name": run.rubric_name,
                               "reason": INCONSISTENT, "random": False} for judgment_id, key in unsettled])
    count = len(added)
    return SentToReview({INCONSISTENT: count} if count else {}, queued_before=len({key for _, key in unsettled}) - count,
                        noun="pair")
