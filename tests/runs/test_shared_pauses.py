"""A judge endpoint's pause told between processes on one database: a 429 one process gets holds another's requests to
that endpoint and model, and a pause this process learns is told to the others (SQLite and PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import timedelta

import pytest

from bot.llm.limiters import LIMITERS
from bot.runs.shared_pauses import SharedPauses
from bot.store import current_pauses, process_name, tell_pause, utcnow

ENDPOINT, MODEL = "http://judge.example/v1", "judge-x"
ASK = [{"role": "user", "content": "How do I register?"}]

ANOTHER_PROCESS = """
import sys
from datetime import timedelta
from bot.store import Store, utcnow
from bot.store import tell_pause
tell_pause(Store.open(sys.argv[1]), endpoint=sys.argv[2], model=sys.argv[3], kind="tokens",
           until=utcnow() + timedelta(seconds=float(sys.argv[4])))
"""


def told_by_another_process(db_url: str, seconds: float, model: str = MODEL) -> None:
    subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, db_url, ENDPOINT, model, str(seconds)], check=True,
                   timeout=60)


@pytest.mark.slow
async def test_a_pause_another_process_learned_holds_this_ones_requests(store, db_url):
    limiter, elsewhere = LIMITERS.of(ENDPOINT, MODEL), LIMITERS.of(ENDPOINT, "another-model")
    told_by_another_process(db_url, 4.0)  # a process of its own, which may take seconds to start on a busy machine
    [told] = current_pauses(store)
    assert told.told_by != process_name()
    SharedPauses(store).share()
    left = (told.until - utcnow()).total_seconds()
    started = time.monotonic()
    await limiter.acquire(ASK)
    assert time.monotonic() - started >= left - 0.2  # held until the other process's pause is over
    started = time.monotonic()
    await elsewhere.acquire(ASK)
    assert time.monotonic() - started < 0.5  # another model at the endpoint is not held
    assert limiter.told is None  # a pause told by another is not told back


async def test_a_429_here_is_told_to_the_others_and_a_later_end_wins(store):
    limiter = LIMITERS.of(ENDPOINT, MODEL)
    limiter.rate_limited(None, "Rate limit reached for requests", 2.0)
    SharedPauses(store).share()
    [pause] = current_pauses(store)
    assert (pause.endpoint, pause.model, pause.kind, pause.told_by) == (ENDPOINT, MODEL, "requests", process_name())
    assert timedelta(seconds=1.5) < pause.until - utcnow() < timedelta(seconds=2.5)
    assert limiter.told is None  # told once

    tell_pause(store, endpoint=ENDPOINT, model=MODEL, kind="tokens", until=utcnow() + timedelta(seconds=0.5))
    assert current_pauses(store)[0].until == pause.until  # an earlier end does not shorten it
    tell_pause(store, endpoint=ENDPOINT, model=MODEL, kind="tokens", until=utcnow() + timedelta(seconds=9))
    [longer] = current_pauses(store)
    assert longer.kind == "tokens" and longer.until > pause.until
    assert current_pauses(store, now=utcnow() + timedelta(seconds=10)) == []  # over: no longer held
