"""The web view served on 127.0.0.1 over a real SQLite history, and a client that reads its pages over HTTP."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import aiohttp
import pytest

from bot.config import Settings
from bot.rubric import RubricSet
from bot.store import Store
from bot.view import Viewer, make_view_app, serve_view
from bot.view.serving import loopback_hosts
from bot.view.viewer import ViewerFor


@dataclass
class Page:
    """A page as the browser got it."""

    status: int
    text: str
    headers: dict[str, str]


@dataclass
class Browser:
    """A session with the view: one cookie jar, as one browser."""

    base: str
    http: aiohttp.ClientSession

    async def get(self, path: str, **params: str) -> Page:
        async with self.http.get(self.base + path, params=params, allow_redirects=True) as response:
            return Page(response.status, await response.text(), dict(response.headers))

    async def post(self, path: str, data: dict[str, str], *, follow: bool = True) -> Page:
        async with self.http.post(self.base + path, data=data, allow_redirects=follow) as response:
            return Page(response.status, await response.text(), dict(response.headers))


def csrf_of(page: Page) -> str:
    """The CSRF token a page's forms carry."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


@pytest.fixture
def history(tmp_path) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    yield store
    store.engine.dispose()


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 'h.db'}")


@pytest.fixture
async def open_view(settings: Settings, history: Store, rubrics: RubricSet
                    ) -> AsyncIterator[Callable[..., object]]:
    """Serve the view for a viewer (default: the person at this machine) and give a Browser of it."""
    tasks: list[asyncio.Task[None]] = []
    sessions: list[aiohttp.ClientSession] = []

    async def open_(viewer: Viewer | None = None) -> Browser:
        viewer_for: ViewerFor | None = None
        if viewer is not None:
            async def viewer_for(request) -> Viewer:  # type: ignore[no-redef]
                return viewer
        app = make_view_app(settings, history, rubrics=rubrics, allowed_hosts=loopback_hosts("127.0.0.1"),
                            **({"viewer_for_request": viewer_for} if viewer_for else {}))
        started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        tasks.append(asyncio.create_task(serve_view(app, host="127.0.0.1", port=0, started=started)))
        port = await asyncio.wait_for(started, 5)
        http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        sessions.append(http)
        return Browser(f"http://127.0.0.1:{port}", http)

    yield open_
    for http in sessions:
        await http.close()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
