"""The terminal's questions about money: a run's estimate shown before it starts, and each thing the budget rule
(bot.runs.budget) asks about put to the person at the terminal: above CONFIRM_ABOVE_USD, above
CONFIRM_ABOVE_REQUESTS requests to judges of unknown price, over JUDGE_MONTHLY_BUDGET."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.views.judging import show_estimate
from bot.errors import UsageError
from bot.figures import money

if TYPE_CHECKING:
    from bot.runs import Question
    from bot.runs.budget import Ask


def agreed(question: str, refusal: str, *, yes: bool, console: Console) -> bool:
    """Whether to go on: at once with --yes, else when the person at the terminal says so; without a terminal to ask,
    UsageError with `refusal` (which names the flag to pass)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(refusal)
    return console.input(f"{question} \\[y/N] ").strip().lower() in ("y", "yes")  # escaped: not read as markup


def approve(question: Question, *, yes: bool, console: Console, lead: str = "Estimate", quiet: bool = False) -> bool:
    """Whether to judge a run as the budget rule weighed it: its estimate shown (with `quiet`, only when the rule
    asks), then each thing the rule asks about put to the person (--yes answers each). Every command that calls the
    judge goes through it."""
    if not quiet or question.asks:
        show_estimate(console, lead, question.estimate)
    return all(agreed(*asked(question, ask), yes=yes, console=console) for ask in question.asks)


def asked(question: Question, ask: Ask) -> tuple[str, str]:
    """(the question put to a person at the terminal, the refusal said without a terminal) of one thing the budget
    rule asks about."""
    from bot.runs.budget import Ask

    estimate, weighed = question.estimate, question.weighed
    if ask == Ask.ABOVE:
        over = f"{estimate.cost_text()} is more than CONFIRM_ABOVE_USD ({money(weighed.limits.confirm_above or 0.0)})"
        return (f"{over[0].upper()}{over[1:]}. Judge it?", f"the estimate, {over}, and there is no terminal to ask; "
                "pass --yes to judge it anyway (or raise CONFIRM_ABOVE_USD)")
    if ask == Ask.UNPRICED:
        over = (f"{estimate.unpriced_requests:,} requests to judges of unknown price ({', '.join(estimate.unpriced)}) "
                f"is more than CONFIRM_ABOVE_REQUESTS ({weighed.limits.confirm_above_requests or 0:,})")
        return (f"{over[0].upper()}{over[1:]}. Judge them?", f"{over}, and there is no terminal to ask; pass --yes to "
                "judge them anyway (or raise CONFIRM_ABOVE_REQUESTS)")
    state = (f"this month's spend is {money(weighed.spent)} of JUDGE_MONTHLY_BUDGET "
             f"({money(weighed.limits.monthly or 0.0)})")
    return (f"This run ({estimate.cost_text()}) would go over the budget: {state}. Judge it anyway?",
            f"this run ({estimate.cost_text()}) would go over the budget: {state}, and there is no terminal to ask; "
            "pass --yes to judge it anyway (or raise JUDGE_MONTHLY_BUDGET)")
