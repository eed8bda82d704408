"""Is B better than A? Two models' graded answers paired on the same rubric, question and reference: the paired mean
difference with its interval, wins and losses with a sign test, pass/fail changes with McNemar's test, the tag
transitions, the biggest moves, and whether the difference survives answer length."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.trust.compare import mean_shift
from bot.trust.mcnemar import mcnemar_p, p_text

MOVES_SHOWN = 5
SIMILAR_LENGTH = 0.2  # answers whose lengths differ by less than this share are "of similar length"


@dataclass(frozen=True)
class Graded:
    """One graded answer as a comparison reads it."""

    judgment_id: int
    rubric: str
    question: str
    reference: str
    answer: str
    headline: float
    passed: bool | None
    tag: str | None
    model: str | None = None


def key_of(row: Graded) -> tuple[str, str, str]:
    """What pairs two answers: the rubric, and the question and reference with their whitespace normalised."""
    return row.rubric, " ".join(row.question.split()), " ".join(row.reference.split())


@dataclass(frozen=True)
class Pair:
    """A's and B's answers to one question."""

    a: Graded
    b: Graded

    @property
    def difference(self) -> float:
        """B's headline less A's."""
        return self.b.headline - self.a.headline


def paired(a_rows: Sequence[Graded], b_rows: Sequence[Graded]) -> tuple[list[Pair], list[Graded], list[Graded]]:
    """The pairs (a question answered by both; where one side answered it more than once, its latest answer), and
    the answers of each side that have no partner, in order."""
    latest_a = {key_of(row): row for row in sorted(a_rows, key=lambda row: row.judgment_id)}
    latest_b = {key_of(row): row for row in sorted(b_rows, key=lambda row: row.judgment_id)}
    pairs = [Pair(row, latest_b[key]) for key, row in latest_a.items() if key in latest_b]
    return (pairs, [row for key, row in latest_a.items() if key not in latest_b],
            [row for key, row in latest_b.items() if key not in latest_a])


def sign_test_p(wins: int, losses: int) -> float | None:
    """The two-sided exact binomial p of `wins` against `losses` (ties left out); None without either."""
    n = wins + losses
    if n == 0:
        return None
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than 3 values or no spread on a side."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    import numpy as np  # loaded only when two models are compared, not by every run's summary

    return float(np.corrcoef(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))[0, 1])


@dataclass
class PairedReport:
    """The paired comparison of B against A."""

    pairs: list[Pair]
    unpaired_a: list[Graded]
    unpaired_b: list[Graded]
    mean_a: float | None = None
    mean_b: float | None = None
    difference: float | None = None
    interval: tuple[float, float] | None = None
    wins: int = 0  # B scored higher
    ties: int = 0
    losses: int = 0
    sign_p: float | None = None
    a_only_passed: int = 0
    b_only_passed: int = 0
    mcnemar: float | None = None
    transitions: Counter[tuple[str, str]] = field(default_factory=Counter)
    regressions: list[Pair] = field(default_factory=list)
    improvements: list[Pair] = field(default_factory=list)
    similar_n: int = 0
    similar_difference: float | None = None
    length_r_a: float | None = None
    length_r_b: float | None = None


def compare(a_rows: Sequence[Graded], b_rows: Sequence[Graded]) -> PairedReport:
    """Every figure of B against A over their paired answers."""
    pairs, only_a, only_b = paired(a_rows, b_rows)
    found = PairedReport(pairs, only_a, only_b)
    if not pairs:
        return found
    differences = [pair.difference for pair in pairs]
    found.mean_a = sum(pair.a.headline for pair in pairs) / len(pairs)
    found.mean_b = sum(pair.b.headline for pair in pairs) / len(pairs)
    found.difference, found.interval = mean_shift(differences)
    found.wins = sum(difference > 0 for difference in differences)
    found.losses = sum(difference < 0 for difference in differences)
    found.ties = len(pairs) - found.wins - found.losses
    found.sign_p = sign_test_p(found.wins, found.losses)
    known = [pair for pair in pairs if pair.a.passed is not None and pair.b.passed is not None]
    found.a_only_passed = sum(bool(pair.a.passed) and not pair.b.passed for pair in known)
    found.b_only_passed = sum(bool(pair.b.passed) and not pair.a.passed for pair in known)
    if found.a_only_passed + found.b_only_passed:
        found.mcnemar = mcnemar_p(found.a_only_passed, found.b_only_passed)
    found.transitions = Counter((pair.a.tag or "-", pair.b.tag or "-") for pair in pairs
                                if pair.a.tag is not None or pair.b.tag is not None)
    ordered = sorted(pairs, key=lambda pair: pair.difference)
    found.regressions = [pair for pair in ordered if pair.difference < 0][:MOVES_SHOWN]
    found.improvements = [pair for pair in reversed(ordered) if pair.difference > 0][:MOVES_SHOWN]
    similar = [pair.difference for pair in pairs if _similar(len(pair.a.answer), len(pair.b.answer))]
    found.similar_n = len(similar)
    found.similar_difference = sum(similar) / len(similar) if similar else None
    found.length_r_a = correlation([len(p.a.answer) for p in pairs], [p.a.headline for p in pairs])
    found.length_r_b = correlation([len(p.b.answer) for p in pairs], [p.b.headline for p in pairs])
    return found


def _similar(one: int, other: int) -> bool:
    longer = max(one, other)
    return longer == 0 or abs(one - other) / longer < SIMILAR_LENGTH


def graded(rows: Sequence[Any]) -> list[Graded]:
    """The store's rows (bot.store.graded) as graded answers."""
    return [Graded(row.id, row.rubric_name, row.question, row.reference, row.answer, float(row.headline), row.passed,
                   row.tag, row.model_name) for row in rows]


def models_compared(rows: Sequence[Graded]) -> tuple[str, str, PairedReport] | None:
    """Of a run whose file holds several models under test: the two with most answers (A the first by name), and B
    against A; None unless two of them answered some question alike."""
    counts = Counter(row.model for row in rows if row.model)
    if len(counts) < 2:
        return None
    a, b = sorted(name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:2])
    found = compare([row for row in rows if row.model == a], [row for row in rows if row.model == b])
    return (a, b, found) if found.pairs else None


def summary_text(a: str, b: str, found: PairedReport) -> str:
    """The comparison in two lines, for a run's summary: the paired difference, wins, and pass/fail changes."""
    interval = "" if found.interval is None else f", 95% CI {found.interval[0]:+.1f} to {found.interval[1]:+.1f}"
    sign = "n/a" if found.sign_p is None else p_text(found.sign_p)
    text = (f"{b} against {a} on the {len(found.pairs)} questions both answered: paired difference "
            f"{found.difference:+.1f}{interval}; higher on {found.wins}, equal on {found.ties}, lower on "
            f"{found.losses} (sign test {sign})")
    if found.mcnemar is not None:
        text += (f"; pass/fail: {found.b_only_passed} pass only with {b}, {found.a_only_passed} only with {a} "
                 f"(McNemar {p_text(found.mcnemar)})")
    return text
