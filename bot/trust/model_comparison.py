"""Two models under test compared question by question (is B better than A?), one rubric at a time, and their figures."""

from __future__ import annotations

import heapq
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bot.figures import plural
from bot.records import RowState
from bot.trust.stats.intervals import MeanInterval, mean_interval
from bot.trust.stats.mcnemar import mcnemar_p, p_text, sign_test_p

MOVES_SHOWN = 5
SIMILAR_LENGTH = 0.2  # answers whose lengths differ by less than this share are "of similar length"
DIFFERENCES = (-100.0, 100.0)  # where a difference of two 0-100 headlines lies

Key = tuple[str, str, str]


class Graded(NamedTuple):
    """One verdict of an answer as a comparison reads it: scored, or a judge's failure (invalid, error). A named
    tuple: a comparison of two 5,000-row sides makes 10,000 of them, seven times faster than a frozen dataclass."""

    judgment_id: int
    rubric: str
    question: str
    reference: str
    answer: str
    headline: float | None
    passed: bool | None
    tag: str | None
    model: str | None = None
    status: str = RowState.SCORED
    judge: str = ""
    version: str = ""  # the rubric's version
    rubric_hash: str = ""  # and its text

    @property
    def scored(self) -> bool:
        """Whether the verdict has a headline to compare."""
        return self.status == RowState.SCORED and self.headline is not None


def key_of(row: Graded, spaced: dict[str, str] | None = None) -> Key:
    """What pairs two answers: the rubric, and the question and reference with their whitespace normalised (each
    text once, kept in `spaced` when given)."""
    if spaced is None:
        return row.rubric, " ".join(row.question.split()), " ".join(row.reference.split())
    question, reference = spaced.get(row.question), spaced.get(row.reference)
    if question is None:
        question = spaced[row.question] = " ".join(row.question.split())
    if reference is None:
        reference = spaced[row.reference] = " ".join(row.reference.split())
    return row.rubric, question, reference


@dataclass(frozen=True)
class Pair:
    """A's and B's scored answers to one question."""

    a: Graded
    b: Graded

    @property
    def difference(self) -> float:
        """B's headline less A's."""
        return (self.b.headline or 0.0) - (self.a.headline or 0.0)


@dataclass
class ModelComparison:
    """The paired comparison of B against A on one rubric: how the questions were matched, and every figure over
    the pairs (each question once: the questions both sides have a score for)."""

    rubric: str
    pairs: list[Pair] = field(default_factory=list)
    only_a: list[Graded] = field(default_factory=list)  # questions B never answered
    only_b: list[Graded] = field(default_factory=list)
    unscored_a: list[Graded] = field(default_factory=list)  # questions both answered, A's verdict a judge's failure
    unscored_b: list[Graded] = field(default_factory=list)
    repeated_a: int = 0  # questions A answered more than once: its latest scored answer counts
    repeated_b: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    difference: MeanInterval | None = None  # B less A, with its paired t interval
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
    similar: MeanInterval | None = None  # the paired difference over the pairs of similar length
    length_r_a: float | None = None
    length_r_b: float | None = None
    judges_a: Counter[str] = field(default_factory=Counter)  # pairs by the judge model of A's verdict
    judges_b: Counter[str] = field(default_factory=Counter)
    versions_a: Counter[str] = field(default_factory=Counter)  # pairs by the rubric version of A's verdict
    versions_b: Counter[str] = field(default_factory=Counter)
    other_judge: int = 0  # pairs whose two verdicts came from different judge models
    other_version: int = 0  # or different texts of the rubric


def chosen(rows: Sequence[Graded], spaced: dict[str, str] | None = None) -> tuple[dict[Key, Graded], int]:
    """Each question's verdict that counts on one side (the latest scored one, else the latest failure: a judge's
    failure never takes a score's place), and how many questions the side answered more than once. `spaced` keeps
    each text's whitespace normalised (`key_of`), for texts both sides ask."""
    found: dict[Key, Graded] = {}
    seen: dict[Key, int] = {}
    spaced = {} if spaced is None else spaced
    for row in sorted(rows, key=_number):
        key = key_of(row, spaced)
        seen[key] = seen.get(key, 0) + 1
        kept = found.get(key)
        if kept is None or row.scored or not kept.scored:
            found[key] = row
    return found, sum(count > 1 for count in seen.values())


def _number(row: Graded) -> int:
    return row.judgment_id


