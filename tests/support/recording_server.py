"""A foreign host that answers every request with the same CSV and records what it was sent."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from aiohttp import web

from tests.support.threaded import ThreadedServer

DEFAULT_BODY = b"question,reference,answer\nq,r,a\n"


@dataclass
class Recorded:
    """One request the recording server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""


class RecordingServer(ThreadedServer):
    """Answers any GET or POST on any path with 200 and its text/csv body; records each request in `requests`."""

    thread_name = "recording-server"

    def __init__(self, body: bytes = DEFAULT_BODY) -> None:
        super().__init__()
        self.body = body
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The server root URL."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        """Every path, GET and POST."""
        app.router.add_route("GET", "/{path:.*}", self._answer)
        app.router.add_route("POST", "/{path:.*}", self._answer)

    async def _answer(self, request: web.Request) -> web.Response:
        body = await request.read()
        with self._lock:
            self.requests.append(Recorded(request.method, request.path, dict(request.headers), body))
        return web.Response(body=self.body, headers={"Content-Type": "text/csv"})
