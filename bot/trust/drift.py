"""The drift check: labeled rows judged again by today's judge, its agreement with the labels beside that of the
judges that made the labeled verdicts, and the gate a CI job holds it to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bot.csvfiles.reading import open_csv
from bot.csvfiles.results import restore
from bot.csvfiles.rows import CsvRow, MalformedRow
from bot.errors import UsageError
from bot.figures import percent, percents_apart
from bot.records import RowState, context_of, context_text
from bot.rubric import Rubric
from bot.store import Judgment, Store, utcnow
from bot.trust.calibration import Calibration, LabeledVerdict, calibrate
from bot.trust.calibration_texts import agreement_text
from bot.trust.cases import labeled_cases
from bot.trust.labels import (
    FALSE_WORDS,
    TRUE_WORDS,
    HumanValues,
    ambiguity_text,
    ambiguous_columns,
    complete,
    label_columns,
    meant_labels,
    read_label,
    repeated_columns,
    tag_order,
)

MIN_AGREEMENT = 0.8  # the gate when --min-agreement does not say
MIN_LABELS = 20  # distinct labeled cases a check needs before its figures say anything (--min-labels)


@dataclass
class CheckCase:
    """A labeled row to judge again: its texts, the person's label, and what the original judge gave, when known."""

    row: CsvRow
    human: HumanValues
    original: tuple[bool | None, str | None, str] | None  # (passed, tag, judge model)
    note: str | None = None  # what the person wrote with their label, when the history keeps it


@dataclass
class FileCases:
    """The labeled rows a labels file holds, its human_ columns that name no field (or several), and the rows left
    out (line, whether its row was malformed or its label unreadable, why), in file order."""

    cases: list[CheckCase] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    meant: dict[str, str] = field(default_factory=dict)  # {an unknown column: the label column it nearly spells}
    repeated: list[tuple[str, str]] = field(default_factory=list)  # (a column not read, the one read for its label)
    ambiguous: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (a column not read, fields it fits)
    left_out: list[tuple[int, bool, str]] = field(default_factory=list)


def cases_from_history(store: Store, rubric: Rubric, channel_id: str | None) -> list[CheckCase]:
    """The labeled judgments of a channel (None: every one) as rows to judge again, each with what its judge gave
    and the note its person wrote."""
    cases = []
    for line, case in enumerate(labeled_cases(store, rubric, channel_id), start=1):
        judgment = case.judgment
        row = CsvRow(line=line, question=judgment.question, reference=judgment.reference, answer=judgment.answer,
                     model=judgment.model_name, cells={},
                     context=context_of(judgment.context) if rubric.uses_context else None)
        cases.append(CheckCase(row, case.human, (judgment.passed, judgment.tag, judgment.judge_model), case.note))
    return cases


def cases_from_file(path: Path, rubric: Rubric) -> FileCases:
    """The labeled rows of a CSV with human_ columns (such as `labels export` writes); rows without a label are
    skipped, rows that cannot be read are left out with the reason. UsageError when it has no label column."""
    source = open_csv(path, context=rubric.uses_context)  # a rubric that reads context needs each row's passages
    columns, unknown = label_columns(source.headers, rubric)
    if not columns and (ambiguous := ambiguous_columns(source.headers, rubric)):
        raise UsageError(f"{path}: {ambiguity_text(*ambiguous[0])}")
    meant = meant_labels(unknown, rubric)
    if not columns:
        guess = " or ".join(f"{written} for {header}" for header, written in meant.items())
        raise UsageError(f"{path} has no human_pass or human_<field> column for {rubric.name}, so it holds no labels"
                         + (f" (did you mean {guess}?)" if guess else "")
                         + "; `judgebot labels export` writes such a file")
    found = FileCases(unknown=unknown, meant=meant, repeated=repeated_columns(source.headers, rubric),
                      ambiguous=ambiguous_columns(source.headers, rubric))
    knows_original = any(header in source.headers for header in ("judge_pass", "judge_tag"))
    for row in source:
        if isinstance(row, MalformedRow):
            found.left_out.append((row.line, True, row.reason))
            continue
        cells = {header: restore(cell) for header, cell in row.cells.items()}
        try:
            human = read_label(cells, columns, rubric)
        except ValueError as err:
            found.left_out.append((row.line, False, str(err)))
            continue
        if human.empty:
            continue
        texts = CsvRow(line=row.line, question=restore(row.question), reference=restore(row.reference),
                       answer=restore(row.answer), model=row.model, cells={},
                       context=None if row.context is None else [restore(passage) for passage in row.context])
        found.cases.append(CheckCase(texts, human, original_of(cells) if knows_original else None))
    return found


def original_of(cells: dict[str, str]) -> tuple[bool | None, str | None, str]:
    """What the judge of a labeled verdict gave, from the judge_pass, judge_tag and judge_model columns."""
    word = (cells.get("judge_pass") or "").strip().lower()
    passed = True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
    return passed, (cells.get("judge_tag") or "").strip() or None, (cells.get("judge_model") or "").strip()