def compare(a_rows: Sequence[Graded], b_rows: Sequence[Graded]) -> list[ModelComparison]:
    """B against A, one report per rubric either side was graded with (answers graded with different rubrics are
    never paired or pooled), by rubric name."""
    rubrics = sorted({row.rubric for row in (*a_rows, *b_rows)})
    return [compare_one(rubric, [row for row in a_rows if row.rubric == rubric],
                        [row for row in b_rows if row.rubric == rubric]) for rubric in rubrics]


def compare_one(rubric: str, a_rows: Sequence[Graded], b_rows: Sequence[Graded]) -> ModelComparison:
    """Every figure of B against A over the questions of one rubric both have a score for."""
    spaced: dict[str, str] = {}  # the two sides ask the same questions: each text normalised once
    side_a, repeated_a = chosen(a_rows, spaced)
    side_b, repeated_b = chosen(b_rows, spaced)
    found = ModelComparison(rubric, repeated_a=repeated_a, repeated_b=repeated_b)
    found.only_a = sorted((row for key, row in side_a.items() if key not in side_b), key=lambda row: row.judgment_id)
    found.only_b = sorted((row for key, row in side_b.items() if key not in side_a), key=lambda row: row.judgment_id)
    both = sorted(key for key in side_a if key in side_b)  # one order whichever side is A: mirror images
    found.unscored_a = [side_a[key] for key in both if not side_a[key].scored]
    found.unscored_b = [side_b[key] for key in both if not side_b[key].scored]
    paired = [key for key in both if side_a[key].scored and side_b[key].scored]
    found.pairs = [Pair(side_a[key], side_b[key]) for key in paired]
    if found.pairs:
        _figures(found, paired)
    return found


def _figures(found: ModelComparison, keys: Sequence[Key]) -> None:
    """Every figure over `found.pairs` (`keys`: each pair's key, in the same order)."""
    pairs = found.pairs
    differences = [pair.difference for pair in pairs]
    found.mean_a = statistics.fmean(pair.a.headline or 0.0 for pair in pairs)
    found.mean_b = statistics.fmean(pair.b.headline or 0.0 for pair in pairs)
    found.difference = mean_interval(differences, bounds=DIFFERENCES)
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
    # The biggest moves, ties in question order: (difference, key) is unique, so nsmallest picks as sorting all would.
    moves = list(zip(differences, keys, pairs, strict=True))
    found.regressions = [pair for _, _, pair in heapq.nsmallest(
        MOVES_SHOWN, (move for move in moves if move[0] < 0), key=lambda move: (move[0], move[1]))]
    found.improvements = [pair for _, _, pair in heapq.nsmallest(
        MOVES_SHOWN, (move for move in moves if move[0] > 0), key=lambda move: (-move[0], move[1]))]
    found.similar = mean_interval([pair.difference for pair in pairs
                                   if _similar(len(pair.a.answer), len(pair.b.answer))], bounds=DIFFERENCES)
    found.length_r_a = correlation([len(p.a.answer) for p in pairs], [p.a.headline or 0.0 for p in pairs])
    found.length_r_b = correlation([len(p.b.answer) for p in pairs], [p.b.headline or 0.0 for p in pairs])
    found.judges_a = Counter(pair.a.judge for pair in pairs)
    found.judges_b = Counter(pair.b.judge for pair in pairs)
    labels = _version_labels([row for pair in pairs for row in (pair.a, pair.b)])
    found.versions_a = Counter(labels[(pair.a.version, pair.a.rubric_hash)] for pair in pairs)
    found.versions_b = Counter(labels[(pair.b.version, pair.b.rubric_hash)] for pair in pairs)
    found.other_judge = sum(pair.a.judge != pair.b.judge for pair in pairs)
    found.other_version = sum((pair.a.version, pair.a.rubric_hash) != (pair.b.version, pair.b.rubric_hash)
                              for pair in pairs)


def _version_labels(rows: Sequence[Graded]) -> dict[tuple[str, str], str]:
    """How each (version, text) of the rubric reads: "1.0", or "1.0 (3f2a1c9)" where one version had several texts."""
    texts: dict[str, set[str]] = {}
    for row in rows:
        texts.setdefault(row.version, set()).add(row.rubric_hash)
    return {(version, text): version if len(found) == 1 else f"{version} ({text[:7]})"
            for version, found in texts.items() for text in found}


