"""Showing judgments in Slack: the placeholder at once, the card in its place, the full texts in the thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.llm import JudgeClient
from bot.records import Triple
from bot.rubric import Rubric, RubricError, RubricSet
from bot.runs import Origin, finish_triple, start_triple
from bot.slack.blocks import notice
from bot.slack.cards import Card, full_detail, placeholder, result_card
from bot.slack.text import SECTION_LIMIT, shown
from bot.store import Store
from bot.store.models import Judgment, Run

log = logging.getLogger(__name__)

CARD_SOURCE = "slack"  # the source of runs of one triple shown as a card
ACK_HEADROOM = 0.03  # seconds between an ack and the start of the work it promised
SAY_LATER = 5.0  # seconds a message may take while the bot shuts down

POST_PROBLEMS = {
    "not_in_channel": "I am not a member of <#{channel}>. Invite me with `/invite @judgebot`, then try again.",
    "channel_not_found": ("I cannot see this conversation (a private channel or a direct message I am not part of). "
                          "Invite me with `/invite @judgebot`, or use a channel I am in."),
    "is_archived": "<#{channel}> is archived, so I cannot post there.",
    "restricted_action": "This workspace does not let me post in <#{channel}>; ask an admin.",
}
OUR_FAULT = ("Something went wrong on my side and it did not work. Please try again; if it keeps happening, tell "
             "the bot's admin.")


def slack_error(err: Exception) -> str:
    """The error code Slack gave, or the kind of failure."""
    if isinstance(err, SlackApiError) and err.response is not None:
        return str(err.response.get("error", "unknown_error"))
    return type(err).__name__


def post_problem(err: Exception, channel: str) -> str:
    """What to tell a person when Slack refused a message of ours, and what they can do about it."""
    code = slack_error(err)
    known = POST_PROBLEMS.get(code)
    return known.format(channel=channel) if known else f"Slack refused my message (`{code}`). Please try again."


def echo(triple: Triple, room: int) -> str:
    """The texts a person typed, within `room` characters, so that a failure does not lose them."""
    each = (room - 80) // 3
    parts = [f"*{name}*\n```{shown(value, each)[0]}```" for name, value in
             (("Question", triple.question), ("Reference", triple.reference), ("Answer", triple.answer))]
    return "What you sent:\n" + "\n".join(parts)


async def _after_acks(work: Coroutine[Any, Any, Any]) -> Any:
    # bolt sends an ack's HTTP answer up to 10 ms after ack() (it polls); work that starts a little later
    # leaves the event loop to the acks of a burst of commands first (measured: bench/bench_slack_ack.py).
    await asyncio.sleep(ACK_HEADROOM)
    return await work


@dataclass
class Judgebot:
    """What the listeners share: the history, the rubrics, the judge, Slack's client, and the work after an ack."""

    store: Store
    rubrics: RubricSet
    judge: JudgeClient
    client: AsyncWebClient
    team_url: str | None = None
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    rejudging: set[int] = field(default_factory=set)  # judgments being judged again right now
    _locks: dict[int, tuple[asyncio.Lock, list[int]]] = field(default_factory=dict)

    # -- work after the ack ---------------------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, Any], what: str, *, response_url: str | None = None) -> None:
        """Run `work` after the ack; if it fails, log it and tell the person in a sentence (never a traceback)."""
        task = asyncio.create_task(_after_acks(work), name=what)
        self.tasks.add(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self.tasks.discard(done)
            if done.cancelled() or done.exception() is None:
                return
            log.error("%s failed", what, exc_info=done.exception())
            if response_url:
                self.spawn(self.tell(response_url, f":warning: {OUR_FAULT}"), f"telling about {what}")

        task.add_done_callback(finished)

    async def drain(self, timeout: float) -> None:
        """Let running work finish for up to `timeout` seconds, then cancel what is left and wait for it."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.tasks:  # work spawned meanwhile (a message about a failure) is waited for too
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            await asyncio.wait(set(self.tasks), timeout=left)
        late = set(self.tasks)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=SAY_LATER + 1)

    async def db(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a store call off the event loop, so a busy database never delays an ack."""
        return await asyncio.to_thread(function, *args, **kwargs)

    @asynccontextmanager
    async def one_at_a_time(self, judgment_id: int) -> AsyncIterator[None]:
        """Serialise the votes on one card, so the tally written last is the newest."""
        lock, users = self._locks.setdefault(judgment_id, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[judgment_id]

    def rubric_of(self, made: Judgment | Run) -> Rubric | None:
        """The rubric a judgment or run was made with, if that very version is still loaded."""
        try:
            rubric = self.rubrics.get(made.rubric_name)
        except RubricError:
            return None
        return rubric if rubric.content_hash == made.rubric_hash else None

    # -- talking to one person ------------------------------------------------------------------------------

    async def reply(self, response_url: str | None, message: dict[str, Any]) -> None:
        """Send `message` to one person only, through the response_url Slack gave; failures are logged."""
        if not response_url:
            log.warning("no response_url to send a reply to: %s", message.get("text"))
            return
        webhook = AsyncWebhookClient(response_url, timeout=10, retry_handlers=self.client.retry_handlers)
        try:
            sent = await webhook.send_dict({"response_type": "ephemeral", "replace_original": False, **message})
        except Exception as err:
            log.warning("could not reply to a person: %s", slack_error(err))
            return
        if sent.status_code != 200:
            log.warning("Slack refused a reply to a person: %s %s", sent.status_code, sent.body)

    async def tell(self, response_url: str | None, text: str) -> None:
        """Say one paragraph to one person only."""
        await self.reply(response_url, notice(text))

    # -- judging into a card --------------------------------------------------------------------------------

    async def show_judgment(
        self, *, rubric: Rubric, triple: Triple, origin: Origin, model_name: str | None,
        response_url: str | None, fresh: bool = False, replace_ts: str | None = None,
    ) -> Judgment | None:
        """Save the triple, post a placeholder (or reuse message `replace_ts`), judge, and put the card there."""
        channel, thread = origin.channel_id or "", origin.thread_ts
        try:
            run = await start_triple(self.store, rubric, triple, self.judge.model, model_name=model_name,
                                     fresh=fresh, origin=origin, message_ts=replace_ts)
        except Exception:
            log.exception("saving a judgment for %s in %s failed", origin.user_id, channel)
            await self.tell(response_url, f":warning: {OUR_FAULT}\n\n{echo(triple, SECTION_LIMIT - 300)}")
            return None
        waiting = placeholder(rubric, origin.user_id, model_name).as_message()
        try:
            if replace_ts:
                await self.client.chat_update(channel=channel, ts=replace_ts, **waiting)
                ts = replace_ts
            else:
                ts = (await self.client.chat_postMessage(channel=channel, thread_ts=thread, **waiting))["ts"]
                await self.db(self.store.set_message, run.id, ts)
        except Exception as err:
            log.warning("could not post in %s: %s", channel, slack_error(err))
            await self.db(self.store.update_run, run.id, status="cancelled",
                          stop_reason=f"the card could not be posted ({slack_error(err)})")
            problem = post_problem(err, channel)
            await self.tell(response_url, f"{problem}\n\n{echo(triple, SECTION_LIMIT - len(problem) - 10)}")
            return None
        try:
            judgment = await finish_triple(self.store, run, rubric, self.judge)
        except asyncio.CancelledError:
            await self._stopped(run, channel, ts)
            raise
        except Exception:
            log.exception("judging for %s in %s failed", origin.user_id, channel)
            await self.say_in_place(channel, ts, f":warning: {OUR_FAULT} Nothing was scored.", response_url)
            return None
        await self.show_card(judgment, ts, response_url=response_url)
        return judgment

    async def show_card(self, judgment: Judgment, ts: str | None, *, response_url: str | None) -> None:
        """Put the card of `judgment` into message `ts` (or a new message); cut texts follow, uncut, in the thread."""
        card = result_card(judgment, self.rubric_of(judgment))
        channel = judgment.channel_id or ""
        try:
            if ts:
                await self.client.chat_update(channel=channel, ts=ts, **card.as_message())
            else:
                ts = (await self.client.chat_postMessage(channel=channel, thread_ts=judgment.thread_ts,
                                                         **card.as_message()))["ts"]
                await self.db(self.store.set_message, judgment.run_id, ts)
        except Exception as err:
            log.warning("could not show the card of judgment %s: %s", judgment.id, slack_error(err))
            await self.tell(response_url, f"Judgment #{judgment.id} is saved (`/judge history` lists it), but Slack "
                                          f"refused its card (`{slack_error(err)}`).")
            return
        await self._post_full_detail(card, channel, judgment.thread_ts or ts, response_url)

    async def _post_full_detail(self, card: Card, channel: str, thread: str, response_url: str | None) -> None:
        for extra in full_detail(card.overflow):
            try:
                await self.client.chat_postMessage(channel=channel, thread_ts=thread, **extra.as_message())
            except Exception as err:
                log.warning("could not post the full texts in %s: %s", channel, slack_error(err))
                await self.tell(response_url, "The card is shown, but its full texts could not be posted in its "
                                              f"thread (`{slack_error(err)}`).")
                return

    async def say_in_place(self, channel: str, ts: str, text: str, response_url: str | None) -> None:
        """Replace message `ts` by `text`; if Slack refuses, tell the person instead."""
        try:
            await self.client.chat_update(channel=channel, ts=ts, **notice(text))
        except Exception as err:
            log.warning("could not update message %s in %s: %s", ts, channel, slack_error(err))
            await self.tell(response_url, text)

    async def _stopped(self, run: Run, channel: str, ts: str) -> None:
        """The bot is stopping mid-judgment: show the card if the verdict is in, else say it will come."""
        try:
            row = await asyncio.wait_for(self.db(self.store.first_judgment, run.id), SAY_LATER)
            if row is not None and row.status != "pending":
                await asyncio.wait_for(self.show_card(row, ts, response_url=None), SAY_LATER)
                return
            text = (":double_vertical_bar: The bot was stopped before the judge answered. The judgment is saved and "
                    "this card is completed when the bot is back.")
            await asyncio.wait_for(self.client.chat_update(channel=channel, ts=ts, **notice(text)), SAY_LATER)
        except Exception as err:
            log.warning("could not mark message %s in %s as interrupted: %s", ts, channel, slack_error(err))
