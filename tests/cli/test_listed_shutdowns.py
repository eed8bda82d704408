"""The terminal warns of a judge's shutdown date its endpoint's model list gives (GET /v1/models, `shutdown_date`):
after one triple's verdict and a file's summary, with the date; the list is read once a day and kept in the history;
an endpoint whose list is missing or has no such field changes nothing and says nothing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.cli import EXAMPLE, JUDGE_MODEL, eth_responder, judgebot

TRIPLE = ["-q", "How do I register for exams?", "-r", "In myStudies.", "-a", "Use myStudies."]
SOURCE = "/models), read "  # the warning's source: the judge endpoint's model list


def in_days(days: int) -> str:
    return (datetime.now(UTC).date() + timedelta(days=days)).isoformat()


def test_a_date_the_model_list_gives_is_said_after_one_triple_and_kept_for_the_day(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    judge_server.list_models({JUDGE_MODEL: in_days(30), "judge-other": None})
    code, out = judgebot(tmp_path, "judge", *TRIPLE, "--rubric", "eth", server=judge_server)
    assert code == 0, out
    text = " ".join(out.split())
    assert text.index("Correct") < text.index(f"The judge {JUDGE_MODEL} shuts down on {in_days(30)}, in 30 days")
    assert f"{judge_server.base_url}{SOURCE}{datetime.now(UTC).date().isoformat()}" in text
    assert "judgebot judges compare --rubric NAME --to MODEL" in text
    assert judge_server.models_asked() == 2  # the estimate's look for the context window, and the shutdown dates

    # The same triple again the same day (a new process): the date from the history, the list asked only by the
    # estimate's context lookup (which reads max_model_len, not dates, and asks every run)
    code, again = judgebot(tmp_path, "judge", *TRIPLE, "--rubric", "eth", "--fresh", server=judge_server)
    assert code == 0, again
    assert f"The judge {JUDGE_MODEL} shuts down on {in_days(30)}, in 30 days" in " ".join(again.split())
    assert judge_server.models_asked() == 3


def test_a_date_the_model_list_gives_is_said_after_a_files_summary(tmp_path, judge_server) -> None:
    judge_server.responder = eth_responder
    judge_server.list_models({JUDGE_MODEL: in_days(30)})
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out
    text = " ".join(out.split())
    assert text.index(f"judge {JUDGE_MODEL}") < text.index(
        f"The judge {JUDGE_MODEL} shuts down on {in_days(30)}, in 30 days")
    assert judge_server.models_asked() == 2  # the context lookup, and the shutdown dates

    # judged again the same day: the context lookup alone asks the list
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", "--fresh", server=judge_server)
    assert code == 0 and f"shuts down on {in_days(30)}" in out
    assert judge_server.models_asked() == 3


def test_the_model_lists_date_wins_over_the_shipped_table_and_keeps_its_named_replacement(tmp_path,
                                                                                        judge_server) -> None:
    judge_server.responder = eth_responder
    judge_server.list_models({"gpt-4o-mini": in_days(12), "gpt-4o-mini-2024-07-18": in_days(12)})
    code, out = judgebot(tmp_path, "judge", *TRIPLE, "--rubric", "eth", server=judge_server, JUDGE_MODEL="gpt-4o-mini")
    assert code == 0, out
    text = " ".join(out.split())
    assert f"The judge gpt-4o-mini shuts down on {in_days(12)}, in 12 days; its named replacement is gpt-6-luna" in text
    assert "2027-01-14" not in text


@pytest.mark.parametrize("listed", [
    404,  # no model list at all
    {"object": "list", "data": [{"id": JUDGE_MODEL, "object": "model", "owned_by": "vllm", "max_model_len": 32768}]},
    401,  # refused
])
def test_an_endpoint_whose_list_has_no_dates_changes_nothing_and_says_nothing(tmp_path, judge_server, listed) -> None:
    judge_server.responder = eth_responder
    judge_server.discovery["/v1/models"] = listed
    code, out = judgebot(tmp_path, "judge", *TRIPLE, "--rubric", "eth", server=judge_server)
    assert code == 0 and "Correct" in out, out
    assert "shuts down" not in out and "judges compare" not in out and "/models" not in out
    code, out = judgebot(tmp_path, "judge", *TRIPLE, "--rubric", "eth", server=judge_server, JUDGE_MODEL="gpt-4o-mini")
    assert code == 0 and "Correct" in out, out
    assert "The judge gpt-4o-mini shuts down on 2027-01-14" in " ".join(out.split())  # the shipped table as before