def _similar(one: int, other: int) -> bool:
    longer = max(one, other)
    return longer == 0 or abs(one - other) / longer < SIMILAR_LENGTH


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than 3 values or no spread on a side."""
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return statistics.correlation(xs, ys)


def graded(rows: Sequence[Any]) -> list[Graded]:
    """The store's rows (bot.store.reads.graded, of its COLUMNS) as graded answers, read by position."""
    return [Graded(number, rubric, question, reference, answer, None if headline is None else float(headline),
                   passed, tag, model, status, judge, version, text)
            for number, status, rubric, version, text, judge, question, reference, answer, headline, passed, tag,
            model, _ in rows]


def models_compared(rows: Sequence[Graded]) -> tuple[str, str, ModelComparison] | None:
    """Of a run whose file holds several models under test: the two with most answers (A the first by name), and B
    against A; None unless both have a score on some question."""
    counts = Counter(row.model for row in rows if row.model)
    if len(counts) < 2:
        return None
    a, b = sorted(name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:2])
    reports = compare([row for row in rows if row.model == a], [row for row in rows if row.model == b])
    best = max(reports, key=lambda found: len(found.pairs))  # a run has one rubric
    return (a, b, best) if best.pairs else None


def unscored_text(name: str, rows: Sequence[Graded]) -> str:
    """"2 not scored for bot-v1 (invalid: 1, error: 1)": questions both answered that the judge failed on one side."""
    kinds = Counter(row.status for row in rows)
    return (f"{len(rows)} not scored for {name} (invalid: {kinds[RowState.INVALID]}, "
            f"error: {kinds[RowState.ERROR]})")


def judges_text(a: str, b: str, found: ModelComparison) -> str:
    """Who judged each side's verdicts of the pairs: "judged by gpt-x on both sides", else each side's judges."""
    if set(found.judges_a) == set(found.judges_b) and len(found.judges_a) == 1:
        return f"judged by {next(iter(found.judges_a))} on both sides"
    return f"judged by: {a} {_counted(found.judges_a)}; {b} {_counted(found.judges_b)}"


def warnings(a: str, b: str, found: ModelComparison) -> list[str]:
    """What the comparison mixes, as sentences: pairs whose two verdicts came from different judges, or from
    different texts of the rubric; a difference there may be the judges' or the rubric's, not the models'."""
    said = []
    n = len(found.pairs)
    if found.other_judge:
        said.append(f"on {found.other_judge} of the {n} pairs the two answers were judged by different judges: "
                    "part of the difference may be the judges', not the models'")
    if found.other_version:
        said.append(f"on {found.other_version} of the {n} pairs the two answers were graded with different versions "
                    f"of rubric {found.rubric} ({a}: {_counted(found.versions_a, 'version {} on {}')}; {b}: "
                    f"{_counted(found.versions_b, 'version {} on {}')}): part of the difference may be the rubric's, "
                    "not the models'")
    return said


def _counted(counts: Counter[str], form: str = "{} ({})") -> str:
    return ", ".join(form.format(name, count) for name, count in sorted(counts.items(),
                                                                       key=lambda item: (-item[1], item[0])))


def summary_text(a: str, b: str, found: ModelComparison) -> str:
    """The comparison in two lines, for a run's summary and the Slack card: the paired difference, wins, and
    pass/fail changes."""
    difference = "none" if found.difference is None else found.difference.text()
    sign = "n/a" if found.sign_p is None else p_text(found.sign_p)
    n = len(found.pairs)
    text = (f"{b} against {a} on the {n} {plural(n, 'question')} both have a score for (rubric {found.rubric}): "
            f"paired difference {difference}; higher on {found.wins}, equal on {found.ties}, lower on {found.losses} "
            f"(sign test {sign})")
    if found.mcnemar is not None:
        text += (f"; pass/fail: {found.b_only_passed} pass only with {b}, {found.a_only_passed} only with {a} "
                 f"(McNemar {p_text(found.mcnemar)})")
    if left_out := left_out_text(a, b, found):
        text += f"; left out: {left_out}"
    return text


def left_out_text(a: str, b: str, found: ModelComparison) -> str:
    """The questions not paired, by why: "1 answered by bot-v1 only, 2 not scored for bot-v2 (invalid: 1, error:
    1)"; empty when none was left out."""
    parts = [f"{len(rows)} answered by {name} only" for name, rows in ((a, found.only_a), (b, found.only_b)) if rows]
    parts += [unscored_text(name, rows) for name, rows in ((a, found.unscored_a), (b, found.unscored_b)) if rows]
    return ", ".join(parts)
