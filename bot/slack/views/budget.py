"""What a channel spends: `/judge budget`, and the question a shared file asks when its estimate is above the
channel's threshold or would take it over its monthly budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, ConfirmObject

from bot.figures import money, spend_parts
from bot.llm.prices import PriceTable
from bot.runs.estimate import Estimate
from bot.slack.text import escape
from bot.slack.views.blocks import context, message, section, size
from bot.slack.views.file_run import BACKGROUND_RUN, BATCH_RUN, CANCEL_RUN, RESUME_RUN
from bot.slack.views.size_limits import MESSAGE_CHARS, MODEL_ROOM
from bot.slack.views.table_block import NOTE_ROOM, Column, table, untrusted
from bot.slack.views.table_block import text as cell
from bot.store import CostLimits, Run, Spend

SPEND_LISTED = 8  # rubric and judge pairs listed before "and N more"
RAISE_BUDGET = "An admin can raise it with `/judge budget USD`"


def spend_text(spend: Spend) -> str:
    """"$12.34: eth · gpt-4o $10.00, academic · gpt-4o-mini $2.34", with the rows of unknown price."""
    if not spend.by_judge:
        return "$0.00"
    parts = [escape(part) for part in spend_parts(spend.by_judge[:SPEND_LISTED])]
    more = len(spend.by_judge) - SPEND_LISTED
    return f"{money(spend.usd)}: {', '.join(parts)}" + (f" and {more} more" if more > 0 else "")


SPEND_COLUMNS = [Column("Rubric"), Column("Judge"), Column("Spent", right=True),
                 Column("Judgments of unknown price", right=True)]


def tiers_text(prices: PriceTable, judge: str) -> str:
    """What the bot's judge costs at each tier, side by side: live, each background window, the Batch API (USD per
    million tokens in and out), or that its price is unknown."""
    price = prices.price_of(judge)
    if price is None:
        return f"The price of the bot's judge `{escape(judge)}` is unknown (JUDGE_PRICES can add it)."
    names = {"live": "live", **{window: f"background {window}" for window in prices.background_shares},
             "batch": "batch 24h"}
    parts = [f"{name} {money(price.input * prices.share_of(tier))} in / {money(price.output * prices.share_of(tier))} "
             f"out" + ("" if tier == "live" else f" ({1 - prices.share_of(tier):.0%} off)")
             for tier, name in names.items()]
    return f"Per million tokens of the bot's judge `{escape(judge)}`: {' · '.join(parts)}."


def budget_message(channel: str, month: str, spend: Spend, limits: CostLimits, default_ask: float, *,
                   checks: float = 0.0, tiers: str | None = None) -> dict[str, Any]:
    """The answer to `/judge budget`: this month's spend (and what the alignments, comparisons and pairwise runs
    asked for here added), the budget, when a shared file asks first, and a table of the spend per rubric and judge,
    dearest first."""
    if limits.monthly_budget is None:
        budget = "No monthly budget (an admin sets one with `/judge budget USD`)."
    else:
        share = spend.usd / limits.monthly_budget if limits.monthly_budget else 1.0
        budget = f"Monthly budget {money(limits.monthly_budget)}: {share:.0%} used."
    ask = limits.confirm_above if limits.confirm_above is not None else default_ask
    source = "" if limits.confirm_above is not None else " (the bot's CONFIRM_ABOVE_USD)"
    text = (f"*Spent in <#{channel}> in {month} (UTC)*: {money(spend.usd)}.\n{budget}\nA shared file asks before it "
            f"is judged when its estimate is above {money(ask)}{source}; `/judge budget ask USD` changes that.")
    if checks:  # alignments, comparisons and pairs this channel asked for count against its budget too
        text += f"\nAlignments, judge comparisons and pairwise runs asked for here: {money(checks)} more this month."
    if tiers:
        text += f"\n{tiers}"
    head: list[Block] = [section(text)]
    priced = spend.unpriced > 0
    columns = SPEND_COLUMNS if priced else SPEND_COLUMNS[:3]
    rows = [[untrusted(rubric, MODEL_ROOM), untrusted(judge, MODEL_ROOM), cell(money(usd)),
             *([cell(f"{unpriced:,}")] if priced else [])] for rubric, judge, usd, unpriced in spend.by_judge]
    found = table(columns, rows, room=MESSAGE_CHARS - size(head) - NOTE_ROOM)
    blocks = [*head, *found.blocks(rows="_{n} more rubric and judge pair(s) not shown._")]
    return message(blocks, f"Spent in this channel in {month}: {money(spend.usd)}")


def cost_question(run: Run, title: str, estimate: Estimate, *, over_budget: str | None,
                  batch: Estimate | None = None, windows: bool = False, fits: Sequence[str] = ()) -> dict[str, Any]:
    """The estimate of a shared file, with Start, a background window of 2 h or 8 h (with `windows`, when the judge
    asks through the Responses API), Half price via Batch (with the `batch` estimate, when the judge can) and Cancel:
    asked when it is above the channel's threshold, or (`over_budget` says how) when it would take the channel over
    its monthly budget, when only an admin may start it live; the cheaper tiers that `fits` names anyone may start."""
    name = escape(run.source_name or "the file")
    lead = f":moneybag: {escape(estimate.text()[0].upper() + estimate.text()[1:])} to judge *{name}* ({escape(title)})."
    why = (f"It would take this channel over its monthly budget: {over_budget}. An admin can start it anyway."
           if over_budget else "That is more than this channel judges without asking.")
    start = ButtonElement(text="Start", action_id=RESUME_RUN, value=str(run.id), style="primary")
    cancel = ButtonElement(text="Cancel", action_id=CANCEL_RUN, value=str(run.id),
                           confirm=ConfirmObject(title="Cancel this file?", text="Nothing is judged or billed.",
                                                 confirm="Cancel it", deny="Keep it"))
    choices = [start, cancel]
    if batch is not None:
        choices.insert(1, ButtonElement(text="Half price via Batch (results within 24 h)", action_id=BATCH_RUN,
                                        value=str(run.id)))
        why += f" Through the Batch API: {escape(batch.cost_text())}, results within 24 hours."
    if windows:
        live = estimate.tier_costs.get("live")
        for window in ("8h", "2h"):  # inserted after Start: 2 h, then 8 h
            cost = estimate.tier_costs.get(window)
            off = f", {1 - cost / live:.0%} off" if cost is not None and live else ""
            choices.insert(1, ButtonElement(text=f"Within {window[:-1]} h{off}", action_id=BACKGROUND_RUN + window,
                                            value=str(run.id)))
    if fits:
        names = {"2h": "Within 2 h", "8h": "Within 8 h", "batch": "Half price via Batch"}
        priced = [f"{names[tier]} ({money(estimate.tier_costs[tier])})" for tier in fits]
        why += (f" {' and '.join(priced)} {'fits' if len(priced) == 1 else 'fit'} what is left of the budget: anyone "
                "can start it so.")
    if (by_tier := estimate.tier_text()) is not None:
        why += f"\nBy tier: {escape(by_tier)}."
    blocks: list[Block] = [section(f"{lead}\n{why}"), context(f"Replies sized from {escape(estimate.reply_basis)}; "
                                                               "prompts without the provider's cache discount."),
                           ActionsBlock(elements=choices)]
    return message(blocks, f"{escape(estimate.cost_text())} to judge {name}: Start or Cancel")


def budget_spent(spent: float, budget: float) -> str:
    """Why a judgment asked for in a channel whose monthly budget is spent is not judged, and what to do."""
    return (f":no_entry: This channel's monthly budget is spent ({money(spent)} of {money(budget)} this month), so "
            f"nothing was sent to the judge. {RAISE_BUDGET}.")


def over_budget_text(spent: float, budget: float, cost: str | None = None) -> str:
    """Why a judgment asked for in a channel is not judged, and what to do: the channel's monthly budget is spent, or
    this judgment (`cost`, its estimate said) would take the channel over what is left of it."""
    if cost is None or spent >= budget:
        return budget_spent(spent, budget)
    return (f":no_entry: This judgment ({cost}) would take this channel over its monthly budget ({money(spent)} of "
            f"{money(budget)} spent this month), so nothing was sent to the judge. {RAISE_BUDGET}.")
