"""How a Workflow Builder step ends: its outputs from the card's judgment, or a sentence saying why there are none,
sent with the step's own token by whichever process claims the step (kept in the history until then); and the steps a
stopped process left, ended by the next one once their card is judged (within the 15 minutes of Slack's token)."""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import timedelta
from typing import Any

from bot.records import RESUMABLE, RowState
from bot.rubric import Rubric
from bot.rubric.fields import leaves
from bot.slack.context import Context
from bot.slack.messenger import make_web_client, slack_error
from bot.slack.text import clip, escape, permalink, shown
from bot.store import Judgment, WorkflowStep, drop_step, first_judgment, get_run, utcnow, waiting_steps
from bot.trust.labels import value_at

log = logging.getLogger(__name__)

TOKEN_LIFE = timedelta(minutes=15)  # Slack's token for a step lapses 15 minutes after the step starts
REASONING_ROOM = 3000  # characters of the reasoning output; the card (linked) has all of it
REASON_ROOM = 300  # characters of a judge's error quoted in a failure
UNSAVED_AFTER = 60.0  # seconds after which a step left without a run is taken for one whose process died first
LOOK_EVERY = 1.0  # seconds between two looks at the runs of the steps left over
LAST_SECONDS = 30.0  # a step still unjudged this close to its token's lapse is failed while Slack can still be told
END_SECONDS = 10.0  # how long Slack may take to hear that a step ended
OUR_SIDE = ("Something went wrong on judgebot's side and nothing was judged. Run the workflow again; if it keeps "
            "failing, tell the bot's admin.")
UNSAVED = ("The bot was restarted before it saved what this step asked for, so nothing was judged. Run the workflow "
           "again.")
STOPPED = ("The judge did not answer before Slack's time for this step ran out (the bot was restarted while it "
           "judged). The card in the channel is completed when it can be; run the workflow again for its outputs.")
CANCELLED = "The judgment of this step was cancelled before the judge answered. Run the workflow again."


class StepRefused(Exception):
    """Why a step is not judged, in a sentence the workflow's builder can act on."""


def plain(mrkdwn: str) -> str:
    """A message the bot would post, as one sentence for a step's failure: its first paragraph, without the emoji."""
    first = mrkdwn.strip().split("\n\n", 1)[0]
    first = re.sub(r"^(:[a-z0-9_+-]+:\s*)+", "", first)
    return re.sub(r"<#([A-Z0-9]+)>", r"#\1", first).strip()


def reasoning_of(judgment: Judgment, rubric: Rubric | None) -> str:
    """The judge's own words on a verdict: its text fields (one alone as it is, several each with its name), else the
    verdict's label; with the warnings the judgment carries. Escaped, and cut to REASONING_ROOM."""
    texts: list[tuple[str, str]] = []
    for path, spec in leaves(rubric.output) if rubric else []:
        value = value_at(judgment.output, path)
        if spec.kind.shown != "section" or value in (None, "", []):
            continue
        texts.append((path, "; ".join(map(str, value)) if isinstance(value, list) else str(value)))
    if len(texts) == 1:
        said = texts[0][1]
    else:
        said = "\n".join(f"{path.replace('_', ' ')}: {text}" for path, text in texts) or judgment.label or ""
    if judgment.flags:
        said += f"\nWarnings: {'; '.join(judgment.flags)}."
    if judgment.unsure:
        said += "\nThe judge's samples did not agree: this verdict is unsure."
    return shown(said.strip(), REASONING_ROOM)[0]


def outputs_of(judgment: Judgment, rubric: Rubric | None, link: str | None) -> dict[str, Any]:
    """The step's outputs of a scored judgment, as manifest.yml declares them (`tag` only where the rubric has one)."""
    outputs: dict[str, Any] = {"headline": judgment.headline, "passed": bool(judgment.passed),
                               "reasoning": reasoning_of(judgment, rubric), "card_link": link or ""}
    if judgment.tag is not None:
        outputs["tag"] = escape(judgment.tag)
    return outputs


def unscored(judgment: Judgment, link: str | None) -> str:
    """Why a judgment has no score, as a step's failure: what happened, the reason, where the card is."""
    reason = clip(" ".join((judgment.error or "no reason was recorded").split()), REASON_ROOM)[0].rstrip(".")
    what = {RowState.MALFORMED: "The answer was not sent to the judge",
            RowState.INVALID: "The judge's reply broke the rubric's rules, so nothing was scored"}.get(
        RowState(judgment.status), "The judge could not grade this answer, so nothing was scored")
    card = f" The card (with a Retry button): {link}" if link else ""
    return f"{what}: {escape(reason)}.{card}"


