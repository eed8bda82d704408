"""Model names people type (a CSV's model column, --model-name, a shared file's message): capped before they are kept."""

from __future__ import annotations

from bot.csvio import MODEL_NAME_LIMIT, CsvRow, MalformedRow, open_csv
from tests.test_cli import flat, history, judgebot, read_results, write_rows
from tests.test_slack_files import blocks_text, finished_thread, grade_by_answer, share, summaries

LONGEST = "m" * MODEL_NAME_LIMIT
TOO_LONG = "x" * (MODEL_NAME_LIMIT + 1)
PASTED = "a whole answer pasted into the model field " * 60  # 2,580 characters


def test_a_row_whose_model_name_is_too_long_is_malformed_with_the_reason(tmp_path):
    path = write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"],
                      [["Q1?", "R", "A", LONGEST], ["Q2?", "R", "A", TOO_LONG]])
    first, second = list(open_csv(path))
    assert isinstance(first, CsvRow) and first.model == LONGEST
    assert isinstance(second, MalformedRow)
    assert second.reason == "row 3: the model name is over 200 characters (201); a model's name is a short label"
    assert second.cells[3] == TOO_LONG  # kept for the results file


def test_the_cli_refuses_the_row_and_cuts_a_long_model_name_with_a_mark(tmp_path, judge_server):
    from tests.test_cli import eth_responder

    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"],
               [["Where?", "In myStudies.", "In myStudies.", TOO_LONG],
                ["How?", "In myStudies.", "In myStudies.", LONGEST],
                ["When?", "In myStudies.", "In myStudies.", ""]])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", PASTED, server=judge_server)
    assert code == 1, out  # a malformed row fails the exit code
    assert "row 2 malformed: row 2: the model name is over 200 characters (201)" in flat(out)
    _, results = read_results(tmp_path / "in.results.csv")
    assert [(r["row"], r["status"]) for r in results] == [("2", "malformed"), ("3", "scored"), ("4", "scored")]
    kept = dict(history(tmp_path, "SELECT row_number, model_name FROM judgment"))
    assert kept[3] == LONGEST
    assert kept[4] == PASTED[: MODEL_NAME_LIMIT - 1] + "…" and len(kept[4]) == MODEL_NAME_LIMIT
    assert max(len(name) for name, in history(tmp_path, "SELECT model_name FROM run")) == MODEL_NAME_LIMIT
    assert len(judge_server.bodies()) == 2


async def test_a_shared_csv_lists_the_row_with_a_too_long_model_name_as_not_scored(slack, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    content = f"question,reference,answer,model\nQ1?,R,Use myStudies.,{TOO_LONG}\nQ2?,R,Use myStudies.,bot-a\n"
    event = await share(slack, slack_server, content.encode(), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "*Malformed*\\n1" in card and "*Scored*\\n1" in card
    assert "row 2 (malformed): row 2: the model name is over 200 characters (201)" in card
    assert TOO_LONG not in card
    assert len(judge_server.bodies()) == 1
