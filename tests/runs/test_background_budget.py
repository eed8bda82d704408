"""A monthly budget weighed during a background run, as the live tier weighs it: before each request is created, what
the run spent, what its open responses are expected to cost and what the request is expected to cost, at the window's
price, against what is left. Past it, nothing more is created, the open responses end and are saved (they are billed
already), and the run pauses with the live tier's sentence; resumed once the budget is raised, it goes on in its
window, each row asked once. Driven as a click in Slack or a restart drives it (agreed already: weighed only here).
Requests a kill left saved without a response id count in flight when they are created again, once at most."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.csvfiles.reading import open_csv
from bot.judge.panel import Panel
from bot.llm.configured import make_judge_client
from bot.llm.prices import builtin_prices
from bot.records import RunState
from bot.runs import Engine, Face, Limits, Origin, Request, Rows, Tier
from bot.runs.budget import Budget
from bot.store import Run, Store, get_run, iter_judgments, open_backgrounds
from tests.support.cli import history, write_rows
from tests.support.kills import count, kill_when
from tests.support.openai_server import Reply
from tests.support.responses_server import ResponsesJudgeServer

GPT4O = builtin_prices().models["gpt-4o"]
ROW_COST = (1_000 * GPT4O.input + 100 * GPT4O.output) / 1e6 * 0.6  # what the stand-in bills a row in 8 h


class Judging:
    """One run of six rows (each the same length: each expected to cost the same) and the engine that judges it."""

    def __init__(self, tmp_path: Path, store: Store, rubrics, server: ResponsesJudgeServer) -> None:
        self.store, self.eth, self.server = store, rubrics.get("eth"), server
        self.engine = Engine(store, poll_seconds=0.05)
        self.path = write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
                               [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(6)])

    def panel(self) -> Panel:
        return Panel.solo(make_judge_client(api_key="k", base_url=self.server.base_url, model="gpt-4o",
                                            timeout=10.0, max_retries=1, api="responses"))

    async def start(self) -> tuple[Run, float]:
        """The run saved, and what each of its requests is expected to cost in 8 h (its estimate's share)."""
        async with self.panel() as panel:
            run = await self.engine.start(self.eth, panel, Rows(open_csv(self.path), Origin(source="test")))
            estimate = (await self.engine.question(run, self.eth, panel, Limits(), Tier.BACKGROUND_8H,
                                                   keep=False)).estimate
        assert estimate.cost_usd is not None and estimate.rows == 6
        return run, estimate.cost_usd / 6

    async def judge(self, run: Run, budget: float, tier: Tier = Tier.LIVE):
        request = Request(self.eth, self.panel(), run, limits=Limits(monthly=budget, how_to_raise="Raise it"),
                          tier=tier, agreed=True, concurrency=4)
        return await self.engine.judge(request, Face())

    def spent(self, run: Run) -> float:
        return sum(judgment.cost_usd or 0.0 for judgment in iter_judgments(self.store, run.id))

    def statuses(self, run: Run) -> dict[str, int]:
        found: dict[str, int] = {}
        for judgment in iter_judgments(self.store, run.id):
            found[judgment.status] = found.get(judgment.status, 0) + 1
        return found


async def test_the_budget_stops_creating_lets_the_open_responses_end_and_a_raise_goes_on(tmp_path, store, rubrics,
                                                                                       server) -> None:
    judging = Judging(tmp_path, store, rubrics, server)
    run, each = await judging.start()
    left = 2.5 * each  # room for two requests in flight, not three

    ended = await judging.judge(run, left, Tier.BACKGROUND_8H)

    outcome = ended.outcome
    assert outcome is not None and outcome.status == RunState.PAUSED
    assert len(server.backgrounds) == 2 and sum(server.creates.values()) == 2  # the third would have gone past it
    assert judging.statuses(run) == {"scored": 2, "pending": 4}  # the two open ones ended and were saved
    spent = judging.spent(run)
    assert spent == pytest.approx(2 * ROW_COST) and spent == pytest.approx(server.billed_usd(GPT4O.input,
                                                                                           GPT4O.output))
    assert outcome.stop_reason == Budget(left, "Raise it").reached(spent)  # the live tier's sentence, word for word
    assert outcome.stop_reason.startswith("the monthly budget is reached: this run spent $")
    assert open_backgrounds(store, run.id) == []

    again = await judging.judge(run, 1.0)  # the budget raised; resumed as Resume or `judgebot resume` asks (live)

    assert again.outcome is not None and again.outcome.status == RunState.DONE
    assert judging.statuses(run) == {"scored": 6}
    assert sorted(server.creates.values()) == [1] * 6  # each row asked once, over both sessions
    assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"8h"}
    assert judging.spent(run) == pytest.approx(6 * ROW_COST)
    assert judging.spent(run) == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))  # billed once each


