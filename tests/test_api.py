"""The Python API (bot.api): rows judged from a list of dicts and from a DataFrame against the local judge server,
compare's and calibration's figures read as typed records, and the sync functions called inside a running event
loop, as in Jupyter."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.api import Judgebot, Judged, RowVerdict, to_frame
from bot.cli.json_output.calibration import CalibrationDocument
from bot.cli.json_output.compare import CompareDocument
from bot.errors import UsageError
from bot.store import iter_judgments, save_label
from tests.support.scripted_judge import Script

V1 = {"a1": "Generic", "a2": "Refusal", "a3": "Correct", "a4": "Hallucination"}
V2 = {"b1": "Correct", "b2": "Correct", "b3": "Correct", "b4": "Generic"}


def session(tmp_path: Path, judge_server, **settings: object) -> Judgebot:
    return Judgebot(database_url=f"sqlite:///{tmp_path / 'h.db'}", openai_base_url=judge_server.base_url,
                    openai_api_key="sk-test", judge_model="judge-api", judges="", judges_file=None, rubrics_dir=None,
                    **settings)


def rows() -> list[dict[str, object]]:
    """Four questions, each answered by two models under test."""
    return [{"question": f"q{n}", "reference": "Use myStudies.", "answer": answer, "model": model}
            for model, answers in (("bot-v1", V1), ("bot-v2", V2)) for n, answer in enumerate(answers, 1)]


def test_a_list_of_dicts_is_judged_as_a_run_and_compare_reads_its_two_models(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-api": {answer: [tag] for answer, tag in (V1 | V2).items()}})
    bot = session(tmp_path, judge_server)

    judged = bot.judge(rows(), "eth", name="two-models")

    assert isinstance(judged, Judged) and judged.run.source == "api" and judged.run.source_name == "two-models.csv"
    assert judged.run.rows == 8 and judged.run.status == "done" and judged.run.judge_model == "judge-api"
    assert [(verdict.row, verdict.model, verdict.tag) for verdict in judged.verdicts] == [
        (n + 1, model, tag) for n, (model, tag) in enumerate([("bot-v1", t) for t in V1.values()]
                                                            + [("bot-v2", t) for t in V2.values()], 1)]
    first = judged.verdicts[0]
    assert isinstance(first, RowVerdict) and first.status == "scored" and first.answer == "a1"
    assert first.output is not None and first.output["result_tag"] == "Generic" and first.reference == "Use myStudies."
    assert len(judge_server.bodies()) == 8
    assert [run.id for run in bot.runs()] == [judged.run.id]
    assert [verdict.id for verdict in bot.verdicts(judged.run.id)] == [verdict.id for verdict in judged.verdicts]

    found = bot.compare("bot-v1", "bot-v2", run=judged.run.id)

    assert isinstance(found, CompareDocument) and (found.a, found.b) == ("bot-v1", "bot-v2")
    (eth,) = found.rubrics
    assert eth.rubric == "eth" and eth.paired_questions == 4
    assert (eth.b_higher_questions, eth.equal_questions, eth.b_lower_questions) == (3, 1, 0)
    assert eth.b_only_passed_questions == 2 and eth.a_only_passed_questions == 0  # q1 and q2; q3 passes on both
    # the same figures `judgebot compare --json` gives, through the same function
    assert found.model_dump() == bot.compare("bot-v1", "bot-v2", run=judged.run.id).model_dump()

    again = bot.judge(rows(), "eth")  # the same texts: every verdict from the history, no request
    assert len(judge_server.bodies()) == 8 and [v.tag for v in again.verdicts] == [v.tag for v in judged.verdicts]
    with pytest.raises(UsageError, match="no judged answers of bot-v3"):
        bot.compare("bot-v1", "bot-v3", run=judged.run.id)


def test_a_dataframe_is_judged_and_the_verdicts_come_back_as_one(tmp_path: Path, judge_server) -> None:
    pandas = pytest.importorskip("pandas")
    judge_server.responder = Script({"judge-api": {answer: [tag] for answer, tag in (V1 | V2).items()}})
    bot = session(tmp_path, judge_server)
    frame = pandas.DataFrame(rows())
    frame.loc[0, "model"] = None  # an empty cell: the row's model is --model-name's
    frame["extra"] = [1.5, float("nan"), 3, 4, 5, 6, 7, 8]  # other columns ride along as in a file

    judged = bot.judge(frame, "eth", model_name="bot-v0")

    table = judged.frame()
    assert list(table["model"]) == ["bot-v0", "bot-v1", "bot-v1", "bot-v1", "bot-v2", "bot-v2", "bot-v2", "bot-v2"]
    assert list(table["tag"]) == [*V1.values(), *V2.values()] and table["passed"].sum() == 4
    assert list(to_frame(bot.runs())["id"]) == [judged.run.id]


def test_the_sync_functions_work_inside_a_running_event_loop(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-api": {answer: [tag] for answer, tag in (V1 | V2).items()}})
    bot = session(tmp_path, judge_server)

    async def in_a_notebook_cell() -> tuple[Judged, CompareDocument, CalibrationDocument]:
        asyncio.get_running_loop()  # a loop runs here, as in Jupyter
        judged = bot.judge(rows()[:4], "eth")  # the plain function, from inside the loop
        for verdict in judged.verdicts[:2]:
            judgment = next(row for row in iter_judgments(bot.store, judged.run.id) if row.id == verdict.id)
            save_label(bot.store, judgment=judgment, user_id="ada", source="correction", values={}, passed=True,
                       pass_from="given", tag=None, headline=None, note=None)
        other = await bot.ajudge(rows()[4:], "eth")  # and its coroutine beside it
        return judged, bot.compare(judged.run.id, other.run.id), await bot.acalibration("eth")

    judged, compared, calibration = asyncio.run(in_a_notebook_cell())

    assert judged.run.status == "done" and len(judged.verdicts) == 4
    assert compared.rubrics[0].paired_questions == 4 and compared.a == f"run {judged.run.id}"
    assert calibration.labels == 2 and calibration.rubric == "eth"
    assert [label.labeled_by for label in bot.labels("eth")] == ["ada", "ada"]


def test_a_run_the_budget_rule_asks_about_is_judged_only_with_yes(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-api": {answer: [tag] for answer, tag in (V1 | V2).items()}})
    bot = session(tmp_path, judge_server, confirm_above_requests=2)  # judge-api has no known price

    with pytest.raises(UsageError, match="call again with yes=True"):
        bot.judge(rows(), "eth")
    assert judge_server.bodies() == []

    assert bot.judge(rows(), "eth", yes=True).run.status == "done"
    with pytest.raises(UsageError, match="a list of dicts"):
        bot.judge({"question": "q"}, "eth")


def test_every_key_of_what_the_api_returns_is_described_in_its_json_schema() -> None:
    """The docstring under each field becomes its key's description in the JSON schema (a notebook's help, a
    schema-driven tool), read when the schema is asked for."""
    for model in (RowVerdict, CompareDocument, CalibrationDocument):
        schema = model.model_json_schema()
        parts = [schema, *schema.get("$defs", {}).values()]
        keys = [(part.get("title"), name, key) for part in parts for name, key in part.get("properties", {}).items()]
        assert keys and all(key.get("description", "").strip() for _, _, key in keys), model
    assert "The rubric's name." in str(RowVerdict.model_json_schema()["properties"]["rubric"])
