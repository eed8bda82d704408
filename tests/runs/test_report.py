"""The summary of a run and its results CSV: figures per criterion, per tag and per model under test."""

from __future__ import annotations

import csv
import os

import pytest

from bot.csvfiles.results import ResultsWriter
from bot.csvfiles.rows import CsvRow
from bot.runs import execute_run, start_run
from bot.runs.summary import PROBLEMS_KEPT, export_run
from bot.store import Store, get_run
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of


def row(line: int, answer: str, model: str | None) -> CsvRow:
    return CsvRow(line=line, question=f"Question {line}?", reference="Use myStudies (ETHIS).", answer=answer,
                  model=model, cells={"question": f"Question {line}?", "reference": "Use myStudies (ETHIS).",
                                      "answer": answer, "model": model or ""})


def grade_by_answer(body: dict):
    answer = triple_of(body)[2]
    return eth_reply("Correct" if "myStudies" in answer else "Generic")


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'h.db'}")


async def test_summary_gives_criteria_tags_and_each_model(tmp_path, store, rubrics, judge_server, make_client):
    judge_server.responder = grade_by_answer
    eth = rubrics.get("eth")
    rows = [row(2, "Register in myStudies.", "bot-v2"), row(3, "Register in myStudies now.", "bot-v2"),
            row(4, "Ask the secretary.", "bot-v1"), row(5, "Register in myStudies.", "bot-v1"),
            row(6, "Check the calendar.", None)]
    run = start_run(store, rubric=eth, rows=rows, judge_model="judge-test", columns=["question", "reference", "answer", "model"])
    await execute_run(store, run, eth, make_client(), concurrency=4)

    summary = export_run(store, run=get_run(store, run.id), rubric=eth, out=tmp_path / "out.csv")

    assert summary.scored == 5 and summary.passed == 3 and summary.pass_rate == pytest.approx(0.6)
    # Correct is 2/2 (headline 100), Generic 0/1 (headline 25)
    assert summary.mean("correctness") == pytest.approx((2 + 2 + 0 + 2 + 0) / 5)
    assert summary.mean("completeness") == pytest.approx((2 + 2 + 1 + 2 + 1) / 5)
    assert summary.mean("headline") == pytest.approx((100 * 3 + 25 * 2) / 5)
    assert summary.tags == {"result_tag": {"Correct": 3, "Generic": 2}}
    assert summary.worst == [(25.0, 4, "Question 4?"), (25.0, 6, "Question 6?"), (100.0, 2, "Question 2?")]
    v2, v1, none = summary.models["bot-v2"], summary.models["bot-v1"], summary.models["(no model)"]
    assert (v2.rows, v2.scored, v2.pass_rate, v2.mean_headline) == (2, 2, 1.0, 100.0)
    assert (v1.rows, v1.pass_rate, v1.mean_headline) == (2, 0.5, 62.5)
    assert (none.rows, none.pass_rate, none.mean_headline) == (1, 0.0, 25.0)
    assert (v2.bands, v1.bands, none.bands) == ([0, 0, 0, 0, 2], [0, 1, 0, 0, 1], [0, 1, 0, 0, 0])
    assert summary.tokens_in == 5 * 50 and summary.tokens_out == 5 * 20
    assert summary.cost is None  # "judge-test" has no known price

    with (tmp_path / "out.csv").open(encoding="utf-8-sig", newline="") as f:
        written = list(csv.DictReader(f))
    assert [r["row"] for r in written] == ["2", "3", "4", "5", "6"]
    assert [r["result_tag"] for r in written] == ["Correct", "Correct", "Generic", "Correct", "Generic"]
    assert [r["model"] for r in written] == ["bot-v2", "bot-v2", "bot-v1", "bot-v1", ""]
    assert {r["status"] for r in written} == {"scored"} and {r["error"] for r in written} == {""}


