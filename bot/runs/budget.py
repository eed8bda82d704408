"""The rule of money, written once: a run's estimate weighed against the threshold above which a person agrees first,
the requests to judges of unknown price, and a monthly budget; and what the run may spend before it pauses."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.config import Settings
from bot.figures import money

RAISE_JUDGE_BUDGET = "Raise JUDGE_MONTHLY_BUDGET"  # how the terminal's budget is raised


class Ask(StrEnum):
    """Why a person must agree before a run is judged, in the order they are asked."""

    ABOVE = "above"  # the estimate is above the threshold that asks first
    UNPRICED = "unpriced"  # more requests to judges of unknown price than the threshold on requests
    OVER = "over"  # the run would take the month's spend over the monthly budget


@dataclass(frozen=True)
class Budget:
    """What a run may still spend before it pauses (what is left of a monthly budget), and how to give it more."""

    left: float
    how_to_raise: str

    def allows(self, spent: float, in_flight: float = 0.0, cost: float = 0.0) -> bool:
        """Whether a run that spent `spent` so far, with requests expected to cost `in_flight` sent and not answered
        yet, may send one more expected to cost `cost`: it stays within what is left (a run at the budget may not).
        A live run asks it after each verdict with nothing more (its requests in flight still land); the background
        tier before each request it creates, its responses open counted in flight."""
        committed = spent + in_flight
        return committed < self.left and committed + cost <= self.left

    def reached(self, spent: float) -> str:
        """Why a run paused at the budget, on every tier, having spent `spent`."""
        return (f"the monthly budget is reached: this run spent {money(spent)} of the {money(self.left)} left this "
                f"month. {self.how_to_raise}, then resume")


@dataclass(frozen=True)
class Limits:
    """What a run's cost is weighed against, where the run belongs: the terminal, a channel, an agent's caller.

    None leaves a limit out: a face with nobody to ask a threshold of has none (a card), a place without a monthly
    budget is held to none. `channel_id` names whose month's spend the budget holds (None: the terminal's)."""

    confirm_above: float | None = None  # USD of estimate above which a person agrees first
    confirm_above_requests: int | None = None  # requests to judges of unknown price above which a person agrees first
    monthly: float | None = None  # USD a calendar month may spend
    channel_id: str | None = None
    how_to_raise: str = RAISE_JUDGE_BUDGET

    @classmethod
    def of_terminal(cls, settings: Settings) -> Limits:
        """The terminal's limits (and an agent's, outside Slack): CONFIRM_ABOVE_USD, CONFIRM_ABOVE_REQUESTS and
        JUDGE_MONTHLY_BUDGET."""
        return cls(confirm_above=settings.confirm_above_usd, confirm_above_requests=settings.confirm_above_requests,
                   monthly=settings.judge_monthly_budget)


@dataclass(frozen=True)
class Weighed:
    """A run's estimate weighed against its limits: why a person must agree first (none: it may start), what the
    month spent, and what the run may spend before it pauses."""

    asks: tuple[Ask, ...]
    limits: Limits
    spent: float = 0.0  # this month's spend against the monthly budget (0 without one)

    @property
    def left(self) -> float | None:
        """What is left of the monthly budget (None: no budget)."""
        return None if self.limits.monthly is None else self.limits.monthly - self.spent

    def fits(self, cost: float | None) -> bool:
        """Whether a run costing `cost` (another tier's price of the same rows, say) stays within the monthly budget."""
        return not over_budget(self.limits.monthly, self.spent, cost)

    def budget(self, *, past: bool = False) -> Budget | None:
        """What the run may spend before it pauses: what is left of the monthly budget, unless there is none or it
        was agreed to go past it (`past`). A judge of unknown price cannot be weighed: the run pauses there."""
        if self.left is None or past:
            return None
        return Budget(self.left, self.limits.how_to_raise)


def over_budget(monthly: float | None, spent: float, cost: float | None) -> bool:
    """Whether judging at `cost` would take a month that spent `spent` over `monthly` (a budget spent already is over
    it whatever the cost; an unknown cost is weighed only then)."""
    if monthly is None:
        return False
    left = monthly - spent
    return left <= 0 or (cost is not None and cost > left)


def weigh(cost: float | None, unpriced_requests: int, limits: Limits, spent: float = 0.0) -> Weighed:
    """The budget rule: `cost` (the estimate's priced part, None if unknown) and `unpriced_requests` (to judges of
    unknown price) against `limits`, in a month that spent `spent`."""
    asks: list[Ask] = []
    if cost is not None and limits.confirm_above is not None and cost > limits.confirm_above:
        asks.append(Ask.ABOVE)
    if limits.confirm_above_requests is not None and unpriced_requests > limits.confirm_above_requests:
        asks.append(Ask.UNPRICED)
    if over_budget(limits.monthly, spent, cost):
        asks.append(Ask.OVER)
    return Weighed(tuple(asks), limits, spent if limits.monthly is not None else 0.0)
