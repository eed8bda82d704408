"""The judge endpoints' model lists read for shutdown dates: once a day per endpoint whichever process asks, kept in
the history (SQLite and PostgreSQL), bounded in time, and an endpoint with nothing to say changes nothing."""

from __future__ import annotations

import asyncio
import socket
import time
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from bot.judge.lifetime import JudgeWatch
from bot.llm.configured import make_judge_client
from bot.llm.listed_shutdowns import ListUnanswered, read_shutdown_dates
from bot.runs.shutdown_reads import read_shutdowns, remembered_shutdowns
from bot.store import keep_listed_shutdowns, listed_shutdowns

MODEL = "judge-test"


def client_of(server):
    return make_judge_client(api_key="k", base_url=server.base_url, model=MODEL, timeout=30)


async def test_the_list_is_read_once_a_day_whichever_process_asks(store, judge_server) -> None:
    when = datetime.now(UTC).date() + timedelta(days=30)
    judge_server.list_models({MODEL: when.isoformat(), "other": None})
    async with client_of(judge_server) as client:
        first = JudgeWatch((MODEL,))
        await read_shutdowns(first, store, [client, client.sibling(model="other")])  # one endpoint: one read
        assert judge_server.models_asked() == 1
        assert [(found.judge, found.when.shutdown) for found in first.near()] == [(MODEL, when)]
        await read_shutdowns(first, store, [client])
        second = JudgeWatch((MODEL,))  # another process, or this one restarted: the history's read
        await read_shutdowns(second, store, [client])
        assert judge_server.models_asked() == 1
        assert [found.when.shutdown for found in second.near()] == [when]
        assert [found.when.shutdown for found in remembered_shutdowns(JudgeWatch((MODEL,)), store).near()] == [when]

        with time_machine.travel(datetime.now(UTC) + timedelta(days=1, minutes=1), tick=True):
            judge_server.list_models({MODEL: None})  # the date was withdrawn
            await read_shutdowns(second, store, [client])
            assert judge_server.models_asked() == 2
            assert second.near() == []
    assert [read.dates for read in listed_shutdowns(store).values()] == [{}]


@pytest.mark.parametrize("listed", [404, 401, {"object": "list", "data": [{"id": MODEL, "max_model_len": 4096}]}])
async def test_an_endpoint_with_nothing_to_say_is_read_once_and_changes_nothing(store, judge_server, listed) -> None:
    judge_server.discovery["/v1/models"] = listed
    async with client_of(judge_server) as client:
        watch = JudgeWatch((MODEL, "gpt-4o-mini"))
        before = watch.near(today=date(2026, 12, 1))
        await read_shutdowns(watch, store, [client])
        await read_shutdowns(JudgeWatch((MODEL,)), store, [client])
        assert watch.near(today=date(2026, 12, 1)) == before  # gpt-4o-mini by the shipped table, as before
        assert judge_server.models_asked() == 1  # once for the day, whatever it answered
        await asyncio.to_thread(keep_listed_shutdowns, store, client.endpoint, {MODEL: date(2026, 12, 2)},
                                datetime(2000, 1, 1))  # an older read kept late: the newer one stands
    [read] = listed_shutdowns(store).values()
    assert read.dates == {} and read.read_at > datetime(2026, 1, 1)


async def test_an_endpoint_that_does_not_answer_is_given_up_within_the_bound(store) -> None:
    silent = socket.socket()  # takes the connection, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    gone = socket.socket()
    gone.bind(("127.0.0.1", 0))  # bound, not listening: refuses the connection
    try:
        for sock in (silent, gone):
            client = make_judge_client(api_key="k", base_url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1",
                                       model=MODEL, timeout=120)
            async with client:
                started = time.monotonic()
                with pytest.raises(ListUnanswered):
                    await read_shutdown_dates(client.client, seconds=0.5)
                assert time.monotonic() - started < 2
            watch = JudgeWatch((MODEL,))
            await read_shutdowns(watch, store, [client])  # a failure: logged, nothing kept, asked again next time
            assert watch.read_at == {} and listed_shutdowns(store) == {}
    finally:
        silent.close()
        gone.close()
