"""An outage while a background run polls its responses: the endpoint refuses connections, answers 5xx or a proxy's
page to every look. The run pauses as a live run pauses on an outage (a sentence, no traceback), every response id
kept and no request created again; once the endpoint is back, a resume polls the same responses, so that each row is
scored once, from one response, and billed once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.csvfiles.reading import open_csv
from bot.judge.panel import Panel
from bot.llm.answers import RESUME
from bot.llm.configured import make_judge_client
from bot.llm.prices import builtin_prices
from bot.records import RunState
from bot.runs import Engine, Face, Origin, Request, Rows, Tier
from bot.store import get_run, iter_judgments, open_backgrounds
from tests.support import forkserver
from tests.support.cli import base_env, flat, history, judgebot, write_rows
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.responses_server import ResponsesJudgeServer

FAST = {"BATCH_POLL_SECONDS": "0.05", "JUDGE_MODEL": "gpt-4o", "JUDGE_API": "responses"}
GPT4O = builtin_prices().models["gpt-4o"]


@pytest.fixture
def server():
    server = ResponsesJudgeServer().start()
    server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    server.hold = True  # no response ends until the test lets it
    yield server
    server.stop()


def rows_file(tmp_path: Path, rows: int) -> Path:
    return write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
                      [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(rows)])


def wait_for(what: str, ready, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout:.0f} s"
        time.sleep(0.01)


async def until(what: str, ready, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout:.0f} s"
        await asyncio.sleep(0.01)


@pytest.mark.slow
def test_an_endpoint_gone_while_polling_pauses_the_run_and_a_resume_polls_the_same_responses(tmp_path, server):
    rows_file(tmp_path, 5)
    log = tmp_path / "judge.log"
    judging = forkserver.start(["judge", "rows.csv", "--rubric", "eth", "--background", "8h"], cwd=tmp_path,
                               env=base_env(tmp_path, server, **FAST), out=log)
    wait_for("every row asked and looked at", lambda: len(server.backgrounds) == 5 and server.polls >= 5)
    server.stop()  # nothing listens on the port now: every look is refused

    code = judging.wait(60)

    out = log.read_text(encoding="utf-8")
    text = flat(out)
    assert code != 0 and "Traceback" not in out, out
    assert "cannot reach the judge endpoint" in text and "to poll its background responses" in text, out
    assert f"then {RESUME}: the responses are polled again, never sent again" in text, out
    assert "5 rows are still pending; `judgebot resume 1` finishes them" in text, out
    assert history(tmp_path, "SELECT status FROM run") == [("paused",)]
    kept = {response_id for (response_id,) in history(
        tmp_path, "SELECT response_id FROM run_background WHERE state = 'sent'")}
    assert kept == set(server.backgrounds)  # every id saved, none ended for the outage

    server.hold = False
    server.start()  # back on the same port, with the responses it holds
    code, out = judgebot(tmp_path, "resume", server=server, **FAST)  # no --background: the run's own window

    assert code == 0, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", 5)]
    assert sorted(server.creates.values()) == [1] * 5  # no request created again
    assert history(tmp_path, "SELECT count(*), count(DISTINCT judgment_id), count(DISTINCT response_id) FROM "
                             "run_background WHERE status = 'completed'") == [(5, 5, 5)]  # one response a row
    [(cost,)] = history(tmp_path, "SELECT sum(cost_usd) FROM judgment")
    assert cost == pytest.approx(5 * (1_000 * GPT4O.input + 100 * GPT4O.output) / 1e6 * 0.6)
    assert cost == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))  # each billed once


OUTAGES = [
    # (what every look gets, how the pause says it): the statuses a live request waits out for the outage budget,
    # and the failures it gives up on after its retries
    ("503 from a proxy", Reply.proxy_unavailable(),
     "has been failing with 503 Service Unavailable for"),
    ("529 overloaded", Reply.anthropic_overloaded(), "has been failing with 529 Overloaded for"),
    ("500 every time", Reply.server_error(500), "failed 2 rounds of looks at its background responses in a row "
                                                "(500 Internal Server Error: The server had an error)"),
    ("a proxy's page in a 200", Reply.html(), "failed 2 rounds of looks at its background responses in a row "
                                              "(the judge endpoint answered 200 with a body that is not a response"),
]


@pytest.mark.parametrize(("reply", "said"), [row[1:] for row in OUTAGES], ids=[row[0] for row in OUTAGES])
async def test_a_poll_outage_pauses_with_the_ids_kept_and_the_run_goes_on_when_it_ends(tmp_path, store, rubrics,
                                                                                        server, reply, said):
    eth = rubrics.get("eth")
    rows = open_csv(rows_file(tmp_path, 4))

    def panel() -> Panel:
        return Panel.solo(make_judge_client(api_key="k", base_url=server.base_url, model="gpt-4o", timeout=10.0,
                                            max_retries=1, outage_budget=0.3, api="responses"))

    engine = Engine(store, poll_seconds=0.05)
    judging = asyncio.create_task(engine.judge(Request(eth, panel(), Rows(rows, Origin(source="test")),
                                                       tier=Tier.BACKGROUND_2H, concurrency=4), Face()))
    await until("every row asked", lambda: len(server.backgrounds) == 4 and server.polls >= 4)
    server.down = reply

    ended = await asyncio.wait_for(judging, 30)

    outcome = ended.outcome
    assert outcome is not None and outcome.status == RunState.PAUSED
    assert outcome.stop_reason is not None and said in outcome.stop_reason, outcome.stop_reason
    assert outcome.stop_reason.endswith(f"{RESUME} once it answers: the responses are polled again, never sent again")
    assert server.unanswered >= 2
    assert {asked.response_id for asked in open_backgrounds(store, ended.run.id)} == set(server.backgrounds)

    server.down, server.hold = None, False
    again = await asyncio.wait_for(engine.judge(Request(eth, panel(), ended.run, concurrency=4), Face()), 30)

    assert again.outcome is not None and again.outcome.status == RunState.DONE
    assert {judgment.status for judgment in iter_judgments(store, ended.run.id)} == {"scored"}
    assert sorted(server.creates.values()) == [1] * 4 and len(server.backgrounds) == 4
    assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"2h"}
    cost = sum(judgment.cost_usd or 0.0 for judgment in iter_judgments(store, ended.run.id))
    assert cost == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))
    assert cost == pytest.approx(4 * (1_000 * GPT4O.input + 100 * GPT4O.output) / 1e6 * 0.7)
    current = get_run(store, ended.run.id)
    assert current is not None and current.status == RunState.DONE
