"""A judge that fails in every way a real one does: the run says why it waits, stops at once when the endpoint cannot
be there, and never scores a row from a bad reply nor bills one twice."""

from __future__ import annotations

import io
import socket
import time

from rich.console import Console

from bot import terminal
from bot.llm import observing_retries
from bot.runs import execute_run, start_run
from bot.store import Store
from tests.replies import eth_reply
from tests.servers.openai_server import Reply
from tests.test_cli import flat, judgebot, write_rows
from tests.test_runs import rows_of


def closed_port() -> int:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- an endpoint that cannot be reached, from the command line ------------------------------------


def test_a_file_run_against_a_closed_port_stops_at_once_saying_what_to_check(tmp_path):
    port = closed_port()
    data = write_rows(tmp_path / "answers.csv", ["question", "reference", "answer"],
                      [[f"question {i}", "reference", "answer"] for i in range(8)])
    started = time.monotonic()
    code, out = judgebot(tmp_path, "judge", data, "--rubric", "eth", OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
                         JUDGE_MAX_RETRIES="6")
    assert time.monotonic() - started < 15  # not 29 s of backoff before the first word
    text = flat(out)
    assert code == 1, out
    assert f"Run 1 stopped: cannot reach the judge endpoint http://127.0.0.1:{port}/v1: the connection was refused" in text
    assert "Check OPENAI_BASE_URL" in text and "8 rows are still pending; `judgebot resume 1` finishes them." in text


def test_a_single_triple_that_cannot_reach_the_judge_names_the_run_to_resume(tmp_path, judge_server):
    port = closed_port()
    triple = ["-q", "How do I register for exams?", "-r", "In myStudies.", "-a", "Use myStudies."]
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", *triple, OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1")
    assert code == 2, out
    text = flat(out)
    assert f"cannot reach the judge endpoint http://127.0.0.1:{port}/v1: the connection was refused" in text
    assert "Run 1 keeps this triple, not yet judged: `judgebot resume 1` judges it." in text

    judge_server.enqueue(eth_reply("Correct"))
    code, out = judgebot(tmp_path, "resume", "1", server=judge_server)
    assert code == 0, out
    assert len(judge_server.bodies()) == 1


def test_a_single_triple_says_each_retry_as_it_happens(tmp_path, judge_server):
    judge_server.enqueue(Reply.server_error(503), eth_reply("Correct"))
    triple = ["-q", "How do I register for exams?", "-r", "In myStudies.", "-a", "Use myStudies."]
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", *triple, server=judge_server)
    assert code == 0, out
    assert "the judge answered 503, retrying (2/2)" in out
    assert "Correct · correctness 2/2" in out


# --- the progress bar --------------------------------------------------------------------------------


async def test_the_progress_bar_says_at_once_why_the_run_waits(tmp_path, rubrics, judge_server, make_client):
    store = Store.open(f"sqlite:///{tmp_path / 'history.db'}")
    eth = rubrics.get("eth")
    run = start_run(store, rubric=eth, rows=rows_of("Use myStudies.", "Use myStudies too."), judge_model="judge-test",
                    columns=["question", "reference", "answer"])
    judge_server.enqueue(Reply.server_error(503), Reply.server_error(503))
    judge_server.responder = lambda body: eth_reply("Correct")
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=200, color_system=None)
    with terminal.ProgressBar(console, "eth") as bar, observing_retries(bar.retrying):
        outcome = await execute_run(store, run, eth, make_client(max_retries=2, concurrency=1), concurrency=1,
                                    on_progress=bar.update)
    assert outcome.all_scored
    frames = screen.getvalue()
    assert "the judge answered 503, retrying (2/3)" in frames
    assert "the judge answered 503, retrying (3/3)" in frames
    assert "retrying" not in frames.rsplit("\r", 1)[-1]  # once rows get through again, the notice goes
