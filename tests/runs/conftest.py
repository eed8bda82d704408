"""Fixtures of the runs' tests: a Responses stand-in answering background requests at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.responses_server import ResponsesJudgeServer


@pytest.fixture
def server() -> Iterator[ResponsesJudgeServer]:
    """The stand-in, every reply an eth verdict of 1,000 tokens in and 100 out, a background response ending after
    0.1 s."""
    server = ResponsesJudgeServer().start()
    server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    server.background_seconds = 0.1
    yield server
    server.stop()
