"""Shared fixtures: the local judge and Slack servers, the bot running against them, rubrics, history databases."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.config import Settings
from bot.llm.client import JudgeClient
from bot.llm.configured import make_judge_client
from bot.rubric import RubricSet, load_rubrics
from bot.slack.server import RunningBot, start_bot
from bot.store import Store
from tests.support import forkserver, histories
from tests.support.openai_server import FakeJudgeServer
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, SlackSide


@pytest.fixture(scope="session", autouse=True)
def forkserver_warm(request: pytest.FixtureRequest) -> None:
    """In a run of many tests, each worker's fork server starts importing judgebot at once, beside the first tests,
    rather than when the first command needs it."""
    if len(request.session.items) > 200:
        forkserver.warm()


@pytest.fixture(autouse=True)
def fresh_limiters() -> Iterator[None]:
    """Each test starts as a new process would: no endpoint's limits learned (a port a later test reuses is another
    server), and the limiters of its event loop."""
    from bot.llm.limiters import LIMITERS

    LIMITERS.configure(requests=None, tokens=None)
    LIMITERS.clear()
    yield
    LIMITERS.configure(requests=None, tokens=None)
    LIMITERS.clear()


@pytest.fixture
def judge_server() -> Iterator[FakeJudgeServer]:
    """A fresh local chat completions server; script it with `enqueue` or `responder`."""
    server = FakeJudgeServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def rubrics() -> RubricSet:
    """The rubrics shipped in rubrics/."""
    return load_rubrics()


@pytest.fixture
async def make_client(judge_server: FakeJudgeServer):
    """Build JudgeClients (real AsyncOpenAI over HTTP) pointed at the local server; closed after the test."""
    built: list[JudgeClient] = []

    def build(**overrides) -> JudgeClient:
        options = {"api_key": "test-key", "base_url": judge_server.base_url, "model": "judge-test",
                   "timeout": 10.0, "max_retries": 3, "concurrency": 8, **overrides}
        built.append(make_judge_client(**options))
        return built[-1]

    yield build
    for client in built:
        await client.aclose()


@pytest.fixture(scope="session")
def free_schemas() -> Iterator[None]:
    """The PostgreSQL schemas emptied for another test, dropped when the session ends."""
    yield
    histories.drop_free_schemas()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path, tmp_path_factory: pytest.TempPathFactory,
           free_schemas: None) -> Iterator[str]:
    """A new, empty history database: a SQLite file, then a PostgreSQL schema of its own. For a test that uses
    `store`, it holds a new history already (see tests/support/histories.py)."""
    set_up = "store" in request.fixturenames
    if request.param == "sqlite":
        path = tmp_path / "history.db"
        if set_up:
            histories.new_sqlite_history(path, tmp_path_factory)
        yield f"sqlite:///{path}"
    else:
        yield from histories.postgres_schema_url(set_up)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """The history store over `db_url` (SQLite, then PostgreSQL)."""
    opened = Store.open(db_url)
    yield opened
    opened.engine.dispose()


@pytest.fixture
def slack_server() -> Iterator[FakeSlackServer]:
    """A fresh local Slack-compatible server (Web API, response_url, Socket Mode)."""
    server = FakeSlackServer().start()
    yield server
    server.stop()


@pytest.fixture
def bot_settings(tmp_path, tmp_path_factory: pytest.TempPathFactory, slack_server: FakeSlackServer,
                 judge_server: FakeJudgeServer) -> Settings:
    """Settings of a bot in HTTP mode talking to the local Slack and judge servers, with a new history of its own."""
    histories.new_sqlite_history(tmp_path / "history.db", tmp_path_factory)
    return Settings(
        _env_file=None, slack_bot_token=slack_server.bot_token, slack_signing_secret=SIGNING_SECRET,
        slack_api_url=slack_server.api_url, openai_base_url=judge_server.base_url, openai_api_key="test-key",
        judge_model="judge-test", judge_timeout=10, judge_max_retries=1, judgebot_db=tmp_path / "history.db",
        port=0, progress_edit_seconds=0.2,  # Slack's spacing (3 s) is tested on its own; the rest need not wait it
    )


@pytest.fixture
async def http_bot(bot_settings: Settings):
    """The bot running in HTTP mode on 127.0.0.1 (the real bolt app behind the real aiohttp server)."""
    running = await start_bot(bot_settings, host="127.0.0.1")
    yield running
    await running.stop()


@pytest.fixture
def slack(http_bot: RunningBot, slack_server: FakeSlackServer) -> SlackSide:
    """Slack's side of the HTTP-mode bot: signed requests to its events URL."""
    return SlackSide(slack_server, url=f"http://127.0.0.1:{http_bot.port}/slack/events", secret=SIGNING_SECRET)


@pytest.fixture
async def bot_with(bot_settings, slack_server):
    """Start a bot with some settings changed; returns Slack's side of it."""
    running = []

    async def start(**changes) -> SlackSide:
        bot = await start_bot(bot_settings.model_copy(update=changes), host="127.0.0.1")
        running.append(bot)
        return SlackSide(slack_server, url=f"http://127.0.0.1:{bot.port}/slack/events", secret=SIGNING_SECRET)

    yield start
    for bot in running:
        await bot.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any worker starts: the PostgreSQL test database's catalogs reclaimed if earlier runs bloated them."""
    if not hasattr(session.config, "workerinput"):
        histories.reclaim_catalogs()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first: handed out to the workers at the start, they end before the quick ones do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting imported (judgebot, the test modules, their libraries) is set aside from the garbage collector:
    a worker's full collections then walk only what its tests make, not the whole collected suite each time."""
    import gc

    gc.collect()
    gc.freeze()
