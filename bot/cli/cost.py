"""The terminal's questions about money: a run's estimate shown before it starts, a question above CONFIRM_ABOVE_USD,
and JUDGE_MONTHLY_BUDGET (a run that would go over asks; one that reaches it pauses)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli import views
from bot.config import Settings
from bot.errors import UsageError
from bot.figures import money

if TYPE_CHECKING:
    from bot.runs import Budget
    from bot.runs.estimate import Estimate
    from bot.store import Store

RAISE_BUDGET = "Raise JUDGE_MONTHLY_BUDGET"


def agreed(question: str, refusal: str, *, yes: bool, console: Console) -> bool:
    """Whether to go on: at once with --yes, else when the person at the terminal says so; without a terminal to ask,
    UsageError with `refusal` (which names the flag to pass)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(refusal)
    return console.input(f"{question} \\[y/N] ").strip().lower() in ("y", "yes")  # escaped: not read as markup


def approve_cost(store: Store, estimate: Estimate, settings: Settings, *, yes: bool, console: Console,
                 lead: str = "Estimate", quiet: bool = False) -> tuple[bool, Budget | None]:
    """(whether to judge, what the run may spend before it pauses): shows the estimate (with `quiet`, only when it
    asks), asks above CONFIRM_ABOVE_USD and above CONFIRM_ABOVE_REQUESTS requests to judges of unknown price, and
    asks when the run would take this month over JUDGE_MONTHLY_BUDGET (--yes answers each). Every command that calls
    the judge goes through it."""
    from bot.runs import Budget
    from bot.store import month_spent

    if not quiet:
        views.show_estimate(console, lead, estimate)
    cost, threshold = estimate.cost_usd, settings.confirm_above_usd
    if cost is not None and cost > threshold:
        if quiet:
            views.show_estimate(console, lead, estimate)
        over = f"{estimate.cost_text()} is more than CONFIRM_ABOVE_USD ({money(threshold)})"
        if not agreed(f"{over[0].upper()}{over[1:]}. Judge it?", f"the estimate, {over}, and there is no terminal "
                      "to ask; pass --yes to judge it anyway (or raise CONFIRM_ABOVE_USD)", yes=yes, console=console):
            return False, None
    if estimate.unpriced_requests > settings.confirm_above_requests:
        if quiet:
            views.show_estimate(console, lead, estimate)
        over = (f"{estimate.unpriced_requests:,} requests to judges of unknown price ({', '.join(estimate.unpriced)}) "
                f"is more than CONFIRM_ABOVE_REQUESTS ({settings.confirm_above_requests:,})")
        if not agreed(f"{over[0].upper()}{over[1:]}. Judge them?", f"{over}, and there is no terminal to ask; pass "
                      "--yes to judge them anyway (or raise CONFIRM_ABOVE_REQUESTS)", yes=yes, console=console):
            return False, None
    limit = settings.judge_monthly_budget
    if limit is None:
        return True, None
    spent = month_spent(store, None)
    left = limit - spent
    if left > 0 and (cost is None or cost <= left):
        return True, Budget(left, RAISE_BUDGET)  # an unknown price cannot be weighed: the run pauses at the budget
    state = f"this month's spend is {money(spent)} of JUDGE_MONTHLY_BUDGET ({money(limit)})"
    if quiet:
        views.show_estimate(console, lead, estimate)
    if agreed(f"This run ({estimate.cost_text()}) would go over the budget: {state}. Judge it anyway?",
              f"this run ({estimate.cost_text()}) would go over the budget: {state}, and there is no terminal to ask; "
              f"pass --yes to judge it anyway (or raise JUDGE_MONTHLY_BUDGET)", yes=yes, console=console):
        return True, None  # going over was agreed to: no pause at the budget
    return False, None
