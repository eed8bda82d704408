"""The judge endpoints' shutdown dates read for every face: each endpoint's model list once a day, by whichever process
asks first, kept in the history; within seconds, never in a judgment's way, and a failure changes nothing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.judge.lifetime import JudgeWatch
from bot.llm.listed_shutdowns import ListUnanswered, read_shutdown_dates
from bot.store import ListRead, Store, keep_listed_shutdowns, listed_shutdowns, utcnow

if TYPE_CHECKING:
    from bot.llm.client import JudgeClient

log = logging.getLogger(__name__)

READ_EVERY = timedelta(days=1)  # an endpoint's model list is read again once what was read is this old
LOOK_EVERY = 3600.0  # seconds between two looks of a long-running bot at whether a list is due


async def read_shutdowns(watch: JudgeWatch, store: Store, clients: Iterable[JudgeClient]) -> None:
    """Give `watch` the shutdown dates of the endpoints of `clients`: what the history holds when read within a day,
    else the endpoint's model list read now (within READ_SECONDS) and kept for every process. Never raises: a failure
    is logged at debug and changes nothing."""
    endpoints = {client.endpoint: client for client in clients}
    due = {endpoint: client for endpoint, client in endpoints.items()
           if (at := watch.read_at.get(endpoint)) is None or utcnow() - at >= READ_EVERY}
    if not due:
        return
    try:
        kept = await asyncio.to_thread(listed_shutdowns, store, list(due))
    except Exception as err:
        log.debug("could not look up the judge endpoints' shutdown dates in the history: %s", err)
        return
    await asyncio.gather(*(_joined(watch, store, endpoint, client, kept.get(endpoint))
                           for endpoint, client in due.items()))


async def _joined(watch: JudgeWatch, store: Store, endpoint: str, client: JudgeClient,
                  kept: ListRead | None) -> None:
    """The read of `endpoint` under way for `watch` (a bot starting and its first card ask at once), else a new one;
    a caller cancelled leaves it to finish for the others."""
    task = watch.reading.get(endpoint)
    if task is None or task.done():
        task = asyncio.ensure_future(_read(watch, store, endpoint, client, kept))
        watch.reading[endpoint] = task
    await asyncio.shield(task)


async def _read(watch: JudgeWatch, store: Store, endpoint: str, client: JudgeClient,
                kept: ListRead | None) -> None:
    """One endpoint's dates: the history's when read within a day, else its model list read now and kept (whatever
    it answered; an endpoint that did not answer is asked again next time)."""
    try:
        now = utcnow()
        if kept is not None and now - kept.read_at < READ_EVERY:
            watch.learn(endpoint, kept.dates, kept.read_at)
            return
        dates = await read_shutdown_dates(client.client)
        await asyncio.to_thread(keep_listed_shutdowns, store, endpoint, dates or {}, now)
        watch.learn(endpoint, dates or {}, now)
        if dates:
            log.info("judge endpoint %s: %d models with a shutdown date in its model list", endpoint, len(dates))
    except ListUnanswered as err:
        log.debug("the model list of %s did not come (asked again next time): %s", endpoint, err)
    except Exception as err:
        log.debug("could not read the shutdown dates of %s: %s", endpoint, err)


def remembered_shutdowns(watch: JudgeWatch, store: Store) -> JudgeWatch:
    """`watch` given the shutdown dates every endpoint's model list gave when last read (by runs and the bot), for a
    face that asks no endpoint itself; a history that cannot be read changes nothing."""
    try:
        for endpoint, kept in listed_shutdowns(store).items():
            watch.learn(endpoint, kept.dates, kept.read_at)
    except Exception as err:
        log.debug("could not look up the judge endpoints' shutdown dates in the history: %s", err)
    return watch


async def read_shutdowns_daily(watch: JudgeWatch, store: Store, clients: list[JudgeClient]) -> None:
    """A long-running bot's reading: at start, then whenever a list is due (looked at every LOOK_EVERY seconds),
    until cancelled."""
    while True:
        await read_shutdowns(watch, store, clients)
        await asyncio.sleep(LOOK_EVERY)