async def test_responses_left_open_by_a_pause_count_in_flight_when_the_run_goes_on(tmp_path, store, rubrics,
                                                                                   server) -> None:
    judging = Judging(tmp_path, store, rubrics, server)
    run, each = await judging.start()
    left = 3.5 * each  # three requests fit, a fourth does not
    server.hold = True  # the responses wait, until an outage pauses the run with them open
    first = asyncio.create_task(judging.judge(run, left, Tier.BACKGROUND_8H))
    while server.polls < 3:
        await asyncio.sleep(0.01)
    server.down = Reply.server_error(500)
    paused = await asyncio.wait_for(first, 30)
    assert paused.outcome is not None and paused.outcome.status == RunState.PAUSED
    assert len(open_backgrounds(store, run.id)) == 3 and sum(server.creates.values()) == 3

    server.down, server.hold = None, False
    ended = await judging.judge(run, left)  # nothing spent yet: the three open ones take what is left

    assert ended.outcome is not None and ended.outcome.status == RunState.PAUSED
    assert sum(server.creates.values()) == 3  # none created beside them
    assert judging.statuses(run) == {"scored": 3, "pending": 3}
    spent = judging.spent(run)
    assert spent == pytest.approx(3 * ROW_COST)
    assert ended.outcome.stop_reason == Budget(left, "Raise it").reached(spent)

    done = await judging.judge(run, 1.0)

    assert done.outcome is not None and done.outcome.status == RunState.DONE
    assert judging.statuses(run) == {"scored": 6} and sorted(server.creates.values()) == [1] * 6
    assert judging.spent(run) == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))


@pytest.mark.slow
async def test_requests_a_kill_left_without_an_id_count_in_flight_and_are_sent_again_once_at_most(tmp_path, rubrics,
                                                                                                  server) -> None:
    """The state comes from the real path: `judgebot judge --background 8h` in a process of its own saves each slot
    and creates its request; the stand-in receives the creates of two slots and never answers them, and the process
    is killed -9 while it waits (their ids never known, as when a kill comes between the create and its answer). The
    run then goes on as a Slack restart or click drives it (agreed already, held to what is left of the budget)."""
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
               [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(6)])
    unsent = {"j5-k0-s1", "j6-k0-s1"}
    server.stalled, server.hold = set(unsent), True

    def killed_while_creating() -> bool:
        return (all(server.creates[slot] == 1 for slot in unsent)
                and count(tmp_path, "SELECT count(*) FROM run_background WHERE response_id IS NOT NULL") == 4
                and count(tmp_path, "SELECT count(*) FROM run_background WHERE response_id IS NULL "
                                    "AND state = 'sending'") == 2)

    kill_when(tmp_path, ["judge", "rows.csv", "--rubric", "eth", "--background", "8h", "--yes", "--concurrency", "8"],
              killed_while_creating, server=server, what="four ids saved and two creates unanswered",
              BATCH_POLL_SECONDS="0.05", JUDGE_MODEL="gpt-4o", JUDGE_API="responses", JUDGE_MONTHLY_BUDGET="1")
    server.stalled, server.hold = set(), False
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    try:
        judging = Judging(tmp_path, store, rubrics, server)
        [run] = [found for found in [get_run(store, 1)] if found is not None]
        async with judging.panel() as panel:
            estimate = (await judging.engine.question(run, judging.eth, panel, Limits(), Tier.BACKGROUND_8H,
                                                      keep=False)).estimate
        assert estimate.cost_usd is not None and estimate.rows == 6
        each = estimate.cost_usd / 6
        left = 5.5 * each  # the four open responses and one request more fit, not two

        ended = await judging.judge(run, left)  # as Resume asks: in the run's window

        assert ended.outcome is not None and ended.outcome.status == RunState.PAUSED
        assert judging.statuses(run) == {"scored": 5, "pending": 1}
        # the four ids saved were polled, never created again; of the two saved without an id, the one saved first
        # is created again (the documented re-send: the endpoint may have created it before the kill), the other
        # waits with its row pending
        [(first, _), (second, _)] = history(tmp_path, "SELECT judgment_id, id FROM run_background WHERE judgment_id "
                                                      ">= 5 ORDER BY id")
        assert [server.creates[f"j{n}-k0-s1"] for n in range(1, 5)] == [1, 1, 1, 1]
        assert (server.creates[f"j{first}-k0-s1"], server.creates[f"j{second}-k0-s1"]) == (2, 1)
        assert history(tmp_path, "SELECT judgment_id, state, status, error FROM run_background WHERE judgment_id >= 5 "
                                 "ORDER BY id") == [
            (first, "ended", "completed", None), (second, "ended", "unsent", "not created: the monthly budget is reached")]
        spent = judging.spent(run)
        assert ended.outcome.stop_reason == Budget(left, "Raise it").reached(spent)

        done = await judging.judge(run, 1.0)  # the budget raised

        assert done.outcome is not None and done.outcome.status == RunState.DONE
        assert judging.statuses(run) == {"scored": 6}
        assert [server.creates[f"j{n}-k0-s1"] for n in range(1, 7)] == [1, 1, 1, 1, 2, 2]  # sent again once at most
        assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"8h"}
        assert judging.spent(run) == pytest.approx(6 * ROW_COST)  # each row from one response read, billed once
        assert judging.spent(run) == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))
    finally:
        store.engine.dispose()
