"""Socket Mode: apps.connections.open, the websocket, envelopes sent to the bot and its acks."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.slack_server.core import SlackCore


class SocketMode(SlackCore):
    """The Socket Mode websocket (/link/): envelopes out, acks in, and disconnects on demand."""

    def _connections_open(self, params: dict) -> dict:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket={uuid.uuid4()}"}

    async def before_stop(self) -> None:
        """Close the websockets."""
        await self._close_sockets()

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)  # answers pings with pongs that echo their payload
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0TEST"},
                            "debug_info": {"host": "local"}})
        self._sockets.append(ws)
        self.connected.set()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(msg.data)
                except ValueError:
                    continue
                if isinstance(data, dict) and data.get("envelope_id"):
                    with self._acked:
                        self.acks[data["envelope_id"]] = data
                        self._acked.notify_all()
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)
            if not self._sockets:
                self.connected.clear()
        return ws

    async def _send_to_socket(self, message: dict, connection: int = -1) -> None:
        open_sockets = [ws for ws in self._sockets if not ws.closed]
        if not open_sockets:
            raise AssertionError("no Socket Mode client is connected")
        await open_sockets[connection].send_json(message)

    def connections(self) -> int:
        """How many Socket Mode connections are open (Slack spreads envelopes over up to 10 of them)."""
        return len([ws for ws in self._sockets if not ws.closed])

    async def _close_sockets(self) -> None:
        self.connected.clear()
        for ws in list(self._sockets):
            await ws.close()

    def send_envelope(self, type: str, payload: dict, *, retry_attempt: int = 0, retry_reason: str = "",
                      accepts_response_payload: bool | None = None, connection: int = -1) -> str:
        """Send an envelope to a connected Socket Mode client (`connection`: the index among the open ones, in the
        order they connected; the newest by default) and return its envelope_id."""
        if not self.connected.wait(5):
            raise AssertionError("no Socket Mode client connected within 5s")
        envelope_id = str(uuid.uuid4())
        message: dict[str, Any] = {"envelope_id": envelope_id, "type": type, "payload": payload}
        if accepts_response_payload is None and type in ("slash_commands", "interactive"):
            accepts_response_payload = True
        if accepts_response_payload is not None:
            message["accepts_response_payload"] = accepts_response_payload
        message["retry_attempt"] = retry_attempt
        message["retry_reason"] = retry_reason
        asyncio.run_coroutine_threadsafe(self._send_to_socket(message, connection),
                                         self._loop).result(5)  # type: ignore[arg-type]
        return envelope_id

    async def async_send_envelope(self, type: str, payload: dict, *, retry_attempt: int = 0, retry_reason: str = "",
                                  accepts_response_payload: bool | None = None, connection: int = -1) -> str:
        """Like send_envelope, without blocking the caller's event loop."""
        return await asyncio.to_thread(self.send_envelope, type, payload, retry_attempt=retry_attempt,
                                       retry_reason=retry_reason, accepts_response_payload=accepts_response_payload,
                                       connection=connection)

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict:
        """Block until the client acks the envelope and return its ack message."""
        with self._acked:
            if not self._acked.wait_for(lambda: envelope_id in self.acks, timeout):
                raise AssertionError(f"no ack for envelope {envelope_id} within {timeout}s; acks: {list(self.acks)}")
            return self.acks[envelope_id]

    async def async_wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict:
        """Like wait_ack, without blocking the caller's event loop."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                ack = self.acks.get(envelope_id)
                if ack is not None:
                    return ack
                if time.monotonic() >= deadline:
                    acks = list(self.acks)
                    raise AssertionError(f"no ack for envelope {envelope_id} within {timeout}s; acks: {acks}")
            await asyncio.sleep(0.01)

    def disconnect_sockets(self) -> None:
        """Close every open websocket; the client should reconnect."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._close_sockets(), self._loop).result(10)
