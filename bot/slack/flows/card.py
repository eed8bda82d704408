"""One judgment as a card: the placeholder at once, the card in its place, the full texts in the thread; and after a
restart, the cards a stopped process left waiting."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from bot.errors import RunBusy
from bot.judge.lifetime import judges_of_run
from bot.records import RESUMABLE, RowState, Triple
from bot.rubric import Rubric
from bot.runs import STALE_AFTER, Answer, Ended, Face, Limits, NotJudged, Origin, Question, Request, Rows, Tier, abandon_triple
from bot.runs.budget import Ask, weigh
from bot.runs.engine import OnProgress
from bot.slack.context import SAY_LATER, Context, NotInstalled
from bot.slack.messenger import OUR_FAULT, Sent, post_problem
from bot.slack.text import code_block, escape, shown
from bot.slack.views.blocks import notice
from bot.slack.views.budget import RAISE_BUDGET, over_budget_text
from bot.slack.views.card import Card, full_detail, placeholder, result_card, sampled
from bot.slack.views.size_limits import SECTION_LIMIT
from bot.store import (
    Judgment,
    JudgmentSample,
    Label,
    Run,
    Store,
    channel_judge,
    cost_limits,
    default_samples,
    feedback_tally,
    first_judgment,
    get_run,
    labels_of,
    samples_of,
    set_run_message,
)
from bot.trust.labeling import CORRECTION, label_case
from bot.trust.labels import Completed, HumanValues

log = logging.getLogger(__name__)

CARD_SOURCE = "slack"  # the source of runs of one triple shown as a card


def pairs_need_a_file(rubric: Rubric) -> str:
    """Why a pairwise rubric judges no single triple, and what to do instead."""
    return (f":warning: *{rubric.name}* compares two answers to each question, so it judges a file of pairs: share a "
            "CSV with the columns question, reference, answer_a and answer_b (model_a and model_b if you like) in a "
            "thread and name the rubric in the message.")


def echo(triple: Triple, room: int) -> str:
    """The texts a person typed, within `room` characters, so that a failure does not lose them."""
    texts = [("Question", triple.question), ("Reference", triple.reference), ("Answer", triple.answer)]
    if triple.context is not None:  # typed as a JSON list, it can be pasted back into the form as it is
        texts.append(("Retrieved context", json.dumps(triple.context, ensure_ascii=False)))
    each = (room - 80) // len(texts)
    parts = [f"*{name}*\n{code_block(shown(value, each)[0])}" for name, value in texts]
    return "What you sent:\n" + "\n".join(parts)


async def channel_limits(ctx: Context, origin: Origin) -> Limits:
    """What a judgment asked for in a channel is held to: the channel's monthly budget (`/judge budget`). A card has
    nobody to ask about a threshold: only a shared file asks before it is judged."""
    limits = await ctx.db(cost_limits, team_id=origin.team_id or "", channel_id=origin.channel_id or "")
    return Limits(monthly=limits.monthly_budget, channel_id=origin.channel_id, how_to_raise=RAISE_BUDGET)


async def budget_refusal(ctx: Context, origin: Origin) -> str | None:
    """Why nothing is judged in a channel whose monthly budget is spent, as the budget rule weighs a request with no
    estimate yet (an alignment, a comparison, before their rows are saved; each run of theirs is weighed again by
    its estimate); None when it is not."""
    limits = await channel_limits(ctx, origin)
    if limits.monthly is None:
        return None
    weighed = weigh(None, 0, limits, await ctx.month_spent(origin.channel_id))
    return over_budget_text(weighed.spent, limits.monthly) if Ask.OVER in weighed.asks else None


class _CardFace(Face):
    """A card as a face of the engine: it cannot ask (a card over the channel's budget is refused, and the person
    told with what they typed), and shows a placeholder while the judge works (`ts`)."""

    def __init__(self, ctx: Context, triple: Triple, rubric: Rubric, origin: Origin, *, model_name: str | None,
                 response_url: str | None, replace_ts: str | None,
                 on_saved: Callable[[Run], Awaitable[None]] | None) -> None:
        self.ctx, self.triple, self.rubric, self.origin, self.model_name = ctx, triple, rubric, origin, model_name
        self.response_url, self.replace_ts, self.on_saved = response_url, replace_ts, on_saved
        self.run: Run | None = None
        self.ts: str | None = None

    async def saved(self, run: Run) -> None:
        self.run = run
        if self.on_saved is not None:
            try:  # what is told of the saved run is a courtesy: the judgment goes on whatever happens to it
                await self.on_saved(run)
            except Exception:
                log.exception("telling of run %s failed", run.id)

    async def agree(self, question: Question) -> Answer:
        if not question.asks:
            return Answer.YES
        weighed = question.weighed
        refusal = over_budget_text(weighed.spent, weighed.limits.monthly or 0.0, escape(question.estimate.cost_text()))
        await self.ctx.say.tell(self.response_url,
                                f"{refusal}\n\n{echo(self.triple, SECTION_LIMIT - len(refusal) - 10)}")
        return Answer.NO

    @asynccontextmanager
    async def judging(self, run: Run, tier: Tier, sending: bool) -> AsyncIterator[OnProgress]:
        channel, ctx = self.origin.channel_id or "", self.ctx
        waiting = placeholder(self.rubric, self.origin.user_id, self.model_name).as_message()
        if self.replace_ts:
            sent = await ctx.say.edit(channel, self.replace_ts, waiting, what="the placeholder of a card")
        else:
            sent = await ctx.say.post(channel, waiting, thread_ts=self.origin.thread_ts,
                                      what="the placeholder of a card")
            if sent.ts is not None:
                await ctx.db(set_run_message, run.id, sent.ts)
        if sent.ts is None:
            problem = post_problem(sent.refusal or "", channel)
            await ctx.say.tell(self.response_url, f"{problem}\n\n{echo(self.triple, SECTION_LIMIT - len(problem) - 10)}")
            raise NotJudged(f"the card could not be posted ({sent.refusal})")
        self.ts = sent.ts
        yield None


async def show_judgment(
    ctx: Context, *, rubric: Rubric, triple: Triple, origin: Origin, model_name: str | None,
    response_url: str | None, fresh: bool = False, replace_ts: str | None = None, samples: int | None = None,
    on_saved: Callable[[Run], Awaitable[None]] | None = None,
) -> Judgment | None:
    """Save the triple, post a placeholder (or reuse message `replace_ts`), judge, and put the card there.

    The triple is judged `samples` times, else as many as the channel's default or the rubric's own say; `on_saved`
    is told of the run once it is saved. Nothing is judged in a channel whose monthly budget it would go over.
    """
    channel = origin.channel_id or ""
    rubric = await ctx.rubric_in(rubric, origin.team_id, origin.channel_id)  # the channel's revision, if it has one
    if rubric.pairwise:
        needs = pairs_need_a_file(rubric)
        await ctx.say.tell(response_url, f"{needs}\n\n{echo(triple, SECTION_LIMIT - len(needs) - 10)}")
        return None
    face = _CardFace(ctx, triple, rubric, origin, model_name=model_name, response_url=response_url,
                     replace_ts=replace_ts, on_saved=on_saved)
    try:
        if samples is None:
            samples = await ctx.db(default_samples, team_id=origin.team_id or "", channel_id=channel) or rubric.samples
        own = await ctx.db(channel_judge, team_id=origin.team_id, channel_id=channel) if channel else None
        panel = ctx.bench.panel(samples, *(own.judge_model, own.reasoning_effort) if own else ())
        request = Request(rubric, panel, Rows(triple, origin, model_name=model_name, fresh=fresh, message_ts=replace_ts),
                          limits=await channel_limits(ctx, origin), statuses=RESUMABLE, resumable=False)
        ended = await ctx.engine.judge(request, face)
    except asyncio.CancelledError:
        if face.run is not None and face.ts is not None:
            await _stopped(ctx, face.run, channel, face.ts)
        raise
    except Exception:
        if face.ts is None:  # nothing is shown yet: what the person typed is given back
            log.exception("saving a judgment for %s in %s failed", origin.user_id, channel)
            await ctx.say.tell(response_url, f":warning: {OUR_FAULT}\n\n{echo(triple, SECTION_LIMIT - 300)}")
        else:
            log.exception("judging for %s in %s failed", origin.user_id, channel)
            await ctx.say.replace_or_tell(channel, face.ts, f":warning: {OUR_FAULT} Nothing was scored.", response_url)
        return None
    if ended.outcome is None:  # refused (the person was told why)
        return None
    judgment = await _judgment_of(ctx, ended)
    await show_card(ctx, judgment, face.ts, response_url=response_url)
    return judgment


async def _judgment_of(ctx: Context, ended: Ended) -> Judgment:
    """The verdict of a judged card's triple (as another process left it, when one took the run over)."""
    judgment = ended.end.judgment if ended.end is not None else await ctx.db(first_judgment, ended.run.id)
    assert judgment is not None, "a run of one triple has one row"
    return judgment


