"""Showing a judgment in a channel: the placeholder at once, then the card in its place, then any full texts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.judge import Triple
from bot.llm import JudgeClient
from bot.models import Judgment
from bot.rubrics import Rubric, RubricError, RubricSet
from bot.runs import Origin
from bot.single import judge_triple
from bot.slack.cards import Card, full_detail, placeholder, result_card
from bot.slack.views import notice
from bot.store import Store

log = logging.getLogger(__name__)

Respond = Callable[..., Awaitable[Any]]
ACK_HEADROOM = 0.03  # seconds between an ack and the start of the work it promised

POST_PROBLEMS = {
    "not_in_channel": "I am not a member of <#{channel}>. Invite me with `/invite @judgebot`, then try again.",
    "channel_not_found": ("I cannot see this conversation (a private channel or a direct message I am not part of). "
                          "Invite me with `/invite @judgebot`, or use a channel I am in."),
    "is_archived": "<#{channel}> is archived, so I cannot post there.",
    "restricted_action": "This workspace does not let me post in <#{channel}>; ask an admin.",
}


def post_problem(err: SlackApiError, channel: str) -> str:
    """What to tell a person when Slack refused a message of ours, and what they can do about it."""
    code = err.response.get("error", "unknown_error") if err.response is not None else "unknown_error"
    known = POST_PROBLEMS.get(code)
    if known:
        return known.format(channel=channel)
    return f"Slack refused my message (`{code}`). Please try again in a moment."


async def _after_acks(work: Coroutine[Any, Any, Any]) -> Any:
    # bolt sends an ack's HTTP answer up to 10 ms after ack() (it polls); work that starts later leaves
    # the event loop to the acks of a burst of commands first, so none of them nears Slack's 3 s limit.
    await asyncio.sleep(ACK_HEADROOM)
    return await work


@dataclass
class Judgebot:
    """What the listeners share: settings, history, rubrics, the judge, and the tasks running after an ack."""

    settings: Settings
    store: Store
    rubrics: RubricSet
    judge: JudgeClient
    team_url: str | None = None
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `work` after the ack, keeping a reference so it is neither collected nor forgotten at shutdown."""
        task = asyncio.create_task(_after_acks(work), name=what)
        self.tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())

    async def drain(self, timeout: float) -> None:
        """Let running work finish for up to `timeout` seconds, then cancel what is left."""
        if self.tasks:
            _, late = await asyncio.wait(set(self.tasks), timeout=timeout)
            for task in late:
                task.cancel()

    async def db(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a store call off the event loop, so a busy database never delays an ack."""
        return await asyncio.to_thread(function, *args, **kwargs)

    def rubric_of(self, judgment: Judgment) -> Rubric | None:
        """The rubric a judgment was made with, if it is still loaded."""
        try:
            return self.rubrics.get(judgment.rubric_name)
        except RubricError:
            return None

    async def tell(self, respond: Respond | None, text: str) -> None:
        """Say something to one person only; a failure to do so is logged, never raised."""
        if respond is None:
            log.warning("no way to reach the person to tell them: %s", text)
            return
        try:
            await respond(**notice(text), response_type="ephemeral", replace_original=False)
        except Exception:
            log.warning("could not send an ephemeral reply", exc_info=True)

    async def show_judgment(
        self, client: AsyncWebClient, respond: Respond | None, *, rubric: Rubric, triple: Triple, origin: Origin,
        model_name: str | None, fresh: bool = False, replace_ts: str | None = None,
    ) -> Judgment | None:
        """Post a placeholder (or reuse the message `replace_ts`), judge, and put the card in its place."""
        channel, thread = origin.channel_id or "", origin.thread_ts
        waiting = placeholder(rubric, origin.user_id, model_name).as_message()
        try:
            if replace_ts:
                await client.chat_update(channel=channel, ts=replace_ts, **waiting)
                ts = replace_ts
            else:
                ts = (await client.chat_postMessage(channel=channel, thread_ts=thread, **waiting))["ts"]
        except SlackApiError as err:
            log.warning("could not post in %s: %s", channel, err.response.get("error") if err.response else err)
            await self.tell(respond, post_problem(err, channel))
            return None
        try:
            judgment = await judge_triple(self.store, rubric, triple, self.judge, origin=origin,
                                          model_name=model_name, fresh=fresh)
            await self.db(self.store.set_message, judgment.id, message_ts=ts, thread_ts=thread)
            judgment.message_ts, judgment.thread_ts = ts, thread
            await self.put_card(client, channel, ts, result_card(judgment, rubric), thread=thread)
            return judgment
        except Exception:
            log.exception("judging for %s in %s failed", origin.user_id, channel)
            broken = notice(":warning: Something went wrong on my side while judging this answer, and nothing was "
                            "scored. Please run the command again; if it keeps happening, tell the bot's admin.")
            try:
                await client.chat_update(channel=channel, ts=ts, **broken)
            except SlackApiError:
                await self.tell(respond, broken["text"])
            return None

    async def put_card(self, client: AsyncWebClient, channel: str, ts: str, card: Card, *, thread: str | None) -> None:
        """Replace message `ts` by `card`; texts the card had to cut follow in the thread, uncut."""
        await client.chat_update(channel=channel, ts=ts, **card.as_message())
        for extra in full_detail(card.overflow):
            await client.chat_postMessage(channel=channel, thread_ts=thread or ts, **extra.as_message())
