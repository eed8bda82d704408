"""How a pairwise run's figures read, in words shared by the terminal, Slack and the digest (plain text: each place
makes it safe to show)."""

from __future__ import annotations

from bot.figures import percent, plural
from bot.trust.pairwise import Matchup, PairwiseReport
from bot.trust.stats.bradley_terry import Rated
from bot.trust.stats.mcnemar import p_text


def win_rate_text(match: Matchup) -> str:
    """B's win rate over A with ties split, its interval (Wilson-type, over the pairs) and record: "bot-v2 over
    bot-v1: 62% (95% CI 44%-77%) of 30 pairs; won 14, lost 7, tied 9 (4 inconsistent); sign test p = 0.19"."""
    if match.win_rate is None:
        return f"{match.b} over {match.a}: no pair was judged"
    interval = "" if match.interval is None else f" (95% CI {percent(match.interval[0])}-{percent(match.interval[1])})"
    inconsistent = f" ({match.inconsistent} inconsistent)" if match.inconsistent else ""
    sign = "" if match.sign_p is None else f"; sign test {p_text(match.sign_p)}"
    pairs = f"{match.pairs} {plural(match.pairs, 'pair')}"
    return (f"{match.b} over {match.a}: {percent(match.win_rate)}{interval} of {pairs}; won {match.wins}, lost "
            f"{match.losses}, tied {match.ties}{inconsistent}{sign}")


def outcomes_text(found: PairwiseReport) -> str:
    """What the pairs came to: "9 with a winner, 3 tied (an inconsistent pair is a tie), 1 with no verdict"."""
    if not found.judged:
        return "none with an outcome (no verdict, and no label of people)"
    won = found.judged - found.tied
    parts = [f"{won} with a winner", f"{found.tied} tied"]
    if found.pairs > found.judged:
        parts.append(f"{found.pairs - found.judged} with no verdict")
    return ", ".join(parts)


def consistency_text(found: PairwiseReport) -> str:
    """Position consistency: "87% (26 of 30 pairs named the same winner in both orders; 4 inconsistent, counted as
    ties)", or why it was not measured."""
    if not found.swapped:
        return "not measured: each pair was judged once (--no-swap), every other pair with B shown first"
    if found.consistency is None:
        return "n/a: no pair was scored in both orders"
    inconsistent = found.both - found.consistent
    pairs = f"{found.both} {plural(found.both, 'pair')}"
    settled = f", {found.settled} settled by people" if found.settled else ""
    return (f"{percent(found.consistency)} ({found.consistent} of {pairs} named the same winner in both orders; "
            f"{inconsistent} inconsistent, counted as ties{settled})")


def people_text(found: PairwiseReport) -> str | None:
    """How the judge's winner compares with people's on the pairs they labeled: "people labeled 4 pairs the judge saw
    in both orders; its winner matched theirs in 3 with A shown first, 1 with B shown first"; None without any."""
    if not found.labeled:
        return None
    return (f"people labeled {found.labeled} {plural(found.labeled, 'pair')} the judge saw in both orders; its winner "
            f"matched theirs in {found.right_first} with A shown first, {found.right_second} with B shown first")


def position_text(found: PairwiseReport) -> str:
    """The position bias over pairs: "the first answer won in both orders in 6 pairs, the second in 0, of 30 pairs
    judged in both orders (sign test p = 0.031): position bias toward the first answer; the first answer was picked
    in 60% of 54 judgments that named a winner", or "n/a"."""
    first, second = found.positions["first"], found.positions["second"]
    if found.first_p is None:
        return "n/a: no pair went to one position" if found.swapped else "n/a: no judgment named a winner"
    if found.swapped:
        text = (f"the first answer won in both orders in {first} {plural(first, 'pair')}, the second in {second}, of "
                f"{found.both} {plural(found.both, 'pair')} judged in both orders (sign test {p_text(found.first_p)})")
    else:
        pairs = first + second
        text = (f"the first answer won {first} of the {pairs} {plural(pairs, 'pair')} whose one judgment named a "
                f"winner (sign test {p_text(found.first_p)})")
    if found.position_bias is not None:
        text += f": position bias toward the {found.position_bias} answer"
    rate = found.first_rate
    if found.swapped and rate is not None:
        decisive = found.shown_first["A"] + found.shown_first["B"]
        text += (f"; the first answer was picked in {percent(rate)} of {decisive} {plural(decisive, 'judgment')} "
                 "that named a winner")
    return text


def rated_text(item: Rated) -> str:
    """One model's Bradley-Terry rating: "1043 (95% CI 1002-1090), 24 pairs, 15.5 won"."""
    interval = "" if item.interval is None else f" (95% CI {item.interval[0]:.0f}-{item.interval[1]:.0f})"
    return f"{item.rating:.0f}{interval}, {item.pairs} {plural(item.pairs, 'pair')}, {item.wins:g} won"