def check_figures(cases: list[CheckCase], judged: dict[int, Judgment],
                  rubric: Rubric) -> tuple[Calibration, Calibration | None]:
    """Today's judge against the labels, and the original judges against the same labels when the cases say."""
    now = utcnow()
    current: list[LabeledVerdict] = []
    original: list[LabeledVerdict] = []
    for case in cases:
        judgment = judged.get(case.row.line)
        scored = judgment is not None and judgment.status == RowState.SCORED
        # What the person's own values say: both judges are held to the same label, and neither fills it in.
        human = complete(case.human, rubric)
        if judgment is not None and scored:
            current.append(verdict_pair(judgment.passed, judgment.tag, judgment.judge_model, human.passed, human.tag,
                                        now, judgment.rubric_hash, case_of(case)))
        if case.original is not None:
            passed, tag, model = case.original
            original.append(verdict_pair(passed, tag, model or "an unnamed judge", human.passed, human.tag, now, "",
                                         case_of(case)))
    tags = tag_order(rubric)
    return calibrate(current, tags=tags), calibrate(original, tags=tags) if original else None


def case_of(case: CheckCase) -> str:
    """The case a labeled row is of, by its texts and passages: several people's labels of it are resampled
    together."""
    return "\x1f".join((case.row.question, case.row.reference, case.row.answer, context_text(case.row.context) or ""))


def case_count(cases: Sequence[CheckCase]) -> int:
    """How many distinct cases labeled rows are of: several people's labels of one case count once."""
    return len({case_of(case) for case in cases})


def verdict_pair(judge_passed: bool | None, judge_tag: str | None, judge_model: str, human_passed: bool | None,
                 human_tag: str | None, at: datetime, rubric_hash: str, case: str | None = None) -> LabeledVerdict:
    """One (judge, person) pair as calibration reads it."""
    return LabeledVerdict(judge_passed=judge_passed, judge_tag=judge_tag, human_passed=human_passed,
                          human_tag=human_tag, labeled_at=at, judge_model=judge_model, rubric_hash=rubric_hash,
                          case=case)


@dataclass(frozen=True)
class Condition:
    """One condition of the gate: what it asks, what was found, and whether that meets it."""

    asked: str
    found: str
    met: bool


@dataclass(frozen=True)
class Gate:
    """What a drift check holds today's judge to: agreement on evidence (the 95 % interval's lower bound, or with
    `point` the figure itself), enough distinct labeled cases, a pass/fail that varies where people's does, and when
    asked a kappa whose lower bound reaches `min_kappa`."""

    min_agreement: float = MIN_AGREEMENT
    min_labels: int = MIN_LABELS
    min_kappa: float | None = None
    point: bool = False

    def conditions(self, figures: Calibration) -> list[Condition]:
        """Each condition with its figure: a handful of cases (however many people labeled them) does not pass, and
        neither does a judge that passes (or fails) everything where people do not, whatever its agreement."""
        labels = f" ({figures.pass_n} labels)" if figures.pass_n != figures.pass_cases else ""
        found = [Condition(f"at least {self.min_labels} labeled cases with pass/fail on both sides (--min-labels)",
                           f"{figures.pass_cases}{labels}", figures.pass_cases >= self.min_labels),
                 self._agreement(figures), self._one_class(figures)]
        if self.min_kappa is not None:
            kappa = figures.kappa_pass
            bounds = kappa.interval
            found.append(Condition(f"the 95% interval of kappa above {self.min_kappa:.2f} (--min-kappa)",
                                   kappa.text() if bounds is None else
                                   f"{bounds[0]:.2f} at its lower bound (kappa {kappa.text()})",
                                   bounds is not None and bounds[0] >= self.min_kappa))
        return found

    def _agreement(self, figures: Calibration) -> Condition:
        if figures.agreement is None:
            return Condition(f"agreement of {self.min_agreement:.0%} (--min-agreement)", "no label says pass or fail",
                             False)
        if self.point or figures.interval is None:
            said, asked = percents_apart(figures.agreement, self.min_agreement)
            return Condition(f"agreement of at least {asked} (--min-agreement, --point)", said,
                             figures.agreement >= self.min_agreement)
        low = figures.interval[0]
        said, asked = percents_apart(low, self.min_agreement)
        return Condition(f"the 95% interval of agreement above {asked} (--min-agreement)",
                         f"{said} at its lower bound (agreement {agreement_text(figures)})", low >= self.min_agreement)

    @staticmethod
    def _one_class(figures: Calibration) -> Condition:
        """A judge that says pass (or fail) every time agrees with people exactly as often as they say it: its
        agreement measures people, not the judge."""
        judge, people = figures.judge_pass_rate, figures.human_pass_rate
        asked = "the judge both passes and fails where people do"
        if judge is None or people is None:
            return Condition(asked, "no label says pass or fail", False)
        one_class = judge in (0.0, 1.0) and 0 < people < 1
        said = "pass" if judge == 1 else "fail"
        return Condition(asked, f"the judge said {said} every time, people passed {percent(people)}" if one_class else
                         f"the judge passes {percent(judge)}, people {percent(people)}", not one_class)

    def passes(self, figures: Calibration) -> bool:
        """Whether every condition is met."""
        return all(condition.met for condition in self.conditions(figures))
