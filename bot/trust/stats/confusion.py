"""The confusion matrix of the judge's classes against people's, and how it reads as a monospace table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, model_validator

NAME_WIDTH = 13  # as wide as the corner "judge \ human"; longer class names are cut when the table has no room
TABLE_WIDTH = 60  # four classes fit this, so the table reads in a narrow Slack message
NAMES_SHARE = 3  # in a wider table, longer row names take up to a third of it
GAP = "  "
CORNER = "judge \\ human"
TOTAL = "total"


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


class Confusion(BaseModel):
    """Counts of (judge class, human class): rows are the judge's classes, columns the human's, in `classes` order."""

    model_config = ConfigDict(frozen=True)
    classes: list[str]
    counts: list[list[int]]

    @model_validator(mode="after")
    def _square(self) -> Confusion:
        size = len(self.classes)
        if len(self.counts) != size or any(len(row) != size for row in self.counts):
            raise ValueError(f"counts must be {size} rows of {size}")
        return self

    @classmethod
    def build(cls, pairs: Iterable[tuple[str, str]], order: Sequence[str] = ()) -> Confusion:
        """The matrix of (judge, human) pairs: the classes of `order` first, then any others seen, sorted."""
        counted = list(pairs)
        seen = {label for pair in counted for label in pair}
        classes = list(dict.fromkeys(order)) + sorted(seen - set(order))
        index = {label: position for position, label in enumerate(classes)}
        counts = [[0] * len(classes) for _ in classes]
        for judge, human in counted:
            counts[index[judge]][index[human]] += 1
        return cls(classes=classes, counts=counts)

    @property
    def total(self) -> int:
        """Every pair counted."""
        return sum(map(sum, self.counts))

    @property
    def diagonal(self) -> int:
        """Pairs where the judge and the person gave the same class."""
        return sum(self.counts[i][i] for i in range(len(self.classes)))

    def row_totals(self) -> list[int]:
        """Pairs per judge class."""
        return [sum(row) for row in self.counts]

    def column_totals(self) -> list[int]:
        """Pairs per human class."""
        return [sum(column) for column in zip(*self.counts)]

    def table(self, width: int = TABLE_WIDTH) -> list[str]:
        """The matrix as lines of monospace text within about `width` characters (a narrow Slack message by
        default, a terminal's width there), with row and column totals; a class name is cut only when it has no
        room."""
        longest = max(map(len, self.classes), default=0)
        names = NAME_WIDTH if width <= TABLE_WIDTH else max(NAME_WIDTH, min(longest, width // NAMES_SHARE))
        total_width = max(len(TOTAL), len(str(self.total)))
        widths = self._column_widths(width - names - len(GAP) - total_width)
        header = [_cut(name, column).rjust(column) for name, column in zip(self.classes, widths)]
        lines = [self._line(CORNER.ljust(names), header, TOTAL.rjust(total_width))]
        for name, row, row_total in zip(self.classes, self.counts, self.row_totals()):
            cells = [str(count).rjust(column) for count, column in zip(row, widths)]
            lines.append(self._line(_cut(name, names).ljust(names), cells, str(row_total).rjust(total_width)))
        cells = [str(count).rjust(column) for count, column in zip(self.column_totals(), widths)]
        lines.append(self._line(TOTAL.ljust(names), cells, str(self.total).rjust(total_width)))
        return lines

    def _column_widths(self, room: int) -> list[int]:
        # Headers share what the row names and the total column leave of the line; a count never gets cut.
        cap = max(3, room // max(1, len(self.classes)) - len(GAP))
        return [max(min(len(name), cap), *(len(str(count)) for count in column))
                for name, column in zip(self.classes, zip(*self.counts))]

    @staticmethod
    def _line(name: str, cells: list[str], total: str) -> str:
        return GAP.join([name, *cells, total])
