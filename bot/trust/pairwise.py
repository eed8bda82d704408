"""Which of two answers is better, from a pairwise judge's verdicts: each pair seen in both orders (consistent, or a
tie when its winner changes with the order), the position bias as a sign test over pairs, the win rate of B over A
with its interval, and for more than two models a Bradley-Terry ranking with intervals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.records import RowState
from bot.trust.stats.bradley_terry import Rated, ranking
from bot.trust.stats.intervals import score_interval
from bot.trust.stats.mcnemar import by_chance, sign_test_p

FLIP = {"A": "B", "B": "A", "tie": "tie"}
UNNAMED = ("A", "B")  # the two sides of a file that names no models
SCORE_OF_B = {"A": 0.0, "tie": 0.5, "B": 1.0}  # what a pair's outcome gives B: a win, half of a tie, or nothing


@dataclass(frozen=True)
class Shown:
    """One judgment of a pair in one order: the winner as the judge named it (A = the answer shown first)."""

    swapped: bool  # the file's answer B was shown first
    winner: str | None  # A, B or tie when scored, else None
    margin: str | None = None

    @property
    def original(self) -> str | None:
        """The winner in the file's terms (A = its answer_a), whatever order the judge saw."""
        if self.winner is None:
            return None
        return FLIP[self.winner] if self.swapped else self.winner


def shown_of(row: Any) -> Shown:
    """One order's judgment of a pair as the figures read it, from a row of the history (its status, output and
    whether B was shown first)."""
    output = row.output or {}
    scored = row.status == RowState.SCORED and "winner" in output
    return Shown(bool(row.swapped), str(output["winner"]) if scored else None,
                 output.get("margin") if scored else None)


@dataclass(frozen=True)
class JudgedPair:
    """A pair of answers to one question, with its judgments (one per order shown, scored or not)."""

    line: int | None
    question: str
    model_a: str
    model_b: str
    shown: tuple[Shown, ...]
    human: str | None = None  # what people said of the pair (A, B or tie, in the file's terms), if they did

    @property
    def winners(self) -> list[str]:
        """The file-terms winners of the orders that were scored."""
        return [winner for item in self.shown if (winner := item.original) is not None]

    @property
    def judged(self) -> bool:
        """Whether the pair has an outcome: some order was scored, or people said which answer is better."""
        return bool(self.winners) or self.human is not None

    @property
    def both(self) -> bool:
        """Whether the pair was scored in both orders."""
        return len(self.winners) >= 2 and len({item.swapped for item in self.shown if item.winner}) == 2

    @property
    def consistent(self) -> bool | None:
        """Whether both orders named the same winner; None unless both were scored."""
        return len(set(self.winners)) == 1 if self.both else None

    @property
    def position(self) -> str | None:
        """"first" when the answer shown first won in both orders, "second" when the one shown second did (either
        way the winner changed with the order); None otherwise."""
        if not self.both:
            return None
        named = {item.winner for item in self.shown if item.winner is not None}
        return {"A": "first", "B": "second"}.get(named.pop()) if len(named) == 1 else None

    @property
    def outcome(self) -> str | None:
        """The pair's winner: what people said of it, else what every scored order said, else a tie (an inconsistent
        pair); None if nobody said anything."""
        if self.human is not None:
            return self.human
        winners = set(self.winners)
        if not winners:
            return None
        return winners.pop() if len(winners) == 1 else "tie"


@dataclass
class Matchup:
    """B against A over the pairs of two models (or of the file's two columns when it names no models)."""

    a: str
    b: str
    wins: int = 0  # pairs B won
    losses: int = 0  # pairs A won
    ties: int = 0  # ties, inconsistent pairs among them
    inconsistent: int = 0
    win_rate: float | None = None  # B's, ties split
    interval: tuple[float, float] | None = None
    sign_p: float | None = None

    @property
    def pairs(self) -> int:
        """Pairs with an outcome."""
        return self.wins + self.losses + self.ties


@dataclass
class PairwiseReport:
    """Every figure of a pairwise run."""

    pairs: int = 0  # pairs of the file that reached a judge (malformed rows are not pairs)
    judged: int = 0  # pairs with an outcome: a winner, or a tie (an inconsistent pair is one)
    tied: int = 0  # of them, ties
    swapped: bool = True  # judged in both orders (else once, half of them with B shown first)
    both: int = 0  # pairs scored in both orders
    consistent: int = 0
    inconsistent: list[JudgedPair] = field(default_factory=list)
    shown_first: Counter[str] = field(default_factory=Counter)  # scored judgments by the position named: A, B, tie
    # Pairs whose answer shown first won in both orders, and those whose answer shown second did (judged in both
    # orders); judged once each (--no-swap), the pairs whose one judgment named the first answer, and the second
    positions: Counter[str] = field(default_factory=Counter)
    settled: int = 0  # inconsistent pairs people said the winner of
    # Of the pairs people labeled and the judge scored in both orders: the labels, and how many of them the judge's
    # winner matched with A shown first, and with B shown first
    labeled: int = 0
    right_first: int = 0
    right_second: int = 0
    first_p: float | None = None  # sign test over pairs: first-first against second-second
    matchups: list[Matchup] = field(default_factory=list)
    ranking: list[Rated] = field(default_factory=list)

    @property
    def consistency(self) -> float | None:
        """Share of the pairs scored in both orders whose winner did not change with the order."""
        return self.consistent / self.both if self.both else None

    @property
    def first_rate(self) -> float | None:
        """Share of the judgments naming a winner that named the answer shown first."""
        decisive = self.shown_first["A"] + self.shown_first["B"]
        return self.shown_first["A"] / decisive if decisive else None

    @property
    def position_bias(self) -> str | None:
        """"first" or "second" when more pairs went to that position in both orders than chance allows (the sign
        test over pairs, read as printed), else None."""
        if by_chance(self.first_p) or self.positions["first"] == self.positions["second"]:
            return None
        return "first" if self.positions["first"] > self.positions["second"] else "second"


