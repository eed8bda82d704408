"""The smaller edges a new user meets in the terminal, each through `judgebot` in a process of its own against the local
judge server: what became of identical rows, malformed rows with their model, misspelled columns, ..."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.llm.test_context_window import ANSWER, LONG_ANSWER, LONG_REFERENCE, QUESTION, REFERENCE, ollama_show
from tests.llm.test_context_window import academic_responder as perfect_academic
from tests.support.cli import eth_responder, flat, history, judgebot, judgebot_json, read_results, write_rows
from tests.support.openai_server import Reply

HEADER = ["question", "reference", "answer", "model"]
EXAMS = ["How do I register for exams?", "Register in myStudies.", "Use myStudies.", "bot-a"]
PRINT = ["How do I print?", "Use Web Print.", "Use the portal at print.example.", "bot-b"]


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
def test_identical_rows_of_a_first_run_are_said_judged_once_apart_from_the_history(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "rows.csv", HEADER, [EXAMS] * 4 + [PRINT])
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 0 and len(judge_server.bodies()) == 2, out
    text = flat(out)
    # a first run reuses nothing from the history: its identical rows were sent once
    assert "repeated texts 4 identical rows judged once" in text and "reused from" not in text.split("Run 1")[1]
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 0 and len(judge_server.bodies()) == 2, out
    text = flat(out)
    assert "reused from the history 5 rows (not billed)" in text and "identical rows" not in text

    others = [[f"Q{n}?", "R.", "Use myStudies.", "bot-c"] for n in range(3)]
    write_rows(tmp_path / "more.csv", HEADER, [EXAMS, PRINT, *others] * 2)
    code, out = judgebot(tmp_path, "judge", "more.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 0 and len(judge_server.bodies()) == 5, out  # Q0, Q1 and Q2 once each
    text = flat(out)
    assert "repeated texts 6 identical rows judged once a text (3 texts)" in text
    assert "reused from the history 4 rows (not billed)" in text  # EXAMS and PRINT, twice each


def test_a_malformed_row_keeps_its_model_and_names_its_row_once(tmp_path, judge_server):
    judge_server.responder = eth_responder
    (tmp_path / "rows.csv").write_text(
        "question,reference,answer,model\n"
        "How do I register for exams?,Register in myStudies.,Use myStudies.,bot-a\n"
        "How do I print?,Use Web Print.,Use Web Print.,bot-b,one cell too many\n"
        "How do I print?,Use Web Print.,Ask IT.,bot-b\n"
        ",Use Web Print.,Ask IT.,bot-c\n"
        "only,two\n", encoding="utf-8")
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 1, out
    text = flat(out)
    assert "row 3 malformed: it has 5 cells but the header has 4" in text
    assert "row 5 malformed: the question cell is empty" in text
    assert "row 6 malformed: it has 2 cells but the header has 4" in text
    assert "malformed: row" not in text
    # the per-model table counts each malformed row under the model its cells name
    assert "bot-b 2 1 0% 25.0" in text and "bot-c 1 0 - -" in text and "(no model) 1 0 - -" in text
    assert history(tmp_path, "SELECT row_number, model_name FROM judgment WHERE status = 'malformed' ORDER BY 1") == [
        (3, "bot-b"), (5, "bot-c"), (6, None)]


def test_a_misspelled_column_gets_a_did_you_mean(tmp_path, judge_server):
    judge_server.responder = eth_responder
    write_rows(tmp_path / "typo.csv", ["questoin", "Refrence", "answer"], [EXAMS[:3]])
    code, out = judgebot(tmp_path, "judge", "typo.csv", "--rubric", "eth", "--yes", server=judge_server)
    text = flat(out)
    assert code == 2 and 'Did you mean "questoin" for the question and "Refrence" for the reference?' in text, out
    assert "or name the column: --columns question=questoin." in text
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer", "modle", "human_pas", "human_mood"],
               [[*EXAMS, "yes", "calm"]])
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--columns", "answer=answr", "--yes",
                         server=judge_server)
    assert code == 2 and 'there is no column "answr" for the answer; did you mean "answer"?' in flat(out), out
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    text = flat(out)
    assert code == 0, out
    assert ('warning: no model column: did you mean "modle"? Its cells are not read as the model under test; name it '
            "with --columns model=modle") in text
    assert ("column human_pas names no field of this rubric that can be labeled, so it is not read as a label; did "
            "you mean human_pass?") in text
    assert "column human_mood names no field of this rubric that can be labeled, so it is not read as a label" in text
    assert "human_mood names no field of this rubric that can be labeled, so it is not read as a label; did" not in text
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "rows.csv", "--yes",
                         server=judge_server)
    assert code == 2 and "(did you mean human_pass for human_pas?)" in flat(out), out


def test_the_estimate_leaves_out_a_row_too_long_for_the_judges_context_and_says_so(tmp_path, judge_server):
    judge_server.discovery["/api/show"] = ollama_show()  # Ollama's default context: 4,096 tokens
    judge_server.responder = perfect_academic
    header = ["question", "reference", "answer"]
    write_rows(tmp_path / "both.csv", header, [[QUESTION, REFERENCE, ANSWER], [QUESTION, LONG_REFERENCE, LONG_ANSWER]])
    write_rows(tmp_path / "short.csv", header, [[QUESTION, REFERENCE, ANSWER]])
    (tmp_path / "prices.yaml").write_text("models:\n  judge-cli: {input: 1.0, output: 4.0}\n", encoding="utf-8")
    prices = {"JUDGE_PRICES": str(tmp_path / "prices.yaml")}
    code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", "academic", "--yes", server=judge_server, **prices)
    both = flat(out)
    assert code == 1 and "row 3 error: not sent to the judge" in both, out
    assert "1 row too long for the judge's context window left out: refused, never sent)" in both
    code, out = judgebot(tmp_path, "judge", "short.csv", "--rubric", "academic", "--yes", "--fresh", server=judge_server,
                         **prices)
    assert code == 0, out
    # the prompt of the short row alone: the long one is priced nowhere (the replies are sized from the first run's)
    priced = re.compile(r"Estimate: about \$[\d.]+ for 1 row with judge-cli \(([\d,]+) tokens in")
    alone, with_long = priced.search(flat(out)), priced.search(both)
    assert alone is not None and with_long is not None and alone.group(1) == with_long.group(1), (out, both)
    assert len(judge_server.bodies()) == 2  # the short row, in each run


def test_an_empty_digest_on_a_first_day_points_at_the_week_under_way(tmp_path, judge_server):
    judge_server.responder = eth_responder
    code, out = judgebot(tmp_path, "digest")
    assert code == 0 and "no judgments over these 7 days" in out and "Nothing was judged in the week under way" in out
    write_rows(tmp_path / "rows.csv", HEADER, [EXAMS, PRINT])
    assert judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)[0] == 0
    weeks = {datetime.now(UTC).strftime("%G-W%V")}
    code, out = judgebot(tmp_path, "digest")
    weeks.add(datetime.now(UTC).strftime("%G-W%V"))  # a week may have begun meanwhile
    text = flat(out)
    assert code == 0 and "no judgments over these 7 days" in text, out
    week = next(week for week in weeks if f"The week under way, {week}, has judgments" in text)
    assert f"`judgebot digest --week {week}` shows it so far, `judgebot stats --days 1` the last day's." in text
    code, out = judgebot(tmp_path, "digest", "--week", week)
    assert code == 0 and "bot-a" in out and "bot-b" in out and "week under way" not in out, out
    code, found, stderr = judgebot_json(tmp_path, "digest")  # the document alone on stdout, the hint on stderr
    assert code == 0 and found["cases"] == 0 and found["week"] not in weeks, stderr
    assert "has judgments: `judgebot digest --week" in " ".join(stderr.split()), stderr


def test_tag_names_are_not_cut_in_a_wide_terminal(tmp_path, judge_server):
    judge_server.responder = eth_responder  # the tag follows the answer: see tests.support.cli.tag_for
    answers = {"Correct": "Use myStudies.", "Hallucination": "Use the portal at x.", "Refusal": "I don't know.",
               "Generic": "Ask someone."}
    rows = [[f"Q{n}?", "Register in myStudies.", answer, "bot-a", human]
            for n, (human, answer) in enumerate([*answers.items(), ("Hallucination", answers["Generic"])])]
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer", "model", "human_result_tag"], rows)
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 0, out
    header = next(line for line in out.splitlines() if "judge \\ human" in line)
    assert header.split() == ["judge", "\\", "human", "Correct", "Generic", "Refusal", "Hallucination", "total"], out
    assert "…" not in out


def test_a_provider_message_ending_in_a_url_and_a_period_gets_no_second_period(tmp_path, judge_server):
    key = "Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys."
    judge_server.responder = lambda body: Reply(status=401, error={"message": key, "type": "invalid_request_error",
                                                                   "code": "invalid_api_key"})
    write_rows(tmp_path / "rows.csv", HEADER, [EXAMS, PRINT])
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server)
    text = flat(out)
    assert code == 1 and "Run 1 stopped: the judge endpoint rejected the key: Incorrect API key provided: sk-abc. You " \
        "can find your API key at https://platform.openai.com/account/api-keys. 2 rows are still pending" in text, out
    assert ".." not in text
    down = "The server had an error. See https://status.openai.com."
    judge_server.responder = lambda body: Reply(status=500, error={"message": down, "type": "server_error"})
    code, out = judgebot(tmp_path, "resume", "1", "--yes", server=judge_server)
    assert code == 1 and ".." not in flat(out) and ".;" not in flat(out), out
    _, rows = read_results(tmp_path / "rows.results.csv")
    assert {row["error"] for row in rows} == {
        "the judge endpoint answered 500: The server had an error. See https://status.openai.com; gave up after 2 "
        "attempts"}
