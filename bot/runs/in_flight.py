"""What a background run has spent and has in flight, weighed before each request it creates against what is left of
a monthly budget (bot.runs.budget's rule): its responses not answered yet count at what they are expected to cost in
their completion window, those answered at what they cost."""

from __future__ import annotations

from collections.abc import Callable

from bot.records import Triple
from bot.runs.budget import Budget
from bot.store import Slot

Pricer = Callable[[Triple, int], float]  # a request's expected cost: its row's texts, its judge's index


class InFlight:
    """The spend of one background run in this process, with the expected cost of each request it waits for; without
    a budget, nothing is priced and every request may be created."""

    def __init__(self, budget: Budget | None, price: Pricer | None = None) -> None:
        self.budget = budget
        self.price = price
        self.spent = 0.0  # USD of the replies saved in this session (their repairs included)
        self.flying = 0.0  # USD expected of the requests created and not answered yet
        self.expected: dict[Slot, float] = {}
        self.out = False  # the budget ran out: no request is created any more

    def take(self, slot: Slot, triple: Triple) -> bool:
        """Whether the slot's request may be created: its expected cost fits in what is left with what was spent and
        what is in flight (then it is counted in flight). Once one does not fit, none is created any more."""
        if self.budget is None or self.price is None:
            return True
        if self.out:
            return False
        cost = self.price(triple, slot[1])
        if not self.budget.allows(self.spent, self.flying, cost):
            self.out = True
            return False
        self._fly(slot, cost)
        return True

    def hold(self, slot: Slot, triple: Triple) -> None:
        """Count a request created before (its response still open) in flight, whatever the budget says now."""
        if self.budget is not None and self.price is not None and slot not in self.expected:
            self._fly(slot, self.price(triple, slot[1]))

    def ended(self, slot: Slot, cost: float = 0.0) -> None:
        """The slot's request ended: what its reply cost counts as spent (nothing for one never answered)."""
        self.flying = max(0.0, self.flying - self.expected.pop(slot, 0.0))
        self.spent += cost

    @property
    def reason(self) -> str | None:
        """Why the run stops short of its rows: the budget's sentence once it ran out (what was spent by then)."""
        return self.budget.reached(self.spent) if self.out and self.budget is not None else None

    def _fly(self, slot: Slot, cost: float) -> None:
        self.expected[slot] = cost
        self.flying += cost
