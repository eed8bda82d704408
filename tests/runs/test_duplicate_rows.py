"""Tests for bot.runs.duplicate_rows: one row at a time per key, and which rows must look in the cache again."""

from __future__ import annotations

import asyncio

from bot.runs.duplicate_rows import KEEP_AT_LEAST, DuplicateRows


async def taken(twins: DuplicateRows, key: str, look: int) -> tuple[asyncio.Event, bool]:
    claimed = await twins.claim(key, look, asyncio.Event())
    assert claimed is not None
    return claimed


async def test_a_second_row_with_a_key_waits_for_the_first_and_learns_it_settled_since_its_look() -> None:
    twins, stop = DuplicateRows(), asyncio.Event()
    look = twins.look(2)
    first = await twins.claim("k", look, stop)
    assert first is not None and first[1] is False  # nothing settled with this key since the look
    second = asyncio.create_task(twins.claim("k", look, stop))
    await asyncio.sleep(0.01)
    assert not second.done()  # the first still holds the key
    twins.release("k", first[0])
    claimed = await asyncio.wait_for(second, 5)
    assert claimed is not None and claimed[1] is True  # settled after the look: its verdict may be in the cache now
    assert twins.unchecked == {}


async def test_a_key_settled_before_a_look_is_not_looked_up_again() -> None:
    twins = DuplicateRows()
    done, _ = await taken(twins, "k", twins.look(1))
    twins.release("k", done)
    _, since = await taken(twins, "k", twins.look(1))  # this look reads the cache after the verdict was settled
    assert since is False


async def test_a_row_waiting_when_the_run_stops_gives_up_its_turn() -> None:
    twins, stop = DuplicateRows(), asyncio.Event()
    look = twins.look(2)
    first = await twins.claim("k", look, stop)
    assert first is not None
    waiting = asyncio.create_task(twins.claim("k", look, stop))
    await asyncio.sleep(0.01)
    stop.set()
    twins.release("k", first[0])
    assert await asyncio.wait_for(waiting, 5) is None
    assert twins.unchecked == {} and twins.inflight == {}


async def test_pruning_keeps_what_a_row_still_to_be_checked_needs() -> None:
    twins = DuplicateRows()
    old = twins.look(1)  # a row of this look waits its turn throughout
    for n in range(3 * KEEP_AT_LEAST):
        done, _ = await taken(twins, f"key {n}", twins.look(1))
        twins.release(f"key {n}", done)
    done, since = await taken(twins, "key 0", old)
    assert since is True  # settled after its look, and still known after the pruning
    twins.release("key 0", done)
    # Once every row is checked, what no row can need is forgotten: the keys kept stay few.
    for n in range(3 * KEEP_AT_LEAST):
        done, _ = await taken(twins, f"new {n}", twins.look(1))
        twins.release(f"new {n}", done)
    assert len(twins.settled) <= 2 * KEEP_AT_LEAST
