"""Workflow Builder's "Grade an answer" step: judged as `/judge` judges, its card in the workflow's channel."""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from slack_bolt.context.complete.async_complete import AsyncComplete
from slack_bolt.context.fail.async_fail import AsyncFail
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import RubricError
from bot.records import RowState, Triple
from bot.rubric import Rubric, RubricSet
from bot.rubric.fields import leaves
from bot.runs import Origin
from bot.slack.context import SAY_LATER, Context
from bot.slack.flows.card import CARD_SOURCE, budget_refusal, show_judgment
from bot.slack.messenger import Messenger, slack_error
from bot.slack.text import clean, clip, escape, permalink, shown
from bot.store import Judgment, Store
from bot.trust.labels import value_at

log = logging.getLogger(__name__)

GRADE_STEP = "grade_answer"  # the step's callback_id in manifest.yml: renaming it removes the step from workflows
TEXTS = ("question", "reference", "answer")
REASONING_ROOM = 3000  # characters of the reasoning output; the card (linked) has all of it
REASON_ROOM = 300  # characters of a judge's error quoted in a failure
REMEMBERED = 1000  # function executions remembered, so that an event Slack sends again is judged once
CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,}$")  # a channel (public or private), not a direct message

OTHER_TEAM = ("This workflow runs in another workspace than the one judgebot is installed in, so its judgments "
              "cannot be kept here. Add the step to a workflow of this workspace.")
STOPPED = ("The bot was stopped before the judge answered. The card in the channel is completed when the bot is back, "
           "but this step ended: run the workflow again for its outputs.")
OUR_SIDE = ("Something went wrong on judgebot's side and nothing was judged. Run the workflow again; if it keeps "
            "failing, tell the bot's admin.")


class StepRefused(Exception):
    """Why a step is not judged, in a sentence the workflow's builder can act on."""


@dataclass(frozen=True)
class StepRequest:
    """What one run of the step asks for, checked: where it belongs, the rubric, the texts and the model."""

    team_id: str
    channel_id: str
    rubric: Rubric
    triple: Triple
    model_name: str | None


class _KeptMessenger(Messenger):
    """The bot's messenger for one step: what `/judge` would tell its person (through a response_url, which a workflow
    has not) is kept, to become the step's failure."""

    def __init__(self, client: AsyncWebClient) -> None:
        super().__init__(client)
        self.kept: list[str] = []

    async def reply(self, response_url: str | None, message: dict[str, Any]) -> None:
        self.kept.append(str(message.get("text") or ""))


def plain(mrkdwn: str) -> str:
    """A message the bot would post, as one sentence for a step's failure: its first paragraph, without the emoji."""
    first = mrkdwn.strip().split("\n\n", 1)[0]
    first = re.sub(r"^(:[a-z0-9_+-]+:\s*)+", "", first)
    return re.sub(r"<#([A-Z0-9]+)>", r"#\1", first).strip()


def read_request(rubrics: RubricSet, team_id: str | None, body: dict[str, Any], inputs: dict[str, Any]) -> StepRequest:
    """The step's inputs, checked; StepRefused says what is wrong (another workspace, an empty text, no such rubric)."""
    named = {body.get("team_id")} | {auth.get("team_id") for auth in body.get("authorizations") or []}
    named -= {None, ""}
    if not team_id or named != {team_id}:
        log.warning("workflow step refused: it comes from team(s) %s", ", ".join(sorted(map(str, named))) or "none")
        raise StepRefused(OTHER_TEAM)
    channel = str(inputs.get("channel") or "").strip()
    if not CHANNEL_ID.match(channel):
        raise StepRefused("The step needs the channel its card is posted in and its judgment belongs to: choose the "
                          "workflow's channel in the step's Channel field.")
    texts = {name: clean(str(inputs.get(name) or "")).strip() for name in TEXTS}
    if empty := [name for name in TEXTS if not texts[name]]:
        listed = " and ".join(empty)
        raise StepRefused(f"The step got no {listed}: fill in {'that field' if len(empty) == 1 else 'those fields'} "
                          "of the step, or pick a variable that has a value when the workflow runs.")
    name = clean(str(inputs.get("rubric") or "")).strip()
    if not name:
        raise StepRefused(f"The step needs a rubric: type one of {', '.join(r.name for r in rubrics)} in its Rubric "
                          "field.")
    try:
        rubric = rubrics.get(name)
    except RubricError as err:
        raise StepRefused(escape(clip(str(err), 400)[0])) from None
    if rubric.pairwise:
        raise StepRefused(f"The rubric {rubric.name} compares two answers to each question, so it cannot grade one "
                          "answer in a workflow: choose another rubric, or share a CSV of pairs in a channel.")
    model = clean(str(inputs.get("model") or "")).strip() or None
    return StepRequest(team_id=team_id, channel_id=channel, rubric=rubric, model_name=model,
                       triple=Triple(question=texts["question"], reference=texts["reference"], answer=texts["answer"]))


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


