"""A file run in Slack at the judge endpoint's rate limit: its progress and its end say which limit set the pace."""

from __future__ import annotations

import pytest

from tests.support.rate_limits import RateLimited
from tests.support.slack_files import (
    blocks_text,
    eth_csv,
    finished_thread,
    grade_by_answer,
    share,
    streams,
    task_details,
)


@pytest.mark.slow
async def test_a_file_run_held_to_the_requests_limit_says_so_as_it_goes_and_at_the_end(bot_with, slack_server,
                                                                                       judge_server):
    # 6 requests a second, told in every reply's headers; the server counts over a window a little shorter than the
    # limiter's, so a request that reaches it late on a busy machine is not taken for one too many
    limited = RateLimited(grade_by_answer, rpm=6, window=0.8)
    judge_server.responder = limited
    slack = await bot_with(judge_rate_window=1.0)
    event = await share(slack, slack_server, eth_csv(24), text="eth")
    thread = await finished_thread(slack_server, "C0GENERAL", event["ts"])

    # at most the first wave (the bot's 16 requests in flight), sent before any reply told the limit: 16 - 6
    assert limited.answered == 24 and limited.limited <= 16 - 6
    [stream] = streams(slack_server, "C0GENERAL", event["ts"])
    shown = task_details(stream, "judge")
    # as it goes (the most a window held so far may still be short of the limit), with the pace in rows a second
    assert any("paced by the requests limit: up to " in text and " of 6 per 1 s" in text and "rows/s" in text
               for text in shown), shown
    assert ("The judge endpoint's limits set the pace: paced by the requests limit: up to 6 of 6 per 1 s."
            in blocks_text(thread[0]))
