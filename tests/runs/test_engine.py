"""The engine every face calls, driven by small faces of the test's own (a new face is that much code): a file's
rows saved, weighed by the budget rule, asked about, judged against the local judge server and ended; a run the
face answers later; a refusal; one triple nobody comes back to. On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.csvfiles.reading import open_csv
from bot.judge.panel import Panel
from bot.records import RowState, RunState, Triple
from bot.runs import Answer, Engine, Face, Limits, Origin, Progress, Question, Request, Rows, Tier
from bot.runs.budget import Ask
from bot.store import COST_NOT_AGREED, get_run
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply

PRICED = "gpt-4o"  # a judge of known price: an estimate has a cost


class Recording(Face):
    """A face that answers `answer` to whatever the budget rule asks, and keeps what the engine told it."""

    def __init__(self, answer: Answer = Answer.YES) -> None:
        self.answer, self.questions, self.progress = answer, [], []
        self.told: list[str] = []

    async def saved(self, run) -> None:
        self.told.append(f"saved {run.status}")

    async def agree(self, question: Question) -> Answer:
        self.questions.append(question)
        return self.answer if question.asks else Answer.YES

    @asynccontextmanager
    async def judging(self, run, tier: Tier, sending: bool) -> AsyncIterator:
        self.told.append(f"judging {tier}")
        yield self.progress.append
        self.told.append("judged")


def answers_file(tmp_path: Path, rows: int) -> Path:
    """A file of `rows` answers, two models answering each question."""
    path = tmp_path / "answers.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "reference", "answer", "model"])
        writer.writerows([[f"Where do I register {n // 2}?", "In myStudies.", f"In myStudies ({n}).",
                           f"bot-{n % 2}"]
                          for n in range(rows)])
    return path


@pytest.fixture
def eth(rubrics):
    return rubrics.get("eth")


async def test_a_file_is_saved_weighed_judged_and_ended(tmp_path, store, eth, judge_server, make_client):
    judge_server.responder = lambda body: eth_reply("Correct")
    face, results = Recording(), tmp_path / "answers.results.csv"
    request = Request(eth, Panel.solo(make_client(model=PRICED)),
                      Rows(open_csv(answers_file(tmp_path, 6)), Origin(source="test")),
                      limits=Limits(confirm_above=100.0, monthly=100.0), concurrency=4, results=results)

    ended = await Engine(store).judge(request, face)

    assert face.told == ["saved pending", "judging live", "judged"]
    question = face.questions[0]
    assert question.estimate.rows == 6 and question.estimate.cost_usd and question.asks == ()
    assert ended.outcome is not None and ended.outcome.all_scored and ended.run.status == RunState.DONE
    assert face.progress and isinstance(face.progress[-1], Progress) and face.progress[-1].done == 6
    end = ended.end
    assert end is not None and end.summary is not None and end.summary.scored == 6
    assert end.results == results and len(results.read_text(encoding="utf-8").splitlines()) == 7
    assert end.models is not None and {end.models[0], end.models[1]} == {"bot-0", "bot-1"}  # two models compared
    assert ended.run.estimate is not None  # kept with the run, to be shown beside what it cost
    assert len(judge_server.bodies()) == 6


async def test_a_run_answered_later_waits_and_is_judged_once_agreed(tmp_path, store, eth, judge_server, make_client):
    judge_server.responder = lambda body: eth_reply("Correct")
    engine, panel = Engine(store), Panel.solo(make_client(model=PRICED))
    limits = Limits(confirm_above=0.0)  # every priced estimate asks first
    face = Recording(Answer.LATER)
    asked = await engine.judge(Request(eth, panel, Rows(open_csv(answers_file(tmp_path, 3)), Origin(source="test")),
                                       limits=limits), face)

    assert asked.answer == Answer.LATER and asked.outcome is None and face.questions[0].asks == (Ask.ABOVE,)
    assert get_run(store, asked.run.id).status == RunState.PENDING and judge_server.bodies() == []

    # The answer comes (a click): the same run, agreed, is judged without asking again
    later = Recording(Answer.NO)
    ended = await engine.judge(Request(eth, Panel.solo(make_client(model=PRICED)), asked.run, limits=limits,
                                       agreed=True), later)
    assert later.questions == [] and ended.outcome is not None and ended.outcome.all_scored
    assert len(judge_server.bodies()) == 3


async def test_nobody_to_ask_refuses_a_run_over_the_budget_and_cancels_it(tmp_path, store, eth, judge_server,
                                                                          make_client):
    judge_server.responder = lambda body: eth_reply("Correct")
    request = Request(eth, Panel.solo(make_client(model=PRICED)),
                      Rows(open_csv(answers_file(tmp_path, 3)), Origin(source="test")),
                      limits=Limits(monthly=0.000001))  # less than one row costs

    ended = await Engine(store).judge(request, Face())  # the default face: an agent, nobody to ask

    assert ended.answer == Answer.NO and ended.outcome is None and ended.question.asks == (Ask.OVER,)
    run = get_run(store, ended.run.id)
    assert run.status == RunState.CANCELLED and run.stop_reason == COST_NOT_AGREED
    assert judge_server.bodies() == []


async def test_one_triple_nobody_comes_back_to_ends_as_an_error_when_the_judge_stops(store, eth, judge_server,
                                                                                     make_client):
    judge_server.responder = lambda body: Reply.quota()
    triple = Triple(question="Where do I register?", reference="In myStudies.", answer="In myStudies.")
    request = Request(eth, Panel.solo(make_client(model=PRICED)), Rows(triple, Origin(source="test")),
                      resumable=False)

    ended = await Engine(store).judge(request, Recording())

    assert ended.paused  # the judging paused (the quota) ...
    judgment = ended.end.judgment if ended.end is not None else None
    assert judgment is not None and judgment.status == RowState.ERROR  # ... and the triple ended as an error
    assert "try again" in (judgment.error or "") and ended.run.status == RunState.DONE
    assert ended.end.review.total == 0


async def test_a_paused_file_keeps_a_results_file_that_is_there(tmp_path, store, eth, judge_server, make_client):
    answered = iter([eth_reply("Correct")] * 2)
    judge_server.responder = lambda body: next(answered, Reply.quota())
    results = tmp_path / "answers.results.csv"
    results.write_text("good results of before\n", encoding="utf-8")
    request = Request(eth, Panel.solo(make_client(model=PRICED, max_retries=0)),
                      Rows(open_csv(answers_file(tmp_path, 5)), Origin(source="test")), concurrency=1,
                      results=results, partial=True)

    ended = await Engine(store).judge(request, Recording())

    assert ended.paused and ended.end is not None and ended.end.kept and ended.end.results is None
    assert results.read_text(encoding="utf-8") == "good results of before\n"
    assert ended.end.summary is not None and ended.end.summary.scored == 2
