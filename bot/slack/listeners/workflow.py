"""Workflow Builder's "Grade an answer" step: judged as `/judge` judges, its card in the workflow's channel."""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import RubricError
from bot.records import Triple, typed_passages
from bot.rubric import Rubric, RubricSet
from bot.runs import Origin
from bot.slack.context import Context
from bot.slack.flows.card import CARD_SOURCE, show_judgment
from bot.slack.flows.step_end import (
    OUR_SIDE,
    TOKEN_LIFE,
    StepRefused,
    end_step,
    outputs_from,
    plain,
    send_end,
)
from bot.slack.messenger import Messenger
from bot.slack.text import clean, clip, escape
from bot.store import Run, keep_step, step_run, utcnow

log = logging.getLogger(__name__)

GRADE_STEP = "grade_answer"  # the step's callback_id in manifest.yml: renaming it removes the step from workflows
TEXTS = ("question", "reference", "answer")
CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,}$")  # a channel (public or private), not a direct message

OTHER_TEAM = ("This workflow runs in another workspace than the one judgebot is installed in, so its judgments "
              "cannot be kept here. Add the step to a workflow of this workspace.")


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


def read_request(rubrics: RubricSet, team_id: str | None, body: dict[str, Any], inputs: dict[str, Any]) -> StepRequest:
    """The step's inputs, checked; StepRefused says what is wrong (another workspace, an empty text, no such rubric,
    retrieved context missing for a rubric that reads it or given to one that does not)."""
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
                       triple=Triple(question=texts["question"], reference=texts["reference"], answer=texts["answer"],
                                     context=step_passages(rubric, clean(str(inputs.get("context") or "")))))


def step_passages(rubric: Rubric, typed: str) -> list[str] | None:
    """The passages of the step's Retrieved context input for `rubric` (a blank line between them, or a JSON list of
    strings; None for a rubric that reads none); StepRefused says why there are none to judge with."""
    typed = typed.strip()
    if not rubric.uses_context:
        if typed:
            raise StepRefused(f"The rubric {rubric.name} does not read retrieved context: empty the step's Retrieved "
                              "context field, or choose a rubric that grades against the passages.")
        return None
    if not typed:
        raise StepRefused(f"The rubric {rubric.name} grades the answer against the passages retrieved for the "
                          "question, and the step got none: fill in its Retrieved context field (a blank line "
                          "between passages, or a JSON list of strings), or pick a variable that holds them.")
    passages = typed_passages(typed)
    if isinstance(passages, str):
        raise StepRefused(f"{escape(passages[:1].upper() + passages[1:])}.")
    return passages


class WorkflowStep:
    """The listener of the step: checks at once, keeps the step, judges in a task, then completes or fails it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def on_step(self, body: dict[str, Any], event: dict[str, Any], inputs: dict[str, Any]) -> None:
        """A workflow reached the step (bolt has acknowledged the event). It is ended with the execution's own token
        (the event's bot_access_token), kept in the history until then so that a process taking over after a restart
        can end it. An execution delivered again, under any event_id and to any process, never gets here: the
        deliveries' record keys it by its function_execution_id (bot.slack.deliveries)."""
        execution = str(event.get("function_execution_id") or "")
        token = str(event.get("bot_access_token") or "")
        try:
            request = read_request(self.ctx.rubrics, self.ctx.team_id, body, inputs)
            await self.ctx.db(keep_step, execution_id=execution, team_id=request.team_id,
                              channel_id=request.channel_id, token=token, expires_at=utcnow() + TOKEN_LIFE)
        except StepRefused as refusal:
            await self._refuse(execution, token, str(refusal))
            return
        except Exception:
            log.exception("keeping workflow step %s failed", execution)
            await self._refuse(execution, token, OUR_SIDE)
            return
        self.ctx.tasks.spawn(self._grade(request, execution, token), f"workflow step {execution}",
                             on_failure=lambda err: end_step(self.ctx, execution, token, error=OUR_SIDE))

    async def _refuse(self, execution: str, token: str, sentence: str) -> None:
        """Fail a step refused at once (never kept: nothing else can end it)."""
        await send_end(self.ctx, execution, token, error=sentence)

    async def _grade(self, request: StepRequest, execution: str, token: str) -> None:
        try:
            outputs = await self._judge(request, execution)
        except StepRefused as refusal:
            await end_step(self.ctx, execution, token, error=str(refusal))
            return
        except asyncio.CancelledError:  # the bot is stopping: the next process ends the step once the card is judged
            log.info("workflow step %s is left for the next process to end", execution)
            raise
        await end_step(self.ctx, execution, token, outputs=outputs)

    async def _judge(self, request: StepRequest, execution: str) -> dict[str, Any]:
        """Judge the request as `/judge` would (saved, weighed against the channel's budget, posted as a card, scoped
        to its channel); the outputs, or StepRefused saying why there are none (what `/judge` would have told its
        person). A channel the bot cannot post in is found out by posting the card's placeholder, before the judge
        is asked."""
        origin = Origin(source=CARD_SOURCE, team_id=request.team_id, channel_id=request.channel_id)
        kept = _KeptMessenger(self.ctx.client)
        ctx = self.ctx.speaking_through(kept)  # the same history, judge and tasks; only what is told is kept

        async def saved(run: Run) -> None:  # a process taking over finds the step's run, and ends it once judged
            await self.ctx.db(step_run, execution, run.id)

        judgment = await show_judgment(ctx, rubric=request.rubric, triple=request.triple, origin=origin,
                                       model_name=request.model_name, response_url=None, on_saved=saved)
        if judgment is None:
            raise StepRefused(plain(kept.kept[0]) if kept.kept else OUR_SIDE)
        return await outputs_from(self.ctx, judgment)
