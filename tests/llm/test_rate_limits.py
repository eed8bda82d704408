"""Running at the judge endpoint's rate limits instead of into them, against the tests' server in its limited mode
(a rolling window of 1 s here, a minute in production): limits learned from the headers and paced by, no 429 once
they are known, a limit that drops, two runs sharing one budget, headers missing or nonsense, JUDGE_RPM, and the
line that says which limit bound a run; the pace learned from 429s where a provider holds each second of its minute
on its own clock (the second reading), its parts followed once its headers show them, a pace cut by 429s that
climbs back, and the minute reading kept to as before."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from pathlib import Path

import pytest

from bot.llm.configured import make_judge_client
from bot.llm.limiters import LIMITERS
from bot.llm.pacing import duration
from bot.llm.provider_parts import GUARD
from bot.llm.rate_limits import BURST, CREEP, CUT, EVEN, FIRST_WAVE, HEADROOM, NEAR, RateLimiter
from tests.support.cli import eth_responder, flat, judgebot, write_rows
from tests.support.openai_server import Reply
from tests.support.rate_limits import RateLimited

WINDOW = 1.0
# The server counts a request when it arrives, the limiter when it sends it: on a busy machine one may arrive late and
# the one sent a window after it on time, so the server's window is a little shorter than the limiter's (a budget kept
# badly, or one per run, still sends more than the server allows in it).
SERVER_WINDOW = 0.8 * WINDOW
OK = Reply.json({"ok": 1})
SYSTEM = "You grade answers against a reference. " * 60


def messages(n: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Question {n}? Answer {n}." * 4}]


def client_of(server, **options):
    return make_judge_client(api_key="k", base_url=server.base_url, model="judge-limited", timeout=10,
                             **{"concurrency": 16, **options})


async def ask(client, count: int, start: int = 0) -> list[float]:
    """Send `count` requests at once; when each was answered, from the first send."""
    began = time.monotonic()

    async def one(n: int) -> float:
        await client.complete(messages(n), schema_name="x", schema={"type": "object"})
        return time.monotonic() - began

    return list(await asyncio.gather(*(one(start + n) for n in range(count))))


async def test_a_requests_limit_is_learned_from_the_headers_and_kept_to(judge_server) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, rpm=6, window=SERVER_WINDOW)
    judge_server.responder = limited
    client = client_of(judge_server)
    await ask(client, 1)  # the first reply tells the limit
    assert client.limiter.limits["requests"] == 6
    answered = await ask(client, 17, start=1)
    assert limited.limited == 0 and limited.answered == 18  # never sent into the limit
    # 5 fit the first window (one was spent), 6 the next two: the last waits two windows
    assert 2 * WINDOW <= max(answered) < 3 * WINDOW + 1
    await client.aclose()


async def test_a_tokens_limit_paces_by_the_usage_the_replies_report(judge_server) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, tpm=3000, window=SERVER_WINDOW)  # about 3 of these requests a window
    judge_server.responder = limited
    client = client_of(judge_server)
    await ask(client, 1)
    await ask(client, 11, start=1)
    assert limited.limited == 0 and limited.answered == 12
    await client.aclose()


@pytest.mark.slow
async def test_a_limit_that_drops_is_learned_again_after_a_429(judge_server) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, rpm=20, window=SERVER_WINDOW)
    judge_server.responder = limited
    client = client_of(judge_server)
    await ask(client, 4)
    limited.rpm = 5  # the provider lowers the limit
    await ask(client, 12, start=4)
    assert client.limiter.limits["requests"] == 5
    refused = limited.limited
    assert refused <= 2  # what was in flight when it dropped; then kept to
    await ask(client, 10, start=16)
    assert limited.limited == refused and limited.answered == 26
    await client.aclose()


async def test_two_runs_of_one_process_share_the_budget(judge_server) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, rpm=8, window=SERVER_WINDOW)  # two budgets would send 16 a window
    judge_server.responder = limited
    one, other = client_of(judge_server), client_of(judge_server)
    assert one.limiter is other.limiter  # one limiter for the endpoint and model, whichever client asks
    await ask(one, 1)
    answered = await asyncio.gather(ask(one, 10, start=1), ask(other, 10, start=11))
    assert limited.limited == 0 and limited.answered == 21
    # 21 requests at 8 a window between them: the last waits two windows (one budget for both, not one each)
    assert max(max(times) for times in answered) >= 2 * WINDOW
    await one.aclose()
    await other.aclose()


async def test_known_limits_keep_as_many_requests_in_flight_as_their_pace_needs(judge_server) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, rpm=20, window=WINDOW)  # 20 a second, each reply 0.1 s: 2 busy at a time
    judge_server.responder, judge_server.latency = limited, 0.1
    client = client_of(judge_server)
    seen = (await ask(client, 1))[0]  # 0.1 s and what the client adds to it: more on a busy machine
    wanted = client.limiter.in_flight()
    # 20/s x the latency the limiter saw (no more than the test saw), with half again, and 2 spare
    assert wanted is not None and 4 <= wanted <= math.ceil(20 * seen * 1.5) + 2
    judge_server.peak_in_flight = 0
    await ask(client, 30, start=1)
    # fewer than CONCURRENCY allows (that no request is sent into the limit: the tests above)
    assert judge_server.peak_in_flight <= wanted < 16 and limited.answered == 31
    await client.aclose()
    narrow = client_of(judge_server, concurrency=2)  # the setting stays the most, whatever the limits allow
    judge_server.peak_in_flight = 0
    await ask(narrow, 10, start=40)
    assert judge_server.peak_in_flight <= 2 and limited.answered == 41
    await narrow.aclose()


async def test_missing_or_nonsense_headers_are_ignored_with_a_debug_line(judge_server, caplog) -> None:
    headers = {"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1", "x-ratelimit-limit-requests":
               "lots", "x-ratelimit-remaining-requests": ""}
    judge_server.responder = lambda body: Reply(content='{"ok": 1}', headers=headers)
    client = client_of(judge_server)
    with caplog.at_level(logging.DEBUG, logger="bot.llm"):
        await ask(client, 3)
    assert client.limiter.limits == {"requests": None, "tokens": None} and not client.limiter.known
    said = caplog.text
    assert "ignored the header x-ratelimit-limit-tokens: '-1' is out of range" in said
    assert "ignored the header x-ratelimit-limit-requests: 'lots' is not a number" in said
    await client.aclose()


async def test_limits_set_by_the_settings_pace_an_endpoint_that_sends_no_headers(judge_server) -> None:
    LIMITERS.configure(requests=4, tokens=None, window=WINDOW)
    limited = RateLimited(lambda body: OK, rpm=4, window=SERVER_WINDOW, headers=False)
    judge_server.responder = limited
    client = client_of(judge_server)
    answered = await ask(client, 9)
    assert limited.limited == 0 and max(answered) >= 2 * WINDOW
    await client.aclose()


@pytest.mark.slow
def test_a_run_says_which_limit_paced_it(tmp_path: Path, judge_server) -> None:
    limited = RateLimited(eth_responder, rpm=8, window=WINDOW)
    judge_server.responder = limited
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
               [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(20)])
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server,
                         JUDGE_RATE_WINDOW=str(WINDOW))
    assert code == 0, out
    assert "The judge endpoint's limits set the pace: paced by the requests limit: up to 8 of 8 per 1 s." in flat(out)
    assert limited.answered == 20 and limited.limited <= 8  # only the first burst, before the first reply


# --- the pace learned from 429s: a provider that holds each second of its minute on its own clock -----------------

PARTED = 6.0  # a window of 6 s: its sixtieths are 0.1 s, each holding 5 of 300 requests (50 a second)


def _sent_at_pace() -> list[float]:
    """An entry as the limiter keeps one, sent now with its limits known."""
    return [time.monotonic(), 1.0, 100.0, 90.0, 0.0]


async def test_a_429_to_a_request_sent_at_the_pace_cuts_it_once_then_replies_take_it_back_up() -> None:
    limiter = RateLimiter(requests=300, window=PARTED)
    assert limiter.share["requests"] == 1.0
    first, second = _sent_at_pace(), _sent_at_pace()
    limiter.rate_limited(None, "Rate limit reached on requests per min (RPM): Limit 300, Used 5", 0.05, first)
    assert limiter.share["requests"] == pytest.approx(CUT)
    # a request sent before the cut went at the old pace: its 429 says nothing new
    limiter.rate_limited(None, "Rate limit reached on requests per min (RPM): Limit 300, Used 5", 0.05, second)
    assert limiter.share["requests"] == pytest.approx(CUT)
    assert limiter._spacing("requests") == pytest.approx(PARTED / (300 * HEADROOM * CUT))
    for _ in range(100):  # climbs back to just under the pace the 429 came at, then creeps
        limiter.settle(None, tokens_in=10, tokens_out=5)
    assert NEAR <= limiter.share["requests"] <= NEAR + 100 * CREEP
    assert limiter.share["tokens"] == 1.0  # the other limit was not refused
    # a 429 to a request sent before the limit was known (the first burst) cuts nothing
    unknown = RateLimiter(window=PARTED)
    early = await unknown.acquire(messages(1))
    unknown.rate_limited(None, "Rate limit reached on requests per min (RPM): Limit 300, Used 300", 0.05, early)
    assert unknown.limits["requests"] == 300 and unknown.share["requests"] == 1.0


def test_the_second_reading_holds_each_part_of_the_window_on_its_clock_and_its_headers_count_that_part() -> None:
    limited = RateLimited(lambda body: OK, rpm=600, window=600.0, parts=60, reading="second")  # 10 a part of 10 s
    body = {"messages": [{"role": "user", "content": "x" * 40}]}
    replies = [limited(body) for _ in range(12)]
    if limited.limited == 0:  # the clock crossed into the next part meanwhile: once more, within one part
        replies = [limited(body) for _ in range(12)]
    assert [reply.status for reply in replies].count(429) >= 2
    answered = [reply for reply in replies if reply.status != 429]
    assert answered[0].headers["x-ratelimit-limit-requests"] == "600"  # the minute's limit is named
    assert int(answered[-1].headers["x-ratelimit-remaining-requests"]) <= 1  # what is left of the part's 10
    assert duration(answered[-1].headers["x-ratelimit-reset-requests"]) <= 10  # when the part ends
    refused = next(reply for reply in replies if reply.status == 429)
    assert "requests per min" in refused.error["message"]


@pytest.mark.parametrize("reading", ["second", "minute"])
async def test_a_run_keeps_to_either_reading_of_a_minute_held_a_second_at_a_time(judge_server, reading) -> None:
    LIMITERS.configure(requests=None, tokens=None, window=PARTED)
    limited = RateLimited(lambda body: OK, rpm=300, window=PARTED, parts=60, reading=reading)
    judge_server.responder = limited
    client = client_of(judge_server)
    await ask(client, 150)
    assert limited.answered == 150  # finished, every request answered
    first_wave = FIRST_WAVE - 5  # sent before any reply told the limits: what one part cannot hold of them
    # Then under a few percent, with slack for a loaded machine (on a quiet one: none, or one or two)
    assert limited.limited <= first_wave + 6, limited.limited_at
    if reading == "minute":  # the headers count the window: the burst stays, unless a 429 to the pace came
        assert client.limiter._burst["requests"] == BURST or client.limiter._cut_at["requests"] > 0
        assert client.limiter._parts.end is None  # no part on the provider's clock to follow
    else:  # the headers count a part: its parts on its clock are followed, each taking its share
        assert client.limiter._burst["requests"] == EVEN and client.limiter._parts.end is not None
    await client.aclose()


async def test_parts_the_headers_count_on_the_providers_clock_spread_their_share_across_the_part() -> None:
    limiter = RateLimiter(requests=600, window=60.0)  # a part of 1 s holds 10 requests
    sent = time.monotonic()
    # A reply to a request sent now: 7 left of this part's 10 (3 spent by another process), whole again in 1 s: a part
    # of the provider's began as it was sent
    limiter.observe({"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "7",
                     "x-ratelimit-reset-requests": "1000ms"}, sent=sent)
    assert limiter._parts.end == pytest.approx(sent + 1.0)
    part, guard = 1.0, GUARD * 1.0
    went = []
    for n in range(8):
        entry = await limiter.acquire(messages(n))
        assert entry is not None
        went.append(entry[0] - sent)
    # What is left of the part is spread across it, not sent at once: the k-th of its 10 goes no earlier than k tenths
    # of the part's time within its guards (the 3 another process spent come first), never at once at its start
    for held, at in enumerate(went[:7], start=3):
        assert at >= guard + held / 10 * (part - 2 * guard) - 1e-6, (held, went)
    assert went[7] >= part + guard - 1e-6  # the eighth waits for the next part, just past its start
    # a later reply says the part ends a little later (its request took less time to arrive): the later one is kept
    limiter.observe({"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
                     "x-ratelimit-reset-requests": "1000ms"}, sent=sent + 0.01)
    assert limiter._parts.end == pytest.approx(sent + 1.01)


async def test_a_pace_above_what_the_provider_holds_backs_off_on_429s_and_creeps_back_up(judge_server) -> None:
    # JUDGE_RPM says 300 (5 a tenth of a second), the provider holds 240 over each tenth (a bucket of 4) and sends no
    # headers: only its 429s tell the pace it holds
    LIMITERS.configure(requests=300, tokens=None, window=PARTED)
    limited = RateLimited(lambda body: OK, rpm=240, window=PARTED, parts=60, headers=False)
    judge_server.responder = limited
    client = client_of(judge_server)
    shares: list[float] = []

    async def watch() -> None:
        while True:
            shares.append(client.limiter.share["requests"])
            await asyncio.sleep(0.005)

    watching = asyncio.create_task(watch())
    await ask(client, 120)
    watching.cancel()
    assert limited.answered == 120
    lowest = min(shares)
    assert lowest <= CUT  # backed off: each 429 to the pace cut it by a tenth
    assert lowest >= CUT**4  # ... a few times, not to nothing
    after = shares[shares.index(lowest):]
    assert max(after) > lowest  # then the replies took it back up
    # the 429s came while it was too fast: a few, not one in ten
    assert 1 <= limited.limited <= 12, limited.limited_at
    await client.aclose()
