"""Shared fixtures: the local judge and Slack servers, the bot running against them, rubrics, history databases."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from bot.config import Settings
from bot.llm.client import JudgeClient
from bot.llm.configured import make_judge_client
from bot.rubric import RubricSet, load_rubrics
from bot.slack.server import RunningBot, start_bot
from bot.store import Store, make_engine, migrate
from tests.support import forkserver
from tests.support.openai_server import FakeJudgeServer
from tests.support.slack_server import FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, SlackSide

POSTGRES_URL = os.environ.get("JUDGEBOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
POSTGRES_HELP = (
    f"PostgreSQL is not reachable at {POSTGRES_URL}. Start a server (trust auth, a database named test) or set "
    "JUDGEBOT_TEST_POSTGRES_URL to one, to run the store tests on PostgreSQL too."
)


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


_ADMIN: list[sa.Engine] = []  # one connection pool to the test database for the whole session


def _admin() -> sa.Engine:
    if not _ADMIN:
        try:
            admin = sa.create_engine(POSTGRES_URL)
            with admin.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except Exception:
            if os.environ.get("JUDGEBOT_REQUIRE_POSTGRES") == "1":
                pytest.fail(POSTGRES_HELP)
            pytest.skip(POSTGRES_HELP)
        _ADMIN.append(admin)
    return _ADMIN[0]


def _postgres_schema_url() -> Iterator[str]:
    admin = _admin()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """A new, empty history database: a SQLite file, then a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'history.db'}"
    else:
        yield from _postgres_schema_url()


_SQLITE_NEW: list[Path] = []  # a new SQLite history, set up once per process


def _new_sqlite_history(path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Put at `path` the file a new history is: set up once per process by `Store.open`, then copied.

    Creating every table compiles and sends each statement, about 25 ms, for each of hundreds of tests; a copy of the
    same file costs under one. Where a history's creation is itself tested (the migrations, a first run saying where
    its history is, a command's own new file) the test opens an empty path of its own.
    """
    if not _SQLITE_NEW:
        made = tmp_path_factory.mktemp("new_history") / "history.db"
        Store.open(f"sqlite:///{made}").engine.dispose()
        _SQLITE_NEW.append(made)
    shutil.copyfile(_SQLITE_NEW[0], path)


_MIGRATION: list[tuple[str, Any]] = []  # what migrating an empty PostgreSQL schema sends, recorded once per process


def _migrated(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Store:
    """`Store.open(db_url)` of a new history: on SQLite a copy of one set up once, on PostgreSQL the statements that set
    it up recorded once, then replayed.

    Setting up a history looks the database over before it creates each table, for each of hundreds of tests;
    sending the statements again builds the same schema for less (`schema_diffs` and `structure` check it where the
    schema itself is tested, on an empty database of its own).
    """
    if not db_url.startswith("postgresql"):
        _new_sqlite_history(Path(sa.make_url(db_url).database or ""), tmp_path_factory)
        return Store.open(db_url)
    engine = make_engine(db_url)
    try:
        if _MIGRATION:
            # The DDL in one round trip (statements without parameters may go together); what looked the database
            # over (its has-table queries and the lock) needs no replaying; the rest (the versions written) in order.
            ddl = ";\n".join(statement for statement, parameters in _MIGRATION if not parameters)
            with engine.begin() as conn:
                conn.exec_driver_sql(ddl)
                for statement, parameters in _MIGRATION:
                    if parameters and not statement.lstrip().upper().startswith("SELECT"):
                        conn.exec_driver_sql(statement, parameters)
        else:
            def record(conn, cursor, statement, parameters, context, executemany) -> None:
                _MIGRATION.append((statement, parameters))

            sa.event.listen(engine, "before_cursor_execute", record)
            migrate(engine)
            sa.event.remove(engine, "before_cursor_execute", record)
    finally:
        engine.dispose()
    return Store.open(db_url)


@pytest.fixture
def store(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """The history store over `db_url` (SQLite, then PostgreSQL)."""
    opened = _migrated(db_url, tmp_path_factory)
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
    _new_sqlite_history(tmp_path / "history.db", tmp_path_factory)
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first: handed out to the workers at the start, they end before the quick ones do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting imported (judgebot, the test modules, their libraries) is set aside from the garbage collector:
    a worker's full collections then walk only what its tests make, not the whole collected suite each time."""
    import gc

    gc.collect()
    gc.freeze()
