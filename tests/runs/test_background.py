"""Background windows as cost tiers: `judgebot judge --background 2h|8h` asks each row through the Responses API in the
background, saves each response id before polling, prices each reply at its window's share, cancels what runs when
cancelled, and after a kill -9 a restart polls the ids saved and sends no row again."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.llm.prices import builtin_prices
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.kills import count, kill_when
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply
from tests.support.responses_server import ResponsesJudgeServer

FAST = {"BATCH_POLL_SECONDS": "0.05", "JUDGE_MODEL": "gpt-4o", "JUDGE_API": "responses"}


@pytest.fixture
def server():
    server = ResponsesJudgeServer().start()
    server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    yield server
    server.stop()


def rows_file(tmp_path: Path, rows: int) -> Path:
    return write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
                      [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(rows)])


def test_a_file_judged_in_the_background_is_priced_at_its_window_and_saved_before_polling(tmp_path, server) -> None:
    rows_file(tmp_path, 6)
    server.background_seconds = 0.2

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "8h", server=server, **FAST)

    text = flat(out)
    assert code == 0, out
    assert "in the background (within 8h)" in text  # the estimate at the window's price
    assert "By tier: live $" in text and "background 2h $" in text and "background 8h $" in text and "batch 24h $" in text
    creates = [body for body in server.response_requests if body.get("background")]
    assert len(creates) == 6 and all(body["background_options"] == {"completion_window": "8h"}
                                     and body["store"] is True and body["service_tier"] == "default"
                                     for body in creates)
    assert sorted(server.creates.values()) == [1] * 6 and server.refused == []
    assert history(tmp_path, "SELECT state, status, completion_window, count(*) FROM run_background "
                             "GROUP BY state, status, completion_window") == [("ended", "completed", "8h", 6)]
    [(scored, cost)] = history(tmp_path, "SELECT count(*), sum(cost_usd) FROM judgment WHERE status = 'scored'")
    gpt4o = builtin_prices().models["gpt-4o"]
    assert scored == 6
    assert cost == pytest.approx(6 * (1_000 * gpt4o.input + 100 * gpt4o.output) / 1e6 * 0.6)
    assert cost == pytest.approx(server.billed_usd(gpt4o.input, gpt4o.output))  # what the stand-in billed


def test_a_response_that_fails_leaves_its_row_pending_with_the_reason_and_a_resume_asks_again(tmp_path,
                                                                                               server) -> None:
    rows_file(tmp_path, 3)
    server.fail = {"j2-k0-s1"}

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "2h", server=server, **FAST)

    assert code != 0 and "failed" in flat(out)
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("pending", 1), ("scored", 2)]
    server.fail = set()
    code, out = judgebot(tmp_path, "resume", "1", "--background", "2h", server=server, **FAST)
    assert code == 0, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", 3)]
    assert server.creates["j2-k0-s1"] == 2 and server.creates["j1-k0-s1"] == 1  # only the failed one asked again


def test_background_needs_the_responses_api(tmp_path, server) -> None:
    rows_file(tmp_path, 2)
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "2h", server=server,
                         **{**FAST, "JUDGE_API": "chat"})
    assert code != 0 and "JUDGE_API=responses" in flat(out)
    assert server.response_requests == []


@pytest.mark.slow
def test_a_kill_while_waiting_for_background_responses_neither_loses_nor_repeats_them(tmp_path, server) -> None:
    rows = 1_000
    rows_file(tmp_path, rows)
    server.hold = True  # no response ends until the test says so

    def half_asked() -> bool:  # mid-run: some of the rows' responses created and saved, others not yet
        return count(tmp_path, "SELECT count(*) FROM run_background WHERE response_id IS NOT NULL") >= rows // 2

    kill_when(tmp_path, ["judge", "rows.csv", "--rubric", "eth", "--background", "8h", "--yes", "--concurrency", "8"],
              half_asked, server=server, what="half the rows asked", timeout=120, **FAST)
    saved = history(tmp_path, "SELECT response_id FROM run_background WHERE response_id IS NOT NULL")
    unsaved = count(tmp_path, "SELECT count(*) FROM run_background WHERE response_id IS NULL")
    server.hold = False

    code, out = judgebot(tmp_path, "resume", server=server, timeout=240, **FAST)

    assert code == 0, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", rows)]
    assert len(server.creates) == rows  # every row asked
    again = [slot for slot, n in server.creates.items() if n > 1]
    # A response whose id was saved is polled, never created again; only a request saved but not known to be created
    # when the kill came (the Responses API lists none to look it up by) may be asked twice.
    assert len(again) <= unsaved <= 8 and all(n == 2 for n in server.creates.values() if n > 1)
    assert {response_id for (response_id,) in saved} <= set(server.backgrounds)
    [(judged,)] = history(tmp_path, "SELECT count(DISTINCT judgment_id) FROM run_background WHERE status = 'completed'")
    assert judged == rows  # each row's verdict comes from one response


@pytest.mark.slow
def test_a_run_resumes_in_its_window_unless_another_tier_is_asked_as_resume_help_says(tmp_path, server) -> None:
    code, out = judgebot(tmp_path, "resume", "--help")
    assert code == 0 and "A run asked in a background window resumes in it (its latest) without this, unless --batch " \
                         "or --background says otherwise" in flat(out), out
    rows_file(tmp_path, 2)
    server.fail = {"j2-k0-s1"}
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "2h", server=server, **FAST)
    assert code != 0 and history(tmp_path, "SELECT status FROM run") == [("paused",)], out
    server.fail = set()

    code, out = judgebot(tmp_path, "resume", "1", "--background", "8h", server=server, **FAST)

    assert code == 0, out
    assert sorted((body["metadata"]["judgebot_slot"], body["background_options"]["completion_window"])
                  for body in server.response_requests) == [("j1-k0-s1", "2h"), ("j2-k0-s1", "2h"), ("j2-k0-s1", "8h")]