async def card_link(ctx: Context, judgment: Judgment) -> str | None:
    """A link to the judgment's card."""
    channel, ts = judgment.channel_id or "", judgment.message_ts
    if not ts:
        row = await ctx.db(first_judgment, judgment.run_id)
        ts = row.message_ts if row is not None else None
    if not ts:
        return None
    if (link := permalink(ctx.team_url, channel, ts)) is not None:
        return link
    try:
        return str((await ctx.client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"])
    except Exception as err:
        log.warning("no link to the card of judgment %s: %s", judgment.id, slack_error(err))
        return None


async def outputs_from(ctx: Context, judgment: Judgment) -> dict[str, Any]:
    """The step's outputs of a judged card; StepRefused saying why there are none (the judgment is not scored)."""
    link = await card_link(ctx, judgment)
    if judgment.status != RowState.SCORED or judgment.headline is None:
        raise StepRefused(unscored(judgment, link))
    return outputs_of(judgment, ctx.rubric_of(judgment), link)


async def end_step(ctx: Context, execution: str, token: str, *, outputs: dict[str, Any] | None = None,
                   error: str | None = None) -> bool:
    """Complete the kept step with `outputs`, or fail it saying `error`, if this process is the one to end it (it
    deletes the kept step first: an execution is ended once, by one process). Whether it ended it."""
    if not await ctx.db(drop_step, execution):
        log.info("workflow step %s was ended by another process", execution)
        return False
    # Claimed: nothing else will end it, so a stop of the bot waits for Slack's answer rather than cut it short.
    await asyncio.shield(send_end(ctx, execution, token, outputs=outputs, error=error))
    return True


async def send_end(ctx: Context, execution: str, token: str, *, outputs: dict[str, Any] | None = None,
                   error: str | None = None) -> None:
    """Tell Slack the step ended (functions.completeSuccess, or completeError with the sentence), with the step's
    own token; what Slack refuses or does not answer in time is logged (the step then times out)."""
    client = make_web_client(token, ctx.home.say.client.base_url)
    try:
        if outputs is not None:
            await asyncio.wait_for(client.functions_completeSuccess(function_execution_id=execution,
                                                                    outputs=outputs), END_SECONDS)
        else:
            log.info("workflow step %s failed: %s", execution, error)
            await asyncio.wait_for(client.functions_completeError(function_execution_id=execution,
                                                                  error=error or OUR_SIDE), END_SECONDS)
    except Exception as err:  # the verdict is stored and shown; only the workflow does not learn it
        log.warning("could not end workflow step %s: %s", execution, slack_error(err))


def recover_steps(ctx: Context) -> None:
    """End, in the background, the steps a stopped or crashed process left, each once its card's run is judged (by
    the card's own recovery, or the process still judging it)."""
    ctx.tasks.spawn(_recover(ctx), "ending the workflow steps left over", interruptible=True)


async def _recover(ctx: Context) -> None:
    while True:
        try:
            steps = await ctx.db(waiting_steps)
        except Exception:
            log.exception("looking for the workflow steps left over failed")
            await asyncio.sleep(LOOK_EVERY * 10)
            continue
        if not steps:
            return
        for step in steps:
            try:
                await _try_to_end(ctx, step)
            except Exception:  # the others are still ended
                log.exception("ending workflow step %s failed", step.execution_id)
        await asyncio.sleep(LOOK_EVERY)


async def _try_to_end(ctx: Context, step: WorkflowStep) -> None:
    """End `step` if its run is judged, or can no longer be (or it has none long after it started, or its token is
    about to lapse)."""
    lapsing = (step.expires_at - utcnow()).total_seconds() < LAST_SECONDS
    if step.run_id is None:
        if lapsing or (utcnow() - step.created_at).total_seconds() > UNSAVED_AFTER:
            await end_step(ctx, step.execution_id, step.token, error=UNSAVED)
        return
    judgment = await ctx.db(first_judgment, step.run_id)
    run = await ctx.db(get_run, step.run_id)
    if judgment is None or run is None:
        await end_step(ctx, step.execution_id, step.token, error=UNSAVED)
        return
    if judgment.status == RowState.PENDING:
        if run.status in RESUMABLE and not lapsing:
            return  # still being judged, here or elsewhere
        await end_step(ctx, step.execution_id, step.token,
                       error=STOPPED if run.status in RESUMABLE else CANCELLED)
        return
    try:
        async with ctx.acting_for(step.team_id):
            outputs = await outputs_from(ctx, judgment)
    except StepRefused as refusal:
        await end_step(ctx, step.execution_id, step.token, error=str(refusal))
        return
    except Exception:
        log.exception("ending workflow step %s failed", step.execution_id)
        await end_step(ctx, step.execution_id, step.token, error=OUR_SIDE)
        return
    await end_step(ctx, step.execution_id, step.token, outputs=outputs)
