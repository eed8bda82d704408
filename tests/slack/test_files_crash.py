"""`judgebot serve` killed with SIGKILL while it judges a shared CSV, then started again, over and over.

Each cycle shares a new CSV, kills the process at a random row (and, in the last cycles, again at a point of
the finishing step), starts a new one, and checks that every row was scored exactly once, that the judge
was asked again only for the rows in flight at the kill, and that the thread has one progress message,
one summary and one results upload. Set JUDGEBOT_CRASH_SEED to replay the kill points of a failed run.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlmodel import col, select

from bot.runs.execute import GROUP_SECONDS
from bot.slack.flows.file_summary import SUMMARY_EVENT
from bot.store import SharedFile, Store, get_run, iter_judgments
from bot.store.tables.core import RUN
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support import forkserver
from tests.support.openai_server import Reply
from tests.support.replies import triple_of
from tests.support.serve_process import free_port, serve_env, wait_healthy
from tests.support.slack_files import grade_by_answer, results_rows, summaries
from tests.support.slack_server import BOT_USER_ID, FakeSlackServer
from tests.support.slack_side import SIGNING_SECRET, SlackSide

CHANNEL = "C0GENERAL"
ROWS = 40
CYCLES = 7  # the first 3 kill mid-run at a random row (a new seed each run); the last 4 in the finishing step
CONCURRENCY = 4
FASTEST_REPLY = 0.03  # seconds the judge takes at least to answer a row


def is_summary(params: dict) -> bool:
    return (params.get("metadata") or {}).get("event_type") == SUMMARY_EVENT


def is_the_end(params: dict) -> bool:
    return "Judged" in json.dumps(params.get("blocks"))


def anything(params: dict) -> bool:
    return True


# Cycles that, once the restarted process has judged the rest of the rows, are killed a second time in the
# finishing step, in a call to Slack held either after Slack did what it asks (the bot never learns it was done)
# or before (it never reaches Slack): (method, after, which call, what was done by then).
FINISHING_KILLS = {
    CYCLES - 4: ("chat.postMessage", True, is_summary, "summary posted, its ts never seen by the bot"),
    CYCLES - 3: ("files.getUploadURLExternal", False, anything, "summary posted, results not uploaded"),
    CYCLES - 2: ("files.completeUploadExternal", True, anything, "results uploaded, never recorded"),
    CYCLES - 1: ("chat.update", False, is_the_end, "results uploaded, the progress message not at its end"),
}
PARAMS = web.RequestKey("params", dict) if hasattr(web, "RequestKey") else "params"  # type: ignore[var-annotated]


class HoldingSlack(FakeSlackServer):
    """The local Slack server, able to hold one Web API call (before or after it takes effect) until released."""

    def __init__(self) -> None:
        super().__init__()
        self._hold: tuple[str, bool, Callable[[dict], bool]] | None = None
        self.holding = threading.Event()  # a call is being held
        self.released = threading.Event()

    def hold(self, method: str, *, after: bool, when: Callable[[dict], bool] = anything) -> None:
        """Hold the next call to `method` matching `when`: `after` it takes effect (its answer withheld), or
        before (then dropped once released: the caller was killed meanwhile)."""
        self.holding.clear()
        self.released.clear()
        self._hold = (method, after, when)

    def release(self) -> None:
        """Let go of the held call (if any): answered, or dropped; hold nothing more."""
        self._hold = None
        self.released.set()

    async def _api(self, request):  # type: ignore[no-untyped-def]
        hold = self._hold
        if hold is None or hold[0] != request.match_info["method"]:
            return await super()._api(request)
        params = await self._read_params(request)
        if self._hold is not hold or not hold[2](params):
            return await super()._api(request)
        self._hold = None
        if hold[1]:
            answer = await super()._api(request)
            self.holding.set()
            await self._until_released()
            return answer
        self.holding.set()
        await self._until_released()
        return web.Response(status=503, text="held, then dropped")  # the caller is gone: it never reached Slack

    async def _read_params(self, request):  # type: ignore[no-untyped-def,override]
        """The parameters of a call, read once: a request's body cannot be read twice."""
        if PARAMS not in request:
            request[PARAMS] = await FakeSlackServer._read_params(request)
        return request[PARAMS]

    async def _until_released(self) -> None:
        while not self.released.is_set():
            await asyncio.sleep(0.01)


@pytest.fixture
def slack_server() -> Iterator[HoldingSlack]:
    """Overrides the conftest server (bot_settings then points at this one)."""
    server = HoldingSlack()
    server.start()
    yield server
    server.release()
    server.stop()


