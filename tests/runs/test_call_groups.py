"""Tests for bot.runs.call_groups: calls gathered into groups, each caller given its own result or the group's error."""

from __future__ import annotations

import asyncio

import pytest

from bot.runs.call_groups import Grouped


class Recorder:
    """A serve function that records each group and can be held until released, or made to fail."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.release = asyncio.Event()
        self.release.set()
        self.fail_on: set[int] = set()

    async def __call__(self, items: list[int]) -> list[int]:
        self.groups.append(list(items))
        await self.release.wait()
        if self.fail_on & set(items):
            raise OSError("disk full")
        return [item * 10 for item in items]


async def test_items_asked_while_a_group_is_served_go_together_in_the_next() -> None:
    serve = Recorder()
    serve.release.clear()
    grouped = Grouped(serve, limit=64)
    first = grouped.submit(1)
    await asyncio.sleep(0)  # the first group (of one) is being served
    later = [grouped.submit(n) for n in range(2, 7)]
    serve.release.set()
    assert await first == 10
    assert [await f for f in later] == [20, 30, 40, 50, 60]
    assert serve.groups == [[1], [2, 3, 4, 5, 6]]


async def test_a_group_waits_for_others_then_goes_at_the_limit_without_waiting_longer() -> None:
    serve = Recorder()
    grouped = Grouped(serve, limit=4, wait=30.0)  # a wait no test could sit through
    results = [grouped.submit(n) for n in range(1, 10)]
    await asyncio.wait_for(asyncio.gather(*results[:8]), 5)
    assert serve.groups == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert not results[8].done()  # the ninth waits for company, up to the wait
    await asyncio.wait_for(grouped.close(), 5)  # closing serves it at once
    assert await results[8] == 90 and serve.groups[-1] == [9]


async def test_a_short_wait_gathers_what_comes_within_it() -> None:
    serve = Recorder()
    grouped = Grouped(serve, limit=64, wait=0.2)
    first = grouped.submit(1)
    await asyncio.sleep(0.01)
    second = grouped.submit(2)
    assert (await first, await second) == (10, 20)
    assert serve.groups == [[1, 2]]


async def test_a_failed_group_fails_each_of_its_callers_and_the_next_group_is_still_served() -> None:
    serve = Recorder()
    serve.release.clear()
    serve.fail_on = {3}
    grouped = Grouped(serve, limit=64)
    first = grouped.submit(1)
    await asyncio.sleep(0)
    failing = [grouped.submit(2), grouped.submit(3)]
    serve.release.set()
    assert await first == 10
    for result in failing:
        with pytest.raises(OSError, match="disk full"):
            await result
    assert isinstance(grouped.failure, OSError)
    assert await grouped.submit(4) == 40  # the next group is served as usual
    assert serve.groups == [[1], [2, 3], [4]]


async def test_room_waits_while_a_full_group_waits_behind_the_one_being_served() -> None:
    serve = Recorder()
    serve.release.clear()
    grouped = Grouped(serve, limit=3)
    results = [grouped.submit(n) for n in (1, 2, 3)]
    await asyncio.sleep(0)  # the first group is taken, and held
    assert serve.groups == [[1, 2, 3]]
    # one group being served is no reason to wait: every caller would start again at once when it ends
    await asyncio.wait_for(grouped.room(), 5)
    results += [grouped.submit(n) for n in (4, 5)]
    await asyncio.wait_for(grouped.room(), 5)  # two wait behind it: fewer than a group
    results.append(grouped.submit(6))
    room = asyncio.create_task(grouped.room())
    await asyncio.sleep(0.05)
    assert not room.done()  # a full group waits behind the one being served: callers ask faster than it is served
    serve.release.set()
    await asyncio.wait_for(room, 5)
    assert [await r for r in results] == [10, 20, 30, 40, 50, 60]
    assert serve.groups == [[1, 2, 3], [4, 5, 6]]


async def test_a_caller_that_stops_waiting_still_has_its_item_served() -> None:
    serve = Recorder()
    serve.release.clear()
    grouped = Grouped(serve, limit=64)
    caller = asyncio.create_task(grouped(7))
    await asyncio.sleep(0)
    caller.cancel()
    serve.release.set()
    await grouped.close()
    assert serve.groups == [[7]]  # what was handed over is served (a verdict paid for is kept)
