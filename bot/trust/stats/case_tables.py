"""Cases counted into their distinct tables as they come, one case at a time: what `alike` makes of the cases'
tables, without a table made for each case of one pair (most cases: one person's label)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

from bot.trust.stats.kappa import Tables

Class = TypeVar("Class", bound=Hashable)


class CaseTables(Generic[Class]):
    """The distinct (judge, human) tables of the cases added, each with how many cases have it, in the order first
    met; a case's table counts its pairs in the order first given (two orders of one table are two tables, as
    `alike` keeps them)."""

    def __init__(self) -> None:
        self._singles: dict[tuple[Class, Class], int] = {}  # cases of one pair, by pair
        self._others: dict[tuple[Any, ...], int] = {}  # the other cases, by their table's items
        self._order: list[tuple[Any, ...]] = []  # every distinct table's items, first met first
        self._other_pairs: dict[tuple[Class, Class], int] = {}  # the pairs of the other cases, counted

    def one(self, pair: tuple[Class, Class], times: int = 1) -> None:
        """A case of one pair (or `times` such cases)."""
        singles = self._singles
        if pair in singles:
            singles[pair] += times
        else:
            singles[pair] = times
            self._order.append(((pair, 1),))

    def add(self, pairs: Sequence[tuple[Class, Class]]) -> dict[tuple[Class, Class], int]:
        """A case of these pairs (at least one), in the order given; its table."""
        if len(pairs) == 1:
            self.one(pairs[0])
            return {pairs[0]: 1}
        table: dict[tuple[Class, Class], int] = {}
        counted = self._other_pairs
        for pair in pairs:
            table[pair] = table.get(pair, 0) + 1
            counted[pair] = counted.get(pair, 0) + 1
        key = tuple(table.items())
        others = self._others
        if key in others:
            others[key] += 1
        else:
            others[key] = 1
            self._order.append(key)
        return table

    @property
    def cases(self) -> int:
        """The cases added."""
        return sum(self._singles.values()) + sum(self._others.values())

    def pairs(self) -> dict[tuple[Class, Class], int]:
        """Every pair of every case added, counted."""
        found = dict(self._singles)
        for pair, count in self._other_pairs.items():
            found[pair] = found.get(pair, 0) + count
        return found

    def tables(self) -> Tables[Class]:
        """The distinct tables with how many cases have each, first met first: `alike` of the cases' tables."""
        return [(dict(key), self._singles[key[0][0]] if len(key) == 1 and key[0][1] == 1 else self._others[key])
                for key in self._order]