class WorkflowStep:
    """The listener of the step: checks at once, judges in a task, then completes the step or fails it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._seen: OrderedDict[str, None] = OrderedDict()

    async def on_step(self, body: dict[str, Any], event: dict[str, Any], inputs: dict[str, Any],
                      complete: AsyncComplete, fail: AsyncFail) -> None:
        """A workflow reached the step (bolt has acknowledged the event). `complete` and `fail` call Slack with the
        execution's own token (bolt puts the event's bot_access_token on the client it gives them)."""
        execution = str(event.get("function_execution_id") or "")
        if execution in self._seen:
            log.info("workflow step %s delivered again: judged once", execution)
            return
        self._seen[execution] = None
        while len(self._seen) > REMEMBERED:
            self._seen.popitem(last=False)
        try:
            request = read_request(self.ctx.rubrics, self.ctx.team_id, body, inputs)
        except StepRefused as refusal:
            await self._fail(fail, str(refusal), execution)
            return
        self.ctx.tasks.spawn(self._grade(request, complete, fail, execution), f"workflow step {execution}",
                             on_failure=lambda err: self._fail(fail, OUR_SIDE, execution))

    async def _grade(self, request: StepRequest, complete: AsyncComplete, fail: AsyncFail, execution: str) -> None:
        try:
            outputs = await self._judge(request)
        except StepRefused as refusal:
            await self._fail(fail, str(refusal), execution)
            return
        except asyncio.CancelledError:
            await self._fail(fail, STOPPED, execution)
            raise
        try:
            await complete(outputs=outputs)
        except Exception as err:  # the verdict is stored and shown; only the workflow does not learn it
            log.warning("could not complete workflow step %s: %s", execution, slack_error(err))

    async def _judge(self, request: StepRequest) -> dict[str, Any]:
        """Judge the request as `/judge` would (saved, posted as a card, scoped to its channel); the outputs, or
        StepRefused saying why there are none. A channel the bot cannot post in is found out by posting the card's
        placeholder, before the judge is asked (looking it up first would need the channels:read scopes)."""
        origin = Origin(source=CARD_SOURCE, team_id=request.team_id, channel_id=request.channel_id)
        if (refusal := await budget_refusal(self.ctx, origin)) is not None:
            raise StepRefused(plain(refusal))
        kept = _KeptMessenger(self.ctx.client)
        ctx = self.ctx.speaking_through(kept)  # the same history, judge and tasks; only what is told is kept
        judgment = await show_judgment(ctx, rubric=request.rubric, triple=request.triple, origin=origin,
                                       model_name=request.model_name, response_url=None)
        if judgment is None:
            raise StepRefused(plain(kept.kept[0]) if kept.kept else OUR_SIDE)
        link = await self._link(judgment)
        if judgment.status != RowState.SCORED or judgment.headline is None:
            raise StepRefused(unscored(judgment, link))
        return outputs_of(judgment, self.ctx.rubric_of(judgment), link)

    async def _link(self, judgment: Judgment) -> str | None:
        """A link to the judgment's card."""
        channel, ts = judgment.channel_id or "", judgment.message_ts
        if not ts:
            row = await self.ctx.db(Store.first_judgment, judgment.run_id)
            ts = row.message_ts if row is not None else None
        if not ts:
            return None
        if (link := permalink(self.ctx.team_url, channel, ts)) is not None:
            return link
        try:
            return str((await self.ctx.client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"])
        except Exception as err:
            log.warning("no link to the card of judgment %s: %s", judgment.id, slack_error(err))
            return None

    @staticmethod
    async def _fail(fail: AsyncFail, sentence: str, execution: str) -> None:
        """End the step as failed, saying why; a failure Slack refuses is logged (the step then times out)."""
        log.info("workflow step %s failed: %s", execution, sentence)
        try:
            await asyncio.wait_for(fail(error=sentence), SAY_LATER)
        except Exception as err:
            log.warning("could not fail workflow step %s: %s", execution, slack_error(err))
