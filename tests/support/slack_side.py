"""Plays Slack's side towards the bot: signed HTTP requests, or Socket Mode envelopes, shaped as Slack sends them."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
from slack_sdk.signature import SignatureVerifier

from tests.support.slack_server import FakeSlackServer

SIGNING_SECRET = "test-signing-secret"
TEAM = "T0TEST"
_ids = itertools.count(1)


@dataclass
class Answer:
    """What the bot answered to one request: HTTP status (200 for a Socket Mode ack) and the body, parsed."""

    status: int
    body: Any
    seconds: float

    def text(self) -> str:
        """Every text of the answer, blocks included, as one string to search."""
        return json.dumps(self.body, ensure_ascii=False)


class SlackSide:
    """Sends slash commands, form submissions, button clicks and events to a running bot, as Slack would."""

    def __init__(self, slack: FakeSlackServer, *, url: str | None = None, secret: str | None = None) -> None:
        self.slack, self.url, self.secret = slack, url, secret  # no url: Socket Mode

    # -- transport ------------------------------------------------------------------------------------------

    async def post(self, body: str, content_type: str, *, headers: dict[str, str] | None = None,
                   signed: bool = True, timestamp: int | None = None, secret: str | None = None) -> Answer:
        """POST a raw body to the bot's events URL, signed with the signing secret unless told otherwise."""
        assert self.url is not None, "post() is for HTTP mode"
        sent = {"Content-Type": content_type}
        if signed:
            stamp = str(timestamp if timestamp is not None else int(time.time()))
            verifier = SignatureVerifier(secret or self.secret or "")
            sent |= {"X-Slack-Request-Timestamp": stamp,
                     "X-Slack-Signature": verifier.generate_signature(timestamp=stamp, body=body)}
        sent |= headers or {}
        started = time.perf_counter()
        async with aiohttp.ClientSession() as session, session.post(self.url, data=body.encode(),
                                                                    headers=sent) as response:
            raw = await response.text()
            try:
                parsed: Any = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw
            return Answer(response.status, parsed, time.perf_counter() - started)

    async def _deliver(self, kind: str, payload: dict[str, Any], *, retry_num: int | None = None,
                       retry_reason: str = "") -> Answer:
        started = time.perf_counter()
        if self.url is None:
            envelope = await self.slack.async_send_envelope(kind, payload, retry_attempt=retry_num or 0,
                                                            retry_reason=retry_reason if retry_num else "")
            ack = await self.slack.async_wait_ack(envelope)
            return Answer(200, ack.get("payload"), time.perf_counter() - started)
        if kind == "slash_commands":
            return await self.post(urlencode(payload), "application/x-www-form-urlencoded")
        if kind == "interactive":
            return await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        headers = {} if retry_num is None else {"X-Slack-Retry-Num": str(retry_num),
                                                "X-Slack-Retry-Reason": retry_reason}
        return await self.post(json.dumps(payload), "application/json", headers=headers)

    # -- what people do -------------------------------------------------------------------------------------

    def command_payload(self, text: str, *, channel: str = "C0GENERAL", user: str = "U0USER",
                        team: str = TEAM, org: str | None = None) -> dict[str, Any]:
        """The fields of a `/judge` slash command typed in workspace `team` (of organisation `org`, which installed
        the app org-wide)."""
        n = next(_ids)
        payload = {"token": "legacy", "team_id": team, "team_domain": "judgebot-test", "channel_id": channel,
                   "channel_name": channel.lower(), "user_id": user, "user_name": user.lower(), "command": "/judge",
                   "text": text, "api_app_id": "A0TEST", "is_enterprise_install": "false",
                   "response_url": self.slack.response_url(f"cmd{n}"), "trigger_id": f"trigger.{n}"}
        if org is not None:
            payload |= {"enterprise_id": org, "enterprise_name": f"Org {org}", "is_enterprise_install": "true"}
        return payload

    async def command(self, text: str, *, channel: str = "C0GENERAL", user: str = "U0USER",
                      team: str = TEAM, org: str | None = None) -> Answer:
        """Type `/judge <text>` in `channel` (of workspace `team`, of organisation `org` when it installed org-wide)."""
        return await self._deliver("slash_commands", self.command_payload(text, channel=channel, user=user, team=team,
                                                                          org=org))

    async def submit(self, view: dict[str, Any], *, rubric: str, model: str = "", question: str = "",
                     reference: str = "", answer: str = "", context: str | None = None, user: str = "U0USER",
                     team: str = TEAM) -> Answer:
        """Fill in and submit the form `view` (as the bot opened it), as a person of workspace `team`; its Retrieved
        context field is sent when `context` is given (else as a form opened before it had one)."""
        texts = [("question", question), ("reference", reference), ("answer", answer)]
        if context is not None:
            texts.append(("context", context))
        values = {
            "rubric": {"rubric": {"type": "static_select", "selected_option": {"value": rubric}}},
            "model": {"model": {"type": "plain_text_input", "value": model or None}},
            **{name: {name: {"type": "plain_text_input", "value": value or None}} for name, value in texts},
        }
        payload = {"type": "view_submission", "team": {"id": team, "domain": "judgebot-test"},
                   "user": {"id": user, "team_id": team}, "api_app_id": "A0TEST", "token": "legacy",
                   "trigger_id": f"trigger.{next(_ids)}",
                   "view": {**view, "id": "V0FORM", "state": {"values": values}}}
        return await self._deliver("interactive", payload)

    async def vote(self, card: dict, *, agree: bool, channel: str = "C0GENERAL", user: str = "U0USER") -> Answer:
        """Click Agree or Disagree, Slack's feedback buttons on a card, as `user`."""
        from bot.slack.views.card import FEEDBACK
        from tests.support.slack_messages import feedback

        value = feedback(card)["agree" if agree else "disagree"]
        return await self.click(FEEDBACK, value, channel=channel, message_ts=card["ts"], user=user,
                                kind="feedback_buttons")

    async def click(self, action_id: str, value: str, *, channel: str | None, message_ts: str,
                    user: str = "U0USER", team: str | None = TEAM, user_team: str | None = TEAM,
                    kind: str = "button") -> Answer:
        """Click the button `action_id` (with `value`) on the message `message_ts`, in workspace `team`, as a
        person of workspace `user_team` (None for any of channel, team or user_team: the payload names none)."""
        n = next(_ids)
        payload = {"type": "block_actions", "user": {"id": user, "team_id": user_team}, "api_app_id": "A0TEST",
                   "token": "legacy", "trigger_id": f"trigger.{n}", "team": {"id": team, "domain": "judgebot-test"},
                   "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                                 "is_ephemeral": False},
                   "channel": {"id": channel, "name": (channel or "").lower()},
                   "message": {"ts": message_ts, "type": "message"},
                   "response_url": self.slack.response_url(f"click{n}"),
                   "actions": [{"action_id": action_id, "block_id": "b", "value": value, "type": kind,
                                "action_ts": str(time.time())}]}
        if team is None:
            del payload["team"]
        if user_team is None:
            del payload["user"]["team_id"]
        if channel is None:
            del payload["channel"], payload["container"]["channel_id"]
        return await self._deliver("interactive", payload)

    def event_payload(self, event: dict[str, Any], *, event_id: str | None = None,
                      team: str = TEAM) -> dict[str, Any]:
        """The event_callback envelope of an Events API event of workspace `team` (a new event_id unless given)."""
        return {"token": "legacy", "team_id": team, "api_app_id": "A0TEST", "event": event,
                "type": "event_callback", "event_id": event_id or f"Ev{next(_ids):08d}",
                "event_time": int(time.time())}

    async def send_event(self, payload: dict[str, Any], *, retry_num: int | None = None,
                         retry_reason: str = "http_timeout") -> Answer:
        """Deliver an event_payload; with retry_num, as Slack's retry number retry_num of that delivery."""
        return await self._deliver("events_api", payload, retry_num=retry_num, retry_reason=retry_reason)

    async def event(self, event: dict[str, Any], *, event_id: str | None = None, retry_num: int | None = None,
                    retry_reason: str = "http_timeout") -> Answer:
        """Deliver an Events API event; event_id and retry_num make it a retry of an earlier delivery."""
        return await self.send_event(self.event_payload(event, event_id=event_id), retry_num=retry_num,
                                     retry_reason=retry_reason)
