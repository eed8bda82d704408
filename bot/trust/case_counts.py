"""Calibration's labels put in their cases once and every figure's cases counted in one pass, in `by_case`'s order,
so that every sum over cases adds as building each figure's cases one by one did, to the bit; a case of one label, as
most are, is counted by what it says."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.figures import iso_week
from bot.trust.stats.case_tables import CaseTables

if TYPE_CHECKING:
    from bot.trust.calibration import Verdict


def cases_of(labels: Sequence[Verdict]) -> list[list[Verdict]]:
    """The labels by case, in `by_case`'s order: the cases by key, each case's labels in the order given, then each
    label without a case as a case of its own."""
    keyed: dict[str, list[Verdict]] = {}
    alone: list[list[Verdict]] = []
    for label in labels:
        case = label.case
        if case is None:
            alone.append([label])
        else:
            found = keyed.get(case)
            if found is None:
                keyed[case] = [label]
            else:
                found.append(label)
    return [*(keyed[key] for key in sorted(keyed)), *alone]


class GapCases:
    """One numeric criterion's (judge, human) values, case by case: their tables, the values seen, and each case's
    mean absolute and signed difference, in the order the cases come."""

    def __init__(self) -> None:
        self.tables, self.n, self.values = CaseTables[float](), 0, set[float]()
        self.absolute: list[float] = []
        self.signed: list[float] = []

    def one(self, judge: float, human: float) -> None:
        """The mean of a case of one label: its difference, added to 0 and divided by 1 as a case's mean is (x, or
        0.0 for -0.0)."""
        self.absolute.append(abs(judge - human) + 0.0)
        self.signed.append(judge - human + 0.0)

    def add(self, values: list[tuple[float, float]]) -> dict[tuple[float, float], int]:
        """A case of these labels' values: its table and its means."""
        table = self.tables.add(values)
        self.n += len(values)
        absolute: float = 0  # summed as sum() sums: from 0, in the table's order
        signed: float = 0
        for (judge, human), count in table.items():
            self.values.add(judge)
            self.values.add(human)
            absolute += count * abs(judge - human)
            signed += count * (judge - human)
        self.absolute.append(absolute / len(values))
        self.signed.append(signed / len(values))
        return table


class CaseCounts:
    """The labels' cases counted for every figure of `calibrate`: pass/fail, tags (with `tagged`), the score gaps of
    `criteria`, and the ISO weeks of `labeled_at` (a case's labels of one week are a case of that week)."""

    def __init__(self, labels: Sequence[Verdict], *, tagged: bool, criteria: Sequence[str]) -> None:
        self.passes, self.tags = CaseTables[bool](), CaseTables[str]()
        self.tag_shares: list[float] = []
        self.gaps = {path: GapCases() for path in criteria}
        self.weeks: dict[str, int] = {}  # labels a week
        self.week_passes: dict[str, CaseTables[bool]] = {}
        self._tagged, self._criteria = tagged, tuple(criteria)
        self._none = (None,) * len(self._criteria)  # no criterion's values on both sides
        self._of_day: dict[int, str] = {}
        alike: dict[tuple[Any, ...], int] = {}  # a case of one label by what it says: how many more said the same
        read, first, gaps, none = self._said, self._first, tuple(self.gaps.values()), self._none
        share = self.tag_shares.append
        for case in cases_of(labels):
            if len(case) > 1:
                self._case(case)
                continue
            said = read(case[0])
            more = alike.get(said)
            if more is None:
                alike[said] = 0
                first(said)
            else:
                alike[said] = more + 1
            tags, values = said[1], said[2]  # the values it adds where it comes: its tag share, its score gaps
            if tags is not None:
                share(1.0 if tags[0] == tags[1] else 0.0)  # (1 or 0) / 1, as a case's share is
            if values is not none:
                for gap, pair in zip(gaps, values):
                    if pair is not None:
                        gap.one(*pair)
        for said, more in alike.items():
            if more:
                self._more(said, more)

    def _said(self, label: Verdict) -> tuple[Any, ...]:
        """What a case of one label says, as every figure reads it: (pass pair, tag pair, each criterion's values,
        week), each pair None where a side says nothing."""
        judge, human = label.judge_values, label.human_values
        day = label.labeled_at.toordinal()
        week = self._of_day.get(day) or self._week(label)
        return ((label.judge_passed, label.human_passed)
                if label.judge_passed is not None and label.human_passed is not None else None,
                (label.judge_tag, label.human_tag)
                if self._tagged and label.judge_tag is not None and label.human_tag is not None else None,
                tuple([(judge[path], human[path]) if path in judge and path in human else None
                       for path in self._criteria]) if judge and human else self._none,
                week)

    def _first(self, said: tuple[Any, ...]) -> None:
        """The tables of the first case of one label that says `said`, where the cases come."""
        passed, tagged, values, week = said
        self.weeks[week] = self.weeks.get(week, 0) + 1
        if passed is not None:
            self.passes.one(passed)
            self._week_passes(week).one(passed)
        if tagged is not None:
            self.tags.one(tagged)
        for gap, pair in zip(self.gaps.values(), values):
            if pair is not None:
                gap.tables.one(pair)
                gap.n += 1
                gap.values.update(pair)

    def _more(self, said: tuple[Any, ...], more: int) -> None:
        """`more` cases of one label that say what the first one did: counted where it came."""
        passed, tagged, values, week = said
        self.weeks[week] += more
        if passed is not None:
            self.passes.one(passed, more)
            self._week_passes(week).one(passed, more)
        if tagged is not None:
            self.tags.one(tagged, more)
        for gap, pair in zip(self.gaps.values(), values):
            if pair is not None:
                gap.tables.one(pair, more)
                gap.n += more

    def _case(self, case: Sequence[Verdict]) -> None:
        """A case of several labels, in the order given."""
        read = self._said
        said = [read(label) for label in case]
        passes = [label[0] for label in said if label[0] is not None]
        if passes:
            self.passes.add(passes)
        tags = [label[1] for label in said if label[1] is not None]
        if tags:  # the share of its labels that agree
            self.tag_shares.append(sum([count for (judge, human), count in self.tags.add(tags).items()
                                        if judge == human]) / len(tags))
        for number, gap in enumerate(self.gaps.values()):
            values = [label[2][number] for label in said if label[2][number] is not None]
            if values:
                gap.add(values)
        weeks: dict[str, list[tuple[bool, bool]]] = {}
        counted = self.weeks
        for passed, _, _, week in said:
            counted[week] = counted.get(week, 0) + 1
            if passed is not None:
                found = weeks.get(week)
                if found is None:
                    weeks[week] = [passed]
                else:
                    found.append(passed)
        for week, pairs in weeks.items():
            self._week_passes(week).add(pairs)

    def _week(self, label: Verdict) -> str:
        day = label.labeled_at.toordinal()
        week = self._of_day.get(day)
        if week is None:
            week = self._of_day[day] = iso_week(label.labeled_at)
        return week

    def _week_passes(self, week: str) -> CaseTables[bool]:
        found = self.week_passes.get(week)
        if found is None:
            found = self.week_passes[week] = CaseTables()
        return found
