"""`judgebot resume` of a run that has nothing left: a finished run says so and leaves its file alone, a results file a
newer run wrote is never replaced, a run killed before its results were written is found and finished, and a run of
one triple shows its verdict rather than writing a results file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.cli import eth_responder, flat, history, judgebot, read_results, write_rows
from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import eth_reply


def two_files(tmp_path: Path) -> None:
    write_rows(tmp_path / "a.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "Use myStudies."]])
    write_rows(tmp_path / "b.csv", ["question", "reference", "answer"], [["Print?", "Web Print.", "Ask someone."]] * 2)


def test_a_finished_run_is_not_resumed_and_a_newer_runs_results_are_never_replaced(tmp_path: Path,
                                                                                   judge_server: FakeJudgeServer) -> None:
    judge_server.responder = eth_responder
    two_files(tmp_path)
    assert judgebot(tmp_path, "judge", "a.csv", "--rubric", "eth", "--out", "r.csv", server=judge_server)[0] == 0
    assert judgebot(tmp_path, "judge", "b.csv", "--rubric", "eth", "--out", "r.csv", server=judge_server)[0] == 0
    newer = (tmp_path / "r.csv").read_bytes()

    code, out = judgebot(tmp_path, "resume", "1", server=judge_server)
    assert code == 2 and "run 1 is finished; nothing to resume" in flat(out), out
    code, out = judgebot(tmp_path, "resume", "1", "--out", "r.csv", server=judge_server)
    assert code == 2 and "r.csv holds the results of run 2, newer than run 1" in flat(out), out
    assert (tmp_path / "r.csv").read_bytes() == newer
    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 2 and "no unfinished run to resume" in out, out

    code, out = judgebot(tmp_path, "resume", "1", "--out", "again.csv", server=judge_server)
    assert code == 0, out
    assert [row["answer"] for row in read_results(tmp_path / "again.csv")[1]] == ["Use myStudies."]
    assert len(judge_server.bodies()) == 2  # nothing judged again (b.csv's two rows are twins: one request)


def test_a_run_killed_before_its_results_were_written_is_found_and_finished(tmp_path: Path,
                                                                           judge_server: FakeJudgeServer) -> None:
    judge_server.responder = eth_responder
    two_files(tmp_path)
    assert judgebot(tmp_path, "judge", "a.csv", "--rubric", "eth", "--out", "r.csv", server=judge_server)[0] == 0
    (tmp_path / "r.csv").unlink()
    with sqlite3.connect(tmp_path / "h.db") as db:  # as a process killed after the last verdict, before the file
        db.execute("UPDATE run SET results_written_at = NULL")

    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 0 and "Resuming run 1" in out, out
    assert [row["status"] for row in read_results(tmp_path / "r.csv")[1]] == ["scored"]
    assert judgebot(tmp_path, "resume", server=judge_server)[0] == 2  # written now: nothing left


def test_resuming_one_triple_shows_its_verdict(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = lambda body: Reply.quota()
    triple = ["judge", "--rubric", "eth", "-q", "Exams?", "-r", "In myStudies.", "-a", "In myStudies."]
    code, out = judgebot(tmp_path, *triple, server=judge_server)
    assert code == 2 and "`judgebot resume 1` judges it" in flat(out), out

    judge_server.responder = lambda body: eth_reply("Correct")
    code, out = judgebot(tmp_path, "resume", server=judge_server)
    assert code == 0 and "PASS" in out and "headline 100/100" in out, out
    assert "results" not in out.lower() and list(tmp_path.glob("*.csv")) == []  # no results file for one triple
    code, out = judgebot(tmp_path, "resume", "1", server=judge_server)
    assert code == 2 and "run 1 is finished; nothing to resume" in flat(out), out
    assert history(tmp_path, "SELECT source_name FROM run") == [("one triple",)]


def test_a_run_paused_for_an_unknown_model_goes_on_with_the_judge_configured_now(tmp_path: Path,
                                                                               judge_server: FakeJudgeServer) -> None:
    def served(body: dict) -> Reply:
        if body["model"] == "gone-model":
            return Reply(status=404, error={"message": "The model `gone-model` does not exist.",
                                            "type": "invalid_request_error", "code": "model_not_found"})
        return eth_reply("Correct")

    judge_server.responder = served
    two_files(tmp_path)
    code, out = judgebot(tmp_path, "judge", "b.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="gone-model")
    assert code == 1 and "does not know model 'gone-model'" in flat(out), out

    code, out = judgebot(tmp_path, "resume", server=judge_server, JUDGE_MODEL="gone-model")
    assert code == 2 and "Set JUDGE_MODEL to a model the endpoint serves" in flat(out), out
    assert ".." not in flat(out)  # the provider's own period is not doubled
    code, out = judgebot(tmp_path, "resume", server=judge_server, JUDGE_MODEL="new-model")
    text = flat(out)
    assert code == 0, out
    assert "Run 1 paused because its endpoint does not know gone-model: its pending rows are judged by new-model" in text
    assert judge_server.bodies()[-1]["model"] == "new-model"
    assert history(tmp_path, "SELECT DISTINCT judge_model FROM judgment") == [("new-model",)]
