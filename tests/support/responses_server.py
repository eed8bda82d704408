"""The local judge server with OpenAI's Responses API beside chat completions and the Batch API: POST /v1/responses
(live, or in the background with a completion window), GET /v1/responses/{id} and POST /v1/responses/{id}/cancel,
with GPT-6's rules enforced in the Responses API's names, every create counted per slot, an outage on demand, and
responses that cannot be looked at or creates that never answer, one slot at a time."""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.batch_server import BatchJudgeServer
from tests.support.openai_server import Reply
from tests.support.response_objects import WINDOW_SHARES, chat_view, refusal, response_object, with_reasoning


@dataclass
class Background:
    """One background response as the server keeps it: what it was asked, its reply (computed at create), and when
    it ends."""

    id: str
    body: dict[str, Any]
    reply: Reply
    window: str
    ready_at: float  # time.monotonic() from which a retrieve finds it ended
    status: str = "queued"
    polls: int = 0
    billed: bool = False


@dataclass
class Tally:
    """Tokens billed, by completion window ("live" for a request answered at once)."""

    tokens: dict[str, collections.Counter[str]] = field(default_factory=lambda: collections.defaultdict(
        collections.Counter))


class ResponsesJudgeServer(BatchJudgeServer):
    """A BatchJudgeServer that also serves the Responses API; `enforce_gpt6` applies GPT-6's rules to it too.

    A background response ends `background_seconds` after it was created (never while `hold` is set), `fail` names
    slots (metadata judgebot_slot) whose response fails. While `down` is set, every Responses request (create, poll,
    cancel) is answered with it, as an endpoint in an outage answers (a 503, a proxy's page), and counted in
    `unanswered`. `broken` maps slots to what every look at their response is answered with (a 500, a body that is
    not a response) while the others are answered; the create of a slot in `stalled` is received and counted, and
    then never answered (until the slot leaves `stalled` or the server stops). `creates` counts the creates of each
    slot; `refused` keeps every body refused with a 400.
    """

    thread_name = "fake-responses-judge"

    def __init__(self) -> None:
        super().__init__()
        self.background_seconds = 0.0
        self.hold = False
        self.fail: set[str] = set()
        self.backgrounds: dict[str, Background] = {}
        self.creates: collections.Counter[str] = collections.Counter()
        self.cancels: list[str] = []
        self.polls = 0
        self.down: Reply | None = None
        self.unanswered = 0
        self.broken: dict[str, Reply] = {}
        self.stalled: set[str] = set()
        self._stopping = False
        self.response_requests: list[dict[str, Any]] = []  # every body POSTed to /v1/responses, as it came
        self.tally = Tally()
        self._responses_lock = threading.Lock()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/responses", self._create_response)
        app.router.add_get("/v1/responses/{id}", self._retrieve_response)
        app.router.add_post("/v1/responses/{id}/cancel", self._cancel_response)

    def billed_usd(self, price_in: float, price_out: float) -> float:
        """What the server billed, at these Standard prices per million tokens, each window at its share."""
        total = 0.0
        for window, tokens in self.tally.tokens.items():
            share = 1.0 if window == "live" else WINDOW_SHARES[window]
            total += (tokens["in"] * price_in + tokens["out"] * price_out) * share / 1_000_000
        return total

    def start(self) -> ResponsesJudgeServer:
        self._stopping = False
        super().start()
        return self

    async def before_stop(self) -> None:
        self._stopping = True  # a stalled create lets go
        await super().before_stop()

    def _outage(self) -> web.Response | None:
        """The answer of an endpoint that is down (while `down` is set), else None."""
        down = self.down
        if down is None:
            return None
        with self._responses_lock:
            self.unanswered += 1
        return _answer(down)

    async def _stall(self, slot: str) -> web.Response:
        """A create received and never answered: the client gives up, or is killed, before it learns the id."""
        while slot in self.stalled and not self._stopping:
            await asyncio.sleep(0.02)
        return web.json_response({"error": {"message": "gave up", "type": "server_error"}}, status=500)

    async def _create_response(self, request: web.Request) -> web.Response:
        if (outage := self._outage()) is not None:
            return outage
        body = await request.json()
        with self._responses_lock:
            self.response_requests.append(body)
        found = refusal(body, gpt6=self.enforce_gpt6)
        if found is not None:
            with self._lock:
                self.refused.append(body)
            return web.json_response({"error": found.error}, status=found.status)
        slot = str((body.get("metadata") or {}).get("judgebot_slot", ""))
        if body.get("background") and slot in self.stalled:
            with self._responses_lock:
                self.creates[slot] += 1
            return await self._stall(slot)
        reply = self._next_reply(chat_view(body))
        if self.enforce_gpt6:
            reply = with_reasoning(body, reply)
        if reply.status != 200 or reply.body is not None:
            return web.json_response({"error": reply.error}, status=reply.status, headers=reply.headers)
        with self._responses_lock:
            response_id = f"resp_{len(self.response_requests)}"
            if body.get("background"):
                self.creates[slot] += 1
                window = (body.get("background_options") or {}).get("completion_window", "soonest")
                self.backgrounds[response_id] = Background(response_id, body, reply, window,
                                                           time.monotonic() + self.background_seconds)
                return web.json_response(response_object(response_id, body, None, "queued"), headers=reply.headers)
            self._bill("live", reply)
        status = "incomplete" if reply.finish_reason == "length" else "completed"
        return web.json_response(response_object(response_id, body, reply, status), headers=reply.headers)

    async def _retrieve_response(self, request: web.Request) -> web.Response:
        if (outage := self._outage()) is not None:
            return outage
        with self._responses_lock:
            self.polls += 1
            found = self.backgrounds.get(request.match_info["id"])
            if found is None:
                return web.json_response({"error": {"message": "No response found", "type": "invalid_request_error",
                                                    "param": None, "code": "not_found"}}, status=404)
            found.polls += 1
            if (broken := self.broken.get(str(found.body.get("metadata", {}).get("judgebot_slot")))) is not None:
                return _answer(broken)
            if found.status in ("queued", "in_progress"):
                if self.hold or time.monotonic() < found.ready_at:
                    found.status = "in_progress"
                elif str(found.body.get("metadata", {}).get("judgebot_slot")) in self.fail:
                    found.status = "failed"
                else:
                    found.status = "incomplete" if found.reply.finish_reason == "length" else "completed"
                    self._bill(found.window, found.reply)
            answer = response_object(found.id, found.body, found.reply, found.status)
        return web.json_response(answer)

    async def _cancel_response(self, request: web.Request) -> web.Response:
        if (outage := self._outage()) is not None:
            return outage
        with self._responses_lock:
            found = self.backgrounds.get(request.match_info["id"])
            if found is None:
                return web.json_response({"error": {"message": "No response found", "type": "invalid_request_error",
                                                    "param": None, "code": "not_found"}}, status=404)
            self.cancels.append(found.id)
            if found.status in ("queued", "in_progress"):
                found.status = "cancelled"
            answer = response_object(found.id, found.body, found.reply, found.status)
        return web.json_response(answer)

    def _bill(self, window: str, reply: Reply) -> None:
        reasoning = reply.reasoning_tokens or 0
        self.tally.tokens[window].update({"in": reply.tokens_in, "out": reply.tokens_out + reasoning,
                                          "reasoning": reasoning})
        with self._lock:
            self.billed.update(tokens_in=reply.tokens_in, tokens_out=reply.tokens_out + reasoning,
                               tokens_cached=reply.cached_tokens or 0, tokens_reasoning=reasoning)


def _answer(reply: Reply) -> web.Response:
    """What `reply` scripts as an HTTP answer that is not a response: an error, or a body sent as is."""
    if reply.body is not None:
        return web.Response(text=reply.body, status=reply.status, content_type=reply.content_type,
                            headers=reply.headers)
    return web.json_response({"error": reply.error}, status=reply.status, headers=reply.headers)
