"""An aiohttp application served on 127.0.0.1 from a thread with its own event loop, for the local test servers."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web


class ThreadedServer:
    """Subclasses add their routes in `routes`; `start` serves them on a free port, `stop` tears everything down."""

    thread_name = "local-server"

    def __init__(self) -> None:
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    def routes(self, app: web.Application) -> None:
        """Add the server's routes to `app`."""
        raise NotImplementedError

    async def before_stop(self) -> None:
        """Close what the server holds open (websockets) before the application is cleaned up."""

    def start(self) -> ThreadedServer:
        """Start serving in a background thread; return self once the port is bound."""
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._bind())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name=self.thread_name, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._unbind(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)  # type: ignore[union-attr]
        self._loop.close()
        self._loop = None

    async def _bind(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self.port = self._runner.addresses[0][1]

    async def _unbind(self) -> None:
        await self.before_stop()
        await self._runner.cleanup()  # type: ignore[union-attr]