def _card_state(store: Store, *, judgment: Judgment
                ) -> tuple[tuple[int, int], list[JudgmentSample], list[Label], list[str]]:
    samples = samples_of(store, judgment.id) if sampled(judgment) else []
    run = get_run(store, judgment.run_id)
    judges = judges_of_run(run.judge_model, run.judges) if run is not None else [judgment.judge_model]
    return feedback_tally(store, judgment_id=judgment.id), samples, labels_of(store, judgment.id), judges


async def current_card(ctx: Context, judgment: Judgment) -> Card:
    """The card of `judgment` as it stands: with people's votes and corrections, how its samples went, and its
    judges' coming shutdown, warned of as a file's summary does."""
    votes, samples, labels, judges = await ctx.db(_card_state, judgment=judgment)
    return result_card(judgment, ctx.rubric_of(judgment), votes=votes, samples=samples, labels=labels,
                       warnings=ctx.watch.warnings_of(judges, slack=True), view_url=ctx.view_url)


async def save_correction(ctx: Context, judgment: Judgment, rubric: Rubric, *, user_id: str, values: dict[str, Any],
                          note: str | None) -> tuple[Completed, bool, Sent | None]:
    """Keep a person's label of a judgment's case (replacing their earlier one) and show it on the judgment's card if
    it has one; (the label as the rubric reads it, whether it replaced one, the card's edit or None)."""
    async with ctx.one_at_a_time(judgment.id):
        label, replaced = await ctx.db(label_case, judgment, rubric, HumanValues(values=values), user_id=user_id,
                                       source=CORRECTION, note=note)
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
            await ctx.db(set_run_message, judgment.run_id, sent.ts)
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
        row = await asyncio.wait_for(ctx.db(first_judgment, run.id), SAY_LATER)
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
    row = await ctx.db(first_judgment, run.id)
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
        return await _finish_left(ctx, run, rubric)
    except RunBusy:
        await asyncio.sleep(STALE_AFTER + 5)
    current = await ctx.db(get_run, run.id)
    if current is None or current.status not in RESUMABLE:
        return None  # finished meanwhile by the process that held it
    return await _finish_left(ctx, run, rubric)


async def _finish_left(ctx: Context, run: Run, rubric: Rubric) -> Judgment:
    """A left-over card's triple judged (agreed to when it was asked for), its verdict read back."""
    request = Request(rubric, ctx.panel_of(run), run, agreed=True, statuses=RESUMABLE, resumable=False)
    return await _judgment_of(ctx, await ctx.engine.judge(request, Face()))