def pair_of(rows: Sequence[Any], human: str | None = None) -> JudgedPair:
    """A pair from the rows of its orders in the history, with what people said of it."""
    first = rows[0]
    return JudgedPair(first.row_number, first.question, first.model_name or UNNAMED[0], first.model_b or UNNAMED[1],
                      tuple(shown_of(row) for row in rows), human)


def pairs_of(rows: Sequence[Any], people: Mapping[str, str] | None = None) -> list[JudgedPair]:
    """The pairs judged in some runs, from their rows of the history (each order of a pair is a row, with its case
    key), each pair once: its orders grouped by the pair's case and models, whichever runs they came with; with what
    `people` said of each case, in the order of the rows."""
    grouped: dict[tuple[str, str | None, str | None], list[Any]] = {}
    for row in rows:
        grouped.setdefault((row.case_key, row.model_name, row.model_b), []).append(row)
    return [pair_of(orders, (people or {}).get(orders[0].case_key)) for orders in grouped.values()]


def people_winner(said: Sequence[str]) -> str | None:
    """What people said of a pair, each once: the winner most of them named, a tie when they split evenly."""
    counts = Counter(winner for winner in said if winner in SCORE_OF_B)
    if not counts:
        return None
    (top, most), *rest = counts.most_common()
    return "tie" if rest and rest[0][1] == most else top


def report(pairs: Sequence[JudgedPair], *, swapped: bool = True) -> PairwiseReport:
    """The figures of a pairwise run's pairs."""
    found = PairwiseReport(pairs=len(pairs), swapped=swapped)
    for pair in pairs:
        found.shown_first.update(item.winner for item in pair.shown if item.winner is not None)
        if pair.both:
            found.both += 1
            if pair.consistent:
                found.consistent += 1
            else:
                found.inconsistent.append(pair)
                found.settled += pair.human is not None
            if pair.human is not None:
                found.labeled += 1
                said = {item.swapped: item.original for item in pair.shown if item.winner is not None}
                found.right_first += said.get(False) == pair.human
                found.right_second += said.get(True) == pair.human
    found.judged = sum(pair.judged for pair in pairs)
    found.tied = sum(pair.judged and (pair.outcome or "tie") == "tie" for pair in pairs)
    for pair in pairs:
        if swapped and pair.position is not None:
            found.positions[pair.position] += 1
        elif not swapped and (named := [item.winner for item in pair.shown if item.winner in ("A", "B")]):
            found.positions["first" if named[0] == "A" else "second"] += 1
    found.first_p = sign_test_p(found.positions["first"], found.positions["second"])
    found.matchups = matchups([pair for pair in pairs if pair.judged])
    models = {name for pair in pairs if pair.judged for name in (pair.model_a, pair.model_b)}
    if len(models) > 2:
        found.ranking = ranking([(pair.model_a, pair.model_b, SCORE_OF_B[pair.outcome or "tie"])
                                 for pair in pairs if pair.judged])
    return found


def matchups(pairs: Sequence[JudgedPair]) -> list[Matchup]:
    """B against A for each two models that met, in the orientation the file first gave them (a pair that gives
    them the other way round is turned round): B's win rate (a tie counts half) with its Wilson-type score interval
    over the pairs, and the exact sign test of wins against losses."""
    found: dict[frozenset[str], Matchup] = {}
    scores: dict[frozenset[str], list[float]] = {}
    for pair in pairs:
        key = frozenset((pair.model_a, pair.model_b))
        match = found.get(key) or found.setdefault(key, Matchup(pair.model_a, pair.model_b))
        outcome = pair.outcome or "tie"
        if (match.a, match.b) != (pair.model_a, pair.model_b):
            outcome = FLIP[outcome]
        match.wins += outcome == "B"
        match.losses += outcome == "A"
        match.ties += outcome == "tie"
        match.inconsistent += pair.consistent is False
        scores.setdefault(key, []).append(SCORE_OF_B[outcome])
    for key, match in found.items():
        match.win_rate, match.interval = sum(scores[key]) / len(scores[key]), score_interval(scores[key])
        match.sign_p = sign_test_p(match.wins, match.losses)
    return list(found.values())
