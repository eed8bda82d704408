"""The budget rule, once, as a table: an estimate's cost and its requests to judges of unknown price against a
threshold that asks, a threshold on requests and a monthly budget, in a month that spent so much; what a person must
agree to first, and what the run may spend before it pauses. Every face (the terminal, a shared file, a card, an
agent) weighs its runs by this rule; and what a run may still send, given what it spent and what it has in flight
(the background tier weighs each request it creates so, a live run each verdict)."""

from __future__ import annotations

import pytest

from bot.figures import money
from bot.runs.budget import Ask, Budget, Limits, weigh

THRESHOLD = Limits(confirm_above=5.0, confirm_above_requests=100)  # the terminal's, without a budget
MONTHLY = Limits(monthly=10.0, how_to_raise="Raise it")  # a card's: a budget, no threshold to ask about
ALL = Limits(confirm_above=5.0, confirm_above_requests=100, monthly=10.0, how_to_raise="Raise it")
ABOVE, UNPRICED, OVER = Ask.ABOVE, Ask.UNPRICED, Ask.OVER

RULE = [
    # (what, cost, requests to judges of unknown price, limits, spent this month, asks, left to spend: pauses there)
    ("no limit at all", 1_000.0, 1_000_000, Limits(), 0.0, (), None),
    ("under the threshold", 4.99, 0, THRESHOLD, 0.0, (), None),
    ("at the threshold: not above it", 5.0, 0, THRESHOLD, 0.0, (), None),
    ("above the threshold", 5.01, 0, THRESHOLD, 0.0, (ABOVE,), None),
    ("an unknown cost is not above a threshold", None, 0, THRESHOLD, 0.0, (), None),
    ("requests of unknown price at their threshold", None, 100, THRESHOLD, 0.0, (), None),
    ("requests of unknown price above their threshold", 1.0, 101, THRESHOLD, 0.0, (UNPRICED,), None),
    ("within what is left of the budget", 5.0, 0, MONTHLY, 2.0, (), 8.0),
    ("exactly what is left", 8.0, 0, MONTHLY, 2.0, (), 8.0),
    ("more than is left", 8.01, 0, MONTHLY, 2.0, (OVER,), 8.0),
    ("a budget spent already, whatever the cost", 0.0, 0, MONTHLY, 10.0, (OVER,), 0.0),
    ("a budget spent past, the cost unknown", None, 0, MONTHLY, 12.0, (OVER,), -2.0),
    ("an unknown cost within a budget: it pauses there", None, 0, MONTHLY, 2.0, (), 8.0),
    ("a card's limits never ask about a threshold", 500.0, 10_000, Limits(monthly=1_000.0), 0.0, (), 1_000.0),
    ("every question, in the order they are asked", 9.0, 101, ALL, 2.0, (ABOVE, UNPRICED, OVER), 8.0),
]


@pytest.mark.parametrize(("what", "cost", "unpriced", "limits", "spent", "asks", "left"), RULE,
                         ids=[row[0] for row in RULE])
def test_the_budget_rule(what, cost, unpriced, limits, spent, asks, left) -> None:
    weighed = weigh(cost, unpriced, limits, spent)
    assert weighed.asks == asks
    assert weighed.left == left
    if left is None:
        assert weighed.budget() is None  # no monthly budget: nothing pauses the run
    else:
        assert weighed.budget() == Budget(left, limits.how_to_raise)
    assert weighed.budget(past=True) is None  # agreed to go past the budget: no pause there


SENDING = [
    # (what, left, spent, expected of the requests in flight, expected of the next one, whether it may be sent)
    ("nothing spent, it fits", 1.0, 0.0, 0.0, 0.4, True),
    ("exactly what is left", 1.0, 0.2, 0.5, 0.3, True),
    ("what is in flight leaves no room for it", 1.0, 0.2, 0.5, 0.31, False),
    ("in flight alone takes what is left", 1.0, 0.0, 1.0, 0.0, False),
    ("at the budget, whatever it costs", 1.0, 1.0, 0.0, 0.0, False),
    ("a judge of unknown price within the budget", 1.0, 0.6, 0.3, 0.0, True),
    ("more than the whole budget on its own", 1.0, 0.0, 0.0, 1.01, False),
    ("a budget spent past already", -0.5, 0.0, 0.0, 0.0, False),
    ("a live run after a verdict: under the budget", 1.0, 0.99, 0.0, 0.0, True),
]


@pytest.mark.parametrize(("what", "left", "spent", "in_flight", "cost", "allowed"), SENDING,
                         ids=[row[0] for row in SENDING])
def test_what_a_run_may_still_send(what, left, spent, in_flight, cost, allowed) -> None:
    budget = Budget(left, "Raise it")
    assert budget.allows(spent, in_flight, cost) is allowed
    # where it stops, the sentence every tier pauses with
    assert budget.reached(spent) == (f"the monthly budget is reached: this run spent {money(spent)} of the "
                                     f"{money(left)} left this month. Raise it, then resume")
