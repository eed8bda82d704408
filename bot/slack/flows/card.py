"""One judgment as a card: the placeholder at once, the card in its place, the full texts in the thread; and after a
restart, the cards a stopped process left waiting."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.errors import RunBusy
from bot.judge.lifetime import judges_of_run
from bot.records import RESUMABLE, RowState, RunState, Triple
from bot.rubric import Rubric
from bot.runs import STALE_AFTER, Origin, abandon_triple, finish_triple, start_triple
from bot.slack.context import SAY_LATER, Context, NotInstalled
from bot.slack.messenger import OUR_FAULT, Sent, post_problem
from bot.slack.text import code_block, shown
from bot.slack.views.blocks import notice
from bot.slack.views.budget import budget_spent
from bot.slack.views.card import Card, full_detail, placeholder, result_card, sampled
from bot.slack.views.limits import SECTION_LIMIT
from bot.store import (
    Judgment,
    JudgmentSample,
    Label,
    Run,
    Store,
    cost_limits,
    default_samples,
    feedback_tally,
    judge_of_channel,
)
from bot.store.labels import labels_of, save_label
from bot.store.samples import samples_of
from bot.trust.labels import Completed, HumanValues, complete
from bot.trust.review import send_to_review

log = logging.getLogger(__name__)

CARD_SOURCE = "slack"  # the source of runs of one triple shown as a card


def pairs_need_a_file(rubric: Rubric) -> str:
    """Why a pairwise rubric judges no single triple, and what to do instead."""
    return (f":warning: *{rubric.name}* compares two answers to each question, so it judges a file of pairs: share a "
            "CSV with the columns question, reference, answer_a and answer_b (model_a and model_b if you like) in a "
            "thread and name the rubric in the message.")


def echo(triple: Triple, room: int) -> str:
    """The texts a person typed, within `room` characters, so that a failure does not lose them."""
    each = (room - 80) // 3
    parts = [f"*{name}*\n{code_block(shown(value, each)[0])}" for name, value in
             (("Question", triple.question), ("Reference", triple.reference), ("Answer", triple.answer))]
    return "What you sent:\n" + "\n".join(parts)


async def budget_refusal(ctx: Context, origin: Origin) -> str | None:
    """Why nothing is judged in a channel whose monthly budget is spent, as a card would be; None when it is not."""
    limits = await ctx.db(cost_limits, team_id=origin.team_id or "", channel_id=origin.channel_id or "")
    if limits.monthly_budget is None:
        return None
    spent = await ctx.month_spent(origin.channel_id)
    return budget_spent(spent, limits.monthly_budget) if spent >= limits.monthly_budget else None


async def show_judgment(
    ctx: Context, *, rubric: Rubric, triple: Triple, origin: Origin, model_name: str | None,
    response_url: str | None, fresh: bool = False, replace_ts: str | None = None, samples: int | None = None,
    on_saved: Callable[[Run], Awaitable[None]] | None = None,
) -> Judgment | None:
    """Save the triple, post a placeholder (or reuse message `replace_ts`), judge, and put the card there.

    The triple is judged `samples` times, else as many as the channel's default or the rubric's own say; `on_saved`
    is told of the run once it is saved.
    """
    channel, thread = origin.channel_id or "", origin.thread_ts
    rubric = await ctx.rubric_in(rubric, origin.team_id, origin.channel_id)  # the channel's revision, if it has one
    if rubric.pairwise:
        needs = pairs_need_a_file(rubric)
        await ctx.say.tell(response_url, f"{needs}\n\n{echo(triple, SECTION_LIMIT - len(needs) - 10)}")
        return None
    if (refusal := await budget_refusal(ctx, origin)) is not None:
        await ctx.say.tell(response_url, f"{refusal}\n\n{echo(triple, SECTION_LIMIT - len(refusal) - 10)}")
        return None
    try:
        if samples is None:
            samples = await ctx.db(default_samples, team_id=origin.team_id or "", channel_id=channel) or rubric.samples
        own = await ctx.db(judge_of_channel, team_id=origin.team_id, channel_id=origin.channel_id)
        run = await start_triple(ctx.store, rubric=rubric, triple=triple, **ctx.bench.panel(samples, own).run_fields(),
                                 model_name=model_name, fresh=fresh, origin=origin, message_ts=replace_ts)
    except Exception:
        log.exception("saving a judgment for %s in %s failed", origin.user_id, channel)
        await ctx.say.tell(response_url, f":warning: {OUR_FAULT}\n\n{echo(triple, SECTION_LIMIT - 300)}")
        return None
    if on_saved is not None:
        try:  # what is told of the saved run is a courtesy: the judgment goes on whatever happens to it
            await on_saved(run)
        except Exception:
            log.exception("telling of run %s failed", run.id)
    waiting = placeholder(rubric, origin.user_id, model_name).as_message()
    if replace_ts:
        sent = await ctx.say.edit(channel, replace_ts, waiting, what="the placeholder of a card")
    else:
        sent = await ctx.say.post(channel, waiting, thread_ts=thread, what="the placeholder of a card")
        if sent.ts is not None:
            await ctx.db(Store.set_message, run.id, sent.ts)
    if sent.ts is None:
        await ctx.db(Store.update_run, run.id, status=RunState.CANCELLED,
                     stop_reason=f"the card could not be posted ({sent.refusal})")
        problem = post_problem(sent.refusal or "", channel)
        await ctx.say.tell(response_url, f"{problem}\n\n{echo(triple, SECTION_LIMIT - len(problem) - 10)}")
        return None
    try:
        judgment = await finish_triple(ctx.store, run=run, rubric=rubric, client=ctx.panel_of(run))
    except asyncio.CancelledError:
        await _stopped(ctx, run, channel, sent.ts)
        raise
    except Exception:
        log.exception("judging for %s in %s failed", origin.user_id, channel)
        await ctx.say.replace_or_tell(channel, sent.ts, f":warning: {OUR_FAULT} Nothing was scored.", response_url)
        return None
    await show_card(ctx, judgment, sent.ts, response_url=response_url)
    await _to_review(ctx, run)
    return judgment


async def _to_review(ctx: Context, run: Run) -> None:
    """Queue the card's case when it wants a person's label (unsure, split, or contradicting one); a card one
    person asked for is not part of the random share."""
    try:
        await ctx.db(send_to_review, run, rate=0)
    except Exception:  # the card is shown; the queue misses one case, which is logged
        log.warning("could not queue the case of run %s for review", run.id, exc_info=True)


def _card_state(store: Store, *, judgment: Judgment
                ) -> tuple[tuple[int, int], list[JudgmentSample], list[Label], list[str]]:
    samples = samples_of(store, judgment.id) if sampled(judgment) else []
    run = store.get_run(judgment.run_id)
    judges = judges_of_run(run.judge_model, run.judges) if run is not None else [judgment.judge_model]
    return feedback_tally(store, judgment_id=judgment.id), samples, labels_of(store, judgment.id), judges


async def current_card(ctx: Context, judgment: Judgment) -> Card:
    """The card of `judgment` as it stands: with people's votes and corrections, how its samples went, and its
    judges' coming shutdown, warned of as a file's summary does."""
    votes, samples, labels, judges = await ctx.db(_card_state, judgment=judgment)
    return result_card(judgment, ctx.rubric_of(judgment), votes=votes, samples=samples, labels=labels,
                       warnings=ctx.watch.warnings_of(judges, slack=True))


async def save_correction(ctx: Context, judgment: Judgment, rubric: Rubric, *, user_id: str, values: dict[str, Any],
                          note: str | None) -> tuple[Completed, bool, Sent | None]:
    """Keep a person's label of a judgment's case (replacing their earlier one) and show it on the judgment's card if
    it has one; (the label as the rubric reads it, whether it replaced one, the card's edit or None)."""
    # The person's values are kept even when the rubric's formulas cannot read them (the figures are then unknown).
    label = complete(HumanValues(values=values), rubric)
    async with ctx.one_at_a_time(judgment.id):
        replaced = await ctx.db(save_label, judgment=judgment, user_id=user_id, source="correction", values=values,
                                passed=label.passed, pass_from=label.pass_from, tag=label.tag, headline=label.headline,
                                note=note)
        edited = None
        if judgment.message_ts:
            card = await current_card(ctx, judgment)
            edited = await ctx.say.edit(judgment.channel_id or "", judgment.message_ts, card.as_message(),
                                        what=f"the corrections of judgment {judgment.id}")
    return label, replaced, edited


async def record_correction(ctx: Context, judgment: Judgment, rubric: Rubric, *, user_id: str, values: dict[str, Any],
                            note: str | None, response_url: str | None) -> None:
    """Keep a person's correction of a judgment (replacing their earlier one) and show it on the card."""
    _, replaced, edited = await save_correction(ctx, judgment, rubric, user_id=user_id, values=values, note=note)
    verb = "Replaced your earlier label of this case with your correction" if replaced else "Saved your correction"
    where = "" if edited is None or edited.ok else f" (the card could not be updated: `{edited.refusal}`)"
    await ctx.say.tell(response_url, f"{verb} of #{judgment.id}{where}.")


async def show_card(ctx: Context, judgment: Judgment, ts: str | None, *, response_url: str | None) -> None:
    """Put the card of `judgment` into message `ts` (or a new message); cut texts follow, uncut, in the thread."""
    card = await current_card(ctx, judgment)
    channel = judgment.channel_id or ""
    if ts:
        sent = await ctx.say.edit(channel, ts, card.as_message(), what=f"the card of judgment {judgment.id}")
    else:
        sent = await ctx.say.post(channel, card.as_message(), thread_ts=judgment.thread_ts,
                                  what=f"the card of judgment {judgment.id}")
        if sent.ts is not None:
            await ctx.db(Store.set_message, judgment.run_id, sent.ts)
    if sent.ts is None:
        await ctx.say.tell(response_url, f"Judgment #{judgment.id} is saved (`/judge history` lists it), but Slack "
                                         f"refused its card (`{sent.refusal}`).")
        return
    await _post_full_detail(ctx, card, channel, judgment.thread_ts or sent.ts, response_url)


async def _post_full_detail(ctx: Context, card: Card, channel: str, thread: str, response_url: str | None) -> None:
    for extra in full_detail(card.overflow):
        sent = await ctx.say.post(channel, extra.as_message(), thread_ts=thread, what="the full texts of a card")
        if not sent.ok:
            await ctx.say.tell(response_url, "The card is shown, but its full texts could not be posted in its "
                                             f"thread (`{sent.refusal}`).")
            return


async def _stopped(ctx: Context, run: Run, channel: str, ts: str) -> None:
    """The bot is stopping mid-judgment: show the card if the verdict is in, else say it will come."""
    try:
        row = await asyncio.wait_for(ctx.db(Store.first_judgment, run.id), SAY_LATER)
        if row is not None and row.status != RowState.PENDING:
            await asyncio.wait_for(show_card(ctx, row, ts, response_url=None), SAY_LATER)
            return
        text = (":double_vertical_bar: The bot was stopped before the judge answered. The judgment is saved and "
                "this card is completed when the bot is back.")
        await asyncio.wait_for(ctx.say.edit(channel, ts, notice(text), what="an interrupted card"), SAY_LATER)
    except Exception:
        log.warning("could not mark message %s in %s as interrupted", ts, channel, exc_info=True)


# -- after a restart ----------------------------------------------------------------------------------------------


def recover_cards(ctx: Context, runs: list[Run]) -> None:
    """Complete the cards of `runs`, which a stopped or crashed process left waiting, in the background."""
    for run in runs:
        ctx.tasks.spawn(_recover(ctx, run), f"completing the card of run {run.id}")


async def _recover(ctx: Context, run: Run) -> None:
    try:
        async with ctx.acting_for(run.team_id):  # the workspace the card is in (its own token, with the OAuth install)
            await _complete(ctx, run)
    except NotInstalled:
        log.warning("the card of run %s is left: judgebot is no longer installed in workspace %s", run.id, run.team_id)


async def _complete(ctx: Context, run: Run) -> None:
    row = await ctx.db(Store.first_judgment, run.id)
    if row is None or not row.channel_id:
        return
    judgment: Judgment | None
    try:
        rubric = ctx.rubric_of(run)
        if rubric is None:
            judgment = await abandon_triple(ctx.store, run=run, reason="the rubric changed before the judge answered; "
                                                                       "press Retry to judge with the current one")
        else:
            judgment = await _finish_when_free(ctx, run, rubric)
    except RunBusy:
        return
    except Exception:
        log.exception("completing the card of run %s failed", run.id)
        if row.message_ts:
            await ctx.say.replace_or_tell(row.channel_id, row.message_ts, f":warning: {OUR_FAULT}", None)
        return
    if judgment is not None:  # a row without a message (the process died before posting it) gets a new card
        await show_card(ctx, judgment, row.message_ts, response_url=None)


async def _finish_when_free(ctx: Context, run: Run, rubric: Rubric) -> Judgment | None:
    """Judge a left-over run; one still held by another host is retried once its heartbeat would be stale."""
    try:
        return await finish_triple(ctx.store, run=run, rubric=rubric, client=ctx.panel_of(run))
    except RunBusy:
        await asyncio.sleep(STALE_AFTER + 5)
    current = await ctx.db(Store.get_run, run.id)
    if current is None or current.status not in RESUMABLE:
        return None  # finished meanwhile by the process that held it
    return await finish_triple(ctx.store, run=run, rubric=rubric, client=ctx.panel_of(run))
