"""`judgebot compare` as a `--json` document: B against A, paired on the same questions, one rubric at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.cli.json_output import Document, Interval

if TYPE_CHECKING:
    from bot.trust.model_comparison import Graded, ModelComparison, Pair
    from bot.trust.stats.intervals import MeanInterval


class MeanDifference(Document):
    """The mean of paired differences (B's headline less A's) with its 95 % paired t interval."""

    mean: float
    """The mean difference, in headline points."""
    interval: Interval | None
    """Its 95 % interval [low, high]; null from one pair, from pairs that all differ alike, or under the pairs an
    interval needs."""
    pairs: int
    """The pairs it is over."""

    @classmethod
    def of(cls, found: MeanInterval | None) -> MeanDifference | None:
        """A mean interval, or None."""
        return None if found is None else cls(mean=found.mean, interval=found.interval, pairs=found.n)


class TagMove(Document):
    """Questions whose tag went from one to another."""

    a_tag: str
    """A's tag ("-": none)."""
    b_tag: str
    """B's tag."""
    questions: int
    """Questions that moved so."""


class Move(Document):
    """One question's headline on both sides."""

    question: str
    """The question."""
    a_headline: float
    """A's headline."""
    b_headline: float
    """B's headline."""
    difference: float
    """B's less A's."""

    @classmethod
    def of(cls, pair: Pair) -> Move:
        """A pair of the comparison."""
        return cls(question=pair.a.question, a_headline=pair.a.headline or 0.0, b_headline=pair.b.headline or 0.0,
                   difference=pair.difference)


class LeftOut(Document):
    """A question left out of the pairs."""

    question: str
    """The question."""
    judgment_id: int
    """The verdict's judgment id."""
    status: str
    """Its status: scored, or invalid or error where the judge failed."""


def _left(rows: Sequence[Graded]) -> list[LeftOut]:
    return [LeftOut(question=row.question, judgment_id=row.judgment_id, status=row.status) for row in rows]


class RubricComparison(Document):
    """B against A on one rubric, over the questions both have a score for (each question once)."""

    rubric: str
    """The rubric's name."""
    paired_questions: int
    """Questions with a score on both sides: the pairs."""
    only_a: list[LeftOut]
    """Questions only A answered."""
    only_b: list[LeftOut]
    """Questions only B answered."""
    unscored_a: list[LeftOut]
    """Questions both answered whose A verdict is a judge's failure."""
    unscored_b: list[LeftOut]
    """Questions both answered whose B verdict is a judge's failure."""
    repeated_a_questions: int
    """Questions A answered more than once: its latest scored answer counts."""
    repeated_b_questions: int
    """Questions B answered more than once."""
    a_mean_headline: float | None
    """A's mean headline over the pairs."""
    b_mean_headline: float | None
    """B's mean headline over the pairs."""
    difference: MeanDifference | None
    """The paired difference, B less A; null without pairs."""
    b_higher_questions: int
    """Pairs where B scored higher."""
    equal_questions: int
    """Pairs where both scored the same."""
    b_lower_questions: int
    """Pairs where B scored lower."""
    sign_test_p: float | None
    """The exact sign test's p over the pairs that differ."""
    b_only_passed_questions: int
    """Pairs only B passes."""
    a_only_passed_questions: int
    """Pairs only A passes."""
    mcnemar_p: float | None
    """McNemar's exact p over the pairs only one side passes; null when there are none."""
    tag_moves: list[TagMove]
    """How tags moved from A to B, most questions first."""
    regressions: list[Move]
    """The biggest drops, B against A."""
    improvements: list[Move]
    """The biggest gains."""
    similar_length_difference: MeanDifference | None
    """The paired difference over the pairs whose answers are of similar length (within 20 %)."""
    a_length_r: float | None
    """Pearson's r of A's headline against its answer's length."""
    b_length_r: float | None
    """Pearson's r of B's headline against its answer's length."""
    a_pairs_by_judge_model: dict[str, int]
    """Pairs per judge model of A's verdict."""
    b_pairs_by_judge_model: dict[str, int]
    """Pairs per judge model of B's verdict."""
    other_judge_pairs: int
    """Pairs whose two verdicts came from different judge models."""
    other_rubric_version_pairs: int
    """Pairs whose two verdicts came from different texts of the rubric."""

    @classmethod
    def of(cls, found: ModelComparison) -> RubricComparison:
        """One rubric's comparison."""
        moves = sorted(found.transitions.items(), key=lambda item: (-item[1], item[0]))
        return cls(
            rubric=found.rubric, paired_questions=len(found.pairs), only_a=_left(found.only_a),
            only_b=_left(found.only_b), unscored_a=_left(found.unscored_a), unscored_b=_left(found.unscored_b),
            repeated_a_questions=found.repeated_a, repeated_b_questions=found.repeated_b,
            a_mean_headline=found.mean_a, b_mean_headline=found.mean_b, difference=MeanDifference.of(found.difference),
            b_higher_questions=found.wins, equal_questions=found.ties, b_lower_questions=found.losses,
            sign_test_p=found.sign_p, b_only_passed_questions=found.b_only_passed,
            a_only_passed_questions=found.a_only_passed, mcnemar_p=found.mcnemar,
            tag_moves=[TagMove(a_tag=before, b_tag=after, questions=count) for (before, after), count in moves],
            regressions=[Move.of(pair) for pair in found.regressions],
            improvements=[Move.of(pair) for pair in found.improvements],
            similar_length_difference=MeanDifference.of(found.similar), a_length_r=found.length_r_a,
            b_length_r=found.length_r_b, a_pairs_by_judge_model=dict(found.judges_a),
            b_pairs_by_judge_model=dict(found.judges_b), other_judge_pairs=found.other_judge,
            other_rubric_version_pairs=found.other_version)


class CompareDocument(Document):
    """`judgebot compare --json`: is B better than A? Two runs, or two models under test, paired on the same
    questions."""

    a: str
    """Side A: "run 12", or a model's name."""
    b: str
    """Side B."""
    rubrics: list[RubricComparison]
    """One comparison per rubric the answers were graded with (never pooled)."""

    @classmethod
    def of(cls, a: str, b: str, reports: Sequence[ModelComparison]) -> CompareDocument:
        """The comparison of every rubric."""
        return cls(a=a, b=b, rubrics=[RubricComparison.of(found) for found in reports])