def cycle_csv(cycle: int, rows: int) -> bytes:
    """Rows whose questions name the cycle, so no verdict of an earlier cycle is reused from the history."""
    lines = ["question,reference,answer,model\n"]
    for n in range(1, rows + 1):
        answer = "Ask someone." if n % 5 == 0 else f"Use myStudies ({cycle}.{n})."
        lines.append(f"Cycle {cycle} question {n}?,Register in myStudies.,{answer},{'bot-a' if n % 2 else 'bot-b'}\n")
    return "".join(lines).encode()


def questions_of(cycle: int) -> set[str]:
    return {f"Cycle {cycle} question {n}?" for n in range(1, ROWS + 1)}


class Bot:
    """`judgebot serve` as a process on a fixed port, started again after each kill; its output goes to files."""

    def __init__(self, env: dict[str, str], folder: Path, port: int) -> None:
        self.env, self.folder, self.port = env, folder, port
        self.url = f"http://127.0.0.1:{port}"
        self.lives = 0
        self.process: forkserver.Forked | None = None

    def start(self) -> None:
        self.lives += 1
        log = self.folder / f"bot-{self.lives}.log"
        self.process = forkserver.start(["serve"], cwd=self.folder, env=self.env, out=log)
        try:
            asyncio.run(wait_healthy(self.url))
        except AssertionError as err:
            raise AssertionError(f"{err}\n{self.logs()}") from None
        assert self.process.poll() is None, self.logs()

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(30)

    def ensure_dead(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def logs(self, tail: int = 3000) -> str:
        text = "\n".join(f"--- life {n} ---\n" + (self.folder / f"bot-{n}.log").read_text(errors="replace")
                         for n in range(1, self.lives + 1))
        return text[-tail:]


def wait_until(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(0.005)
    return found


def bot_messages(slack_server: FakeSlackServer, thread_ts: str) -> list[dict]:
    """The bot's messages in the thread other than the streams of its progress."""
    return [m for m in slack_server.thread(CHANNEL, thread_ts) if m.get("user") == BOT_USER_ID and not m.get("stream")]


def progress_messages(slack_server: FakeSlackServer, thread_ts: str) -> list[dict]:
    return [m for m in bot_messages(slack_server, thread_ts)
            if any(word in str(m.get("blocks") or "") for word in ("Judging", "Judged"))]


def asked(judge_server, cycle: int) -> collections.Counter[str]:
    """How many times the judge was asked each question of `cycle`."""
    mine = questions_of(cycle)
    return collections.Counter(q for q in (triple_of(b)[0] for b in judge_server.bodies()) if q in mine)


def share_of(store: Store, message_ts: str) -> SharedFile | None:
    with store.session() as session:
        return session.exec(select(SharedFile).where(SharedFile.channel_id == CHANNEL,
                                                     SharedFile.message_ts == message_ts)).first()


@pytest.mark.slow
def test_kill_9_at_random_rows_then_restart_scores_every_row_once_with_one_summary(
        bot_settings, slack_server: HoldingSlack, judge_server, tmp_path):
    seed = int(os.environ.get("JUDGEBOT_CRASH_SEED") or random.SystemRandom().randrange(2**32))
    rng, delays = random.Random(seed), random.Random(seed + 1)
    print(f"JUDGEBOT_CRASH_SEED={seed}")
    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content,
                                                delay=delays.uniform(FASTEST_REPLY, 2 * FASTEST_REPLY))
    port = free_port()
    bot = Bot(serve_env(bot_settings, PORT=str(port), CONCURRENCY=str(CONCURRENCY)), tmp_path, port)
    slack = SlackSide(slack_server, url=f"{bot.url}/slack/events", secret=SIGNING_SECRET)
    started = time.monotonic()
    try:
        bot.start()
        store = Store.open(bot_settings.db_url)
        for cycle in range(CYCLES):
            k = rng.randint(1, ROWS - 1)
            before = len(judge_server.requests)
            where = f"seed {seed}, cycle {cycle}, killed after {k} judge requests"
            file = slack_server.add_file(cycle_csv(cycle, ROWS), f"answers-{cycle}.csv")
            event = slack_server.file_share_event(file, channel=CHANNEL, text="eth")
            assert asyncio.run(slack.event(event)).status == 200, where
            thread_ts = event["ts"]

            # Only this cycle's run is being judged: every new request is one of its rows.
            wait_until(lambda before=before, k=k: len(judge_server.requests) - before >= k, f"{k} judge requests ({where})")
            bot.kill()
            unsaved = unsaved_when_killed(store, judge_server, cycle)
            [progress] = bot_messages(slack_server, thread_ts)  # posted before any row was judged
            finishing = FINISHING_KILLS.get(cycle)
            if finishing:
                method, after, when, done_by_then = finishing
                slack_server.hold(method, after=after, when=when)
                bot.start()
                assert slack_server.holding.wait(30), f"{method} never called ({where})\n{bot.logs()}"
                bot.kill()
                slack_server.release()
                where += f", then in the finishing step: {done_by_then}"
                assert len(summaries(slack_server, CHANNEL, thread_ts)) == 1, where
                uploaded = method in ("files.completeUploadExternal", "chat.update")
                assert len(slack_server.uploads(CHANNEL, thread_ts)) == (2 if uploaded else 0), where
                if method == "chat.update":
                    assert "Judged" not in str(slack_server.messages[(CHANNEL, progress["ts"])]["blocks"]), where
            bot.start()

            wait_until(lambda thread_ts=thread_ts: slack_server.uploads(CHANNEL, thread_ts), f"the results upload ({where})")
            share = wait_until(lambda thread_ts=thread_ts: (s := share_of(store, thread_ts)) is not None and s.state == "done"
                               and s,
                               f"the share marked done ({where})", timeout=10)
            check_cycle(store, slack_server, judge_server, cycle, share, thread_ts, progress["ts"],
                        f"{where}\n{bot.logs()}", unsaved)
        assert bot.stop() == 0, bot.logs()
    finally:
        slack_server.release()
        bot.ensure_dead()
    print(f"{CYCLES} cycles, {bot.lives} lives of the bot, in {time.monotonic() - started:.1f} s")


def unsaved_when_killed(store: Store, judge_server, cycle: int) -> set[str]:
    """The questions of `cycle` the judge was asked whose verdicts were not committed: those a restart may ask again."""
    with store.session() as session:
        saved = set(session.exec(select(JudgmentTable.question).where(JudgmentTable.status == "scored",
                                                                  col(JudgmentTable.question).in_(questions_of(cycle)))))
    return set(asked(judge_server, cycle)) - saved


def check_cycle(store: Store, slack_server: FakeSlackServer, judge_server, cycle: int, share: SharedFile,
                thread_ts: str, progress_ts: str, where: str, unsaved: set[str]) -> None:
    with store.session() as session:
        run = get_run(store, share.run_id)
        rows = list(session.exec(select(JudgmentTable).where(JudgmentTable.run_id == share.run_id).order_by(JudgmentTable.id)))
        runs_in_thread = list(session.exec(select(RUN.c.id).where(RUN.c.channel_id == CHANNEL,
                                                                 RUN.c.thread_ts == thread_ts)))
    assert run is not None and run.status == "done" and run.owner is None, where
    assert runs_in_thread == [run.id], where
    assert len(rows) == ROWS == run.total_rows, where
    assert sorted(r.row_number for r in rows) == list(range(2, ROWS + 2)), where
    assert {r.status for r in rows} == {"scored"}, where
    assert all(r.cached_from is None and r.tag in ("Correct", "Generic") for r in rows), where
    assert {r.question for r in rows} == questions_of(cycle), where

    counts = asked(judge_server, cycle)
    assert set(counts) == questions_of(cycle), where
    assert max(counts.values()) <= 2, (where, {q: n for q, n in counts.items() if n > 2})
    # A row whose verdict was committed before the kill is never asked again.
    assert {q for q, n in counts.items() if n > 1} <= unsaved, (where, sorted(unsaved))
    # Asked twice: only the rows in flight at the kill and the verdicts not yet committed, each committed within
    # GROUP_SECONDS of its arrival plus a commit; with replies at least 30 ms apart (FASTEST_REPLY), a worker has at
    # most GROUP_SECONDS / FASTEST_REPLY + 2 such verdicts, besides its row in flight.
    uncommitted = int(GROUP_SECONDS / FASTEST_REPLY) + 2
    assert sum(counts.values()) - ROWS <= (uncommitted + 1) * CONCURRENCY, (where, sum(counts.values()))

    assert len(summaries(slack_server, CHANNEL, thread_ts)) == 1, where
    [summary] = summaries(slack_server, CHANNEL, thread_ts)
    assert summary["metadata"]["event_payload"] == {"run_id": run.id}, where
    assert share.summary_ts == summary["ts"] and share.results_posted, where
    assert f"*Scored*\\n{ROWS}" in json.dumps(summary["blocks"]), where

    with_files = [m for m in bot_messages(slack_server, thread_ts) if m.get("files")]
    assert len(with_files) == 1, where
    uploads = slack_server.uploads(CHANNEL, thread_ts)
    assert [u["name"] for u in uploads] == [f"answers-{cycle}-results-run{run.id}.csv",
                                            f"answers-{cycle}-scores-run{run.id}.png"], where
    results = results_rows(uploads[0])
    assert [int(r["row"]) for r in results] == [r.row_number for r in rows], where
    for line, saved in zip(results, rows):
        assert (line["question"], line["answer"], line["status"], line["result_tag"]) == (
            saved.question, saved.answer, "scored", saved.tag), where
        assert float(line["headline"]) == saved.headline, where

    shown = progress_messages(slack_server, thread_ts)
    assert [m["ts"] for m in shown] == [progress_ts] == [share.progress_ts], where
    assert "Judged" in str(shown[0]["blocks"]) and f"{ROWS} rows" in str(shown[0]["blocks"]), where
    assert len(bot_messages(slack_server, thread_ts)) == 3, where  # progress, summary, results
    # Each life streamed the progress anew, and ended the stream an earlier life left open (one killed between
    # starting a stream and saving it may leave that one open); the last one ends with the summary.
    streamed = [m for m in slack_server.thread(CHANNEL, thread_ts) if m.get("stream")]
    assert streamed and streamed[-1]["stream"] == "stopped", where
    assert streamed[-1]["tasks"]["summary"]["status"] == "complete", where
    assert sum(m["stream"] == "streaming" for m in streamed) <= 1, where



@pytest.mark.slow
def test_a_process_dying_after_the_last_verdict_before_the_finishing_step_is_finished_by_the_next(
        bot_settings, slack_server: HoldingSlack, judge_server, tmp_path, rubrics):
    """The window between the run's end (execute_run marks it done) and the finishing step (share "finishing").

    It lasts milliseconds, too short to hit with a kill from outside: the bot is killed mid-run, and the test
    plays the rest of that life, judging the remaining rows with the bot's own execute_run, which marks the
    run done exactly as the bot would have just before it died. A SIGTERM in that window, or one that cancels
    the run while its last verdict is being saved, leaves the same state.
    """
    from bot.llm.configured import judge_client_from
    from bot.records import RESUMABLE
    from bot.runs import execute_run

    judge_server.responder = lambda body: Reply(content=grade_by_answer(body).content, delay=0.05)
    port = free_port()
    bot = Bot(serve_env(bot_settings, PORT=str(port), CONCURRENCY=str(CONCURRENCY)), tmp_path, port)
    slack = SlackSide(slack_server, url=f"{bot.url}/slack/events", secret=SIGNING_SECRET)
    try:
        bot.start()
        store = Store.open(bot_settings.db_url)
        file = slack_server.add_file(cycle_csv(0, 12), "answers-0.csv")
        event = slack_server.file_share_event(file, channel=CHANNEL, text="eth")
        assert asyncio.run(slack.event(event)).status == 200
        thread_ts = event["ts"]
        wait_until(lambda: len(judge_server.requests) >= 3, "3 judge requests")
        bot.kill()

        share = share_of(store, thread_ts)
        assert share is not None and share.state == "running" and share.run_id, share
        run = get_run(store, share.run_id)

        async def the_rest_of_that_life():
            client = judge_client_from(bot_settings)
            try:
                return await execute_run(store, run, rubrics.get("eth"), client, concurrency=CONCURRENCY,
                                         statuses=RESUMABLE)
            finally:
                await client.aclose()

        assert asyncio.run(the_rest_of_that_life()).status == "done"
        assert share_of(store, thread_ts).state == "running" and summaries(slack_server, CHANNEL, thread_ts) == []
        bot.start()
        wait_until(lambda thread_ts=thread_ts: slack_server.uploads(CHANNEL, thread_ts), f"the results upload\n{bot.logs()}",
                   timeout=10)
        wait_until(lambda: share_of(store, thread_ts).state == "done", "the share marked done", timeout=10)
        assert len(summaries(slack_server, CHANNEL, thread_ts)) == 1
        assert len(slack_server.uploads(CHANNEL, thread_ts)) == 2
        assert [r.status for r in iter_judgments(store, run.id)] == ["scored"] * 12
        [progress] = progress_messages(slack_server, thread_ts)
        assert progress["ts"] == share.progress_ts and "Judged" in str(progress["blocks"])
        assert bot.stop() == 0, bot.logs()
    finally:
        bot.ensure_dead()