async def test_problems_kept_are_capped_but_counted(tmp_path, store, rubrics, judge_server, make_client):
    judge_server.responder = lambda body: Reply(content="not json at all")
    eth = rubrics.get("eth")
    rows = [row(n, f"answer {n}", None) for n in range(2, 2 + PROBLEMS_KEPT + 5)]
    run = start_run(store, rubric=eth, rows=rows, judge_model="judge-test", columns=["question", "reference", "answer", "model"])
    await execute_run(store, run, eth, make_client(), concurrency=8)

    summary = export_run(store, run=get_run(store, run.id), rubric=eth, out=None)

    assert summary.errors == PROBLEMS_KEPT + 5 and summary.scored == 0 and summary.pass_rate is None
    assert len(summary.problems) == PROBLEMS_KEPT
    assert all(status == "invalid" and "no JSON object" in reason for _, status, reason in summary.problems)


async def test_input_columns_named_like_any_verdict_column_are_never_overwritten(tmp_path, store, rubrics,
                                                                                 judge_server, make_client):
    judge_server.responder = grade_by_answer
    eth = rubrics.get("eth")
    run = start_run(store, rubric=eth, rows=[row(2, "Register in myStudies.", None)], judge_model="judge-test",
                    columns=["question", "reference", "answer", "model"])
    await execute_run(store, run, eth, make_client(), concurrency=1)
    export_run(store, run=get_run(store, run.id), rubric=eth, out=tmp_path / "plain.csv")
    with (tmp_path / "plain.csv").open(encoding="utf-8-sig", newline="") as f:
        verdict_columns = [name for name in next(csv.reader(f)) if name not in ("question", "reference", "answer",
                                                                                "model")]
    assert {"row", "status", "headline", "correctness", "result_tag", "cached"} <= set(verdict_columns)

    inputs = [*verdict_columns, *(f"judge_{name}" for name in verdict_columns)]
    cells = {"question": "Question 2?", "reference": "Use myStudies (ETHIS).", "answer": "Register in myStudies.",
             **{name: f"input {name}" for name in inputs}}
    clashing = CsvRow(line=2, question=cells["question"], reference=cells["reference"], answer=cells["answer"],
                      model=None, cells=cells)
    run = start_run(store, rubric=eth, rows=[clashing], judge_model="judge-test", columns=list(cells))
    await execute_run(store, run, eth, make_client(), concurrency=1)
    export_run(store, run=get_run(store, run.id), rubric=eth, out=tmp_path / "out.csv")

    with (tmp_path / "out.csv").open(encoding="utf-8-sig", newline="") as f:
        header, written = list(csv.reader(f))
    assert len(header) == len(set(header)), f"duplicate result columns: {header}"
    got = dict(zip(header, written))
    for name in inputs:
        assert got[name] == f"input {name}", f"the input column {name} was overwritten"
    verdict = [value for column, value in got.items() if column not in cells]
    assert len(verdict) == len(verdict_columns)
    assert "scored" in verdict and "Correct" in verdict and "2" in verdict  # the verdict is kept beside them


def test_a_results_file_is_replaced_only_once_complete(tmp_path):
    out = tmp_path / "in.results.csv"
    out.write_text("good results\n", encoding="utf-8")
    fields = ["question", "status"]

    child = os.fork()
    if child == 0:  # a process killed while it writes: its rows never reach `out`
        writer = ResultsWriter(out, fields)
        writer.write({"question": "Q1", "status": "pending"})
        os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    assert out.read_text(encoding="utf-8") == "good results\n"

    with pytest.raises(RuntimeError), ResultsWriter(out, fields) as writer:  # an error while writing
        writer.write({"question": "Q1", "status": "pending"})
        raise RuntimeError("the history went away")
    assert out.read_text(encoding="utf-8") == "good results\n"
    assert len(list(tmp_path.iterdir())) == 2  # the killed writer's hidden file, nothing from the failed one

    with ResultsWriter(out, fields) as writer:
        writer.write({"question": "Q1", "status": "scored"})
    assert out.read_text(encoding="utf-8-sig").splitlines() == ["question,status", "Q1,scored"]
    assert sorted(path.name for path in tmp_path.iterdir() if not path.name.startswith(".")) == ["in.results.csv"]
