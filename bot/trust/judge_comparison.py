"""Two judges compared: each against people's labels on the same cases (agreement, kappa, McNemar's test between them
over cases), and on a sample of recent judgments against each other (pass/fail flips, the tag transitions, the
headline's shift with its t interval)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.csvfiles.rows import CsvRow
from bot.records import RowState
from bot.rubric import Rubric
from bot.store import Judgment
from bot.trust.calibration import Calibration, wilson
from bot.trust.drift import CheckCase, case_of, check_figures
from bot.trust.labels import complete
from bot.trust.stats.intervals import MEAN_MIN_VALUES, mean_interval
from bot.trust.stats.kappa import Kappa
from bot.trust.stats.mcnemar import majority, mcnemar_p, p_text

FLIPS_SHOWN = 10  # flipped rows listed


@dataclass(frozen=True)
class Flip:
    """A row of the history sample the two judges pass or fail differently."""

    line: int
    question: str
    model: str | None
    old: Judgment
    new: Judgment


@dataclass
class LabeledSide:
    """Both judges against people's labels, on the cases each scored: figures, and the cases only one got right."""

    old: Calibration
    new: Calibration
    paired: int = 0  # distinct cases both scored that people decided pass or fail: McNemar's pairs
    new_right: int = 0  # cases the candidate gets right by people's majority, the judge in use does not
    old_right: int = 0
    split: int = 0  # cases people split evenly on: out of McNemar's test
    unscored: int = 0  # labeled rows one of them gave no verdict

    @property
    def p(self) -> float | None:
        """McNemar's exact p of the two judges' agreement with people, over the cases only one of them got right."""
        return mcnemar_p(self.new_right, self.old_right) if self.new_right or self.old_right else None

    def mcnemar_text(self) -> str:
        """McNemar's exact test over the cases, by people's majority: "McNemar p = 0.12, over 12 cases (1 split
        evenly, left out)"."""
        p = "n/a (they never differ)" if self.p is None else p_text(self.p)
        split = f" ({self.split} split evenly, left out)" if self.split else ""
        return f"McNemar {p}, over {self.paired} cases{split}"


@dataclass
class HistorySide:
    """The two judges on the same recent judgments: how often they agree, how verdicts move, how far headlines shift."""

    n: int = 0  # rows both scored
    pass_n: int = 0  # of them, rows with pass/fail from both
    same_pass: int = 0
    to_fail: int = 0  # the judge in use passed, the candidate fails
    to_pass: int = 0
    kappa: Kappa = field(default_factory=Kappa)
    tags: Counter[tuple[str, str]] = field(default_factory=Counter)  # (old tag, new tag)
    shift: float | None = None  # the candidate's mean headline minus the judge in use's, in points
    shift_interval: tuple[float, float] | None = None
    flips: list[Flip] = field(default_factory=list)
    unscored: int = 0

    @property
    def agreement(self) -> float | None:
        return self.same_pass / self.pass_n if self.pass_n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.same_pass, self.pass_n)

    def shift_text(self) -> str:
        """The mean headline shift with its t interval, or why it has none: "+4.2 points, 95% CI -1.0 to +9.4
        (t interval over rows)"."""
        if self.shift is None:
            return "n/a (no headline from both)"
        if self.shift_interval is not None:
            low, high = self.shift_interval
            return f"{self.shift:+.1f} points, 95% CI {low:+.1f} to {high:+.1f} (t interval over rows)"
        why = f"under {MEAN_MIN_VALUES} rows" if self.n < MEAN_MIN_VALUES else "every row moved alike"
        return f"{self.shift:+.1f} points (no interval {why})"


def scored(judgment: Judgment | None) -> bool:
    return judgment is not None and judgment.status == RowState.SCORED


def labeled_side(cases: Sequence[CheckCase], old: dict[int, Judgment], new: dict[int, Judgment],
                 rubric: Rubric) -> LabeledSide:
    """Both judges against the labels of `cases` (their rows numbered as the runs numbered them), on the cases both
    scored, so the two sets of figures rest on the same labels. McNemar's test counts cases, not labels: each case
    is what most of its people said (an even split leaves it out) against each judge's verdict on it."""
    both = [case for case in cases if scored(old.get(case.row.line)) and scored(new.get(case.row.line))]
    found = LabeledSide(check_figures(both, old, rubric)[0], check_figures(both, new, rubric)[0],
                        unscored=len(cases) - len(both))
    said: dict[str, list[tuple[bool, bool, bool]]] = {}  # case: (person, judge in use, candidate) per label
    for case in both:
        human = complete(case.human, rubric).passed
        was, now = old[case.row.line].passed, new[case.row.line].passed
        if human is not None and was is not None and now is not None:
            said.setdefault(case_of(case), []).append((human, was, now))
    for labels in said.values():
        human, was, now = (majority(label[side] for label in labels) for side in range(3))
        if human is None or was is None or now is None:
            found.split += 1
            continue
        found.paired += 1
        found.new_right += now == human and was != human
        found.old_right += was == human and now != human
    return found


def history_side(rows: Sequence[CsvRow], old: dict[int, Judgment], new: dict[int, Judgment]) -> HistorySide:
    """The two judges against each other on the history sample's rows."""
    found = HistorySide()
    passes: Counter[tuple[bool, bool]] = Counter()
    shifts: list[float] = []
    for row in rows:
        was, now = old.get(row.line), new.get(row.line)
        if was is None or now is None or not scored(was) or not scored(now):
            found.unscored += 1
            continue
        found.n += 1
        if was.passed is not None and now.passed is not None:
            passes[(was.passed, now.passed)] += 1
            if was.passed != now.passed:
                found.flips.append(Flip(row.line, row.question, row.model, was, now))
        if was.tag is not None or now.tag is not None:
            found.tags[(was.tag or "(none)", now.tag or "(none)")] += 1
        if was.headline is not None and now.headline is not None:
            shifts.append(float(now.headline) - float(was.headline))
    found.same_pass = passes[(True, True)] + passes[(False, False)]
    found.to_fail, found.to_pass = passes[(True, False)], passes[(False, True)]
    found.pass_n = sum(passes.values())
    found.kappa = Kappa.counted(passes, names={True: "pass", False: "fail"}) if passes else Kappa()
    shift = mean_interval(shifts, at_least=MEAN_MIN_VALUES)
    found.shift, found.shift_interval = (None, None) if shift is None else (shift.mean, shift.interval)
    found.flips.sort(key=lambda flip: abs(float(flip.new.headline or 0) - float(flip.old.headline or 0)), reverse=True)
    return found


