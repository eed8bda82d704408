"""A local forwarding HTTP proxy that records the target of every request it passes on."""

from __future__ import annotations

import threading

import aiohttp
from aiohttp import web

from tests.support.threaded import ThreadedServer


class ForwardingProxy(ThreadedServer):
    """A plain HTTP proxy: takes each request in absolute form, records its target and passes it on."""

    thread_name = "forwarding-proxy"

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The proxy's address, as HTTPS_PROXY names it."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        """Every method and target."""
        app.router.add_route("*", "/{path:.*}", self._forward)

    async def _forward(self, request: web.Request) -> web.Response:
        target = request.raw_path  # absolute form: http://host:port/path
        with self._lock:
            self.targets.append(target)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "proxy-connection")}
        async with aiohttp.ClientSession() as session, session.request(
                request.method, target, headers=headers, data=await request.read(), allow_redirects=False) as answer:
            body = await answer.read()
            return web.Response(status=answer.status, body=body,
                                headers={"Content-Type": answer.headers.get("Content-Type", "application/octet-stream")})

