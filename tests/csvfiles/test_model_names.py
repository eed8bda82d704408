"""Model names people type (a CSV's model column, --model-name, a shared file's message): capped before they are kept."""

from __future__ import annotations

import pytest

from bot.csvfiles.reading import open_csv
from bot.csvfiles.rows import MODEL_NAME_LIMIT, CsvRow
from tests.support.cli import history, judgebot, read_results, write_rows
from tests.support.slack_files import blocks_text, finished_thread, grade_by_answer, share, summaries

LONGEST = "m" * MODEL_NAME_LIMIT
TOO_LONG = "x" * (MODEL_NAME_LIMIT + 1)
PASTED = "a whole answer pasted into the model field " * 60  # 2,580 characters


def cut(name: str) -> str:
    return name[: MODEL_NAME_LIMIT - 1] + "…"


def test_a_model_name_over_the_limit_is_cut_with_a_mark_and_the_cell_kept_whole(tmp_path):
    path = write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"],
                      [["Q1?", "R", "A", LONGEST], ["Q2?", "R", "A", TOO_LONG]])
    first, second = list(open_csv(path))
    assert isinstance(first, CsvRow) and first.model == LONGEST
    assert isinstance(second, CsvRow) and second.model == cut(TOO_LONG) and len(second.model) == MODEL_NAME_LIMIT
    assert second.cells["model"] == TOO_LONG  # the results file keeps the cell as it was


@pytest.mark.slow
def test_the_cli_keeps_model_names_of_a_csv_and_of_model_name_within_the_limit(tmp_path, judge_server):
    from tests.support.cli import eth_responder

    judge_server.responder = eth_responder
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer", "model"],
               [["Where?", "In myStudies.", "In myStudies.", PASTED],
                ["How?", "In myStudies.", "In myStudies.", LONGEST],
                ["When?", "In myStudies.", "In myStudies.", ""]])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", "--model-name", PASTED + "!",
                         server=judge_server)
    assert code == 0, out
    _, results = read_results(tmp_path / "in.results.csv")
    assert [r["status"] for r in results] == ["scored"] * 3 and results[0]["model"] == PASTED
    kept = dict(history(tmp_path, "SELECT row_number, model_name FROM judgment"))
    assert kept == {2: cut(PASTED), 3: LONGEST, 4: cut(PASTED + "!")}
    assert history(tmp_path, "SELECT model_name FROM run") == [(cut(PASTED + "!"),)]


@pytest.mark.slow  # a file judged in a Slack thread by the bot: 5 s beside other tests
async def test_a_shared_csv_shows_and_keeps_a_long_model_name_cut(slack, slack_server, judge_server, bot_settings):
    from bot.store import Store
    from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows

    judge_server.responder = grade_by_answer
    content = f"question,reference,answer,model\nQ1?,R,Use myStudies.,{PASTED}\nQ2?,R,Use myStudies.,bot-a\n"
    event = await share(slack, slack_server, content.encode(), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "*Scored*\\n2" in card and PASTED not in card
    with Store.open(bot_settings.db_url).session() as session:
        from sqlmodel import select

        names = {j.row_number: j.model_name for j in session.exec(select(JudgmentTable))}
    assert names == {2: cut(PASTED), 3: "bot-a"}
