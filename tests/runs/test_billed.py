"""Every billed request counts: a row judged again (`resume --retry-errors`, Retry, a sample asked again) adds its
new requests to its old ones in the run's cost and tokens, the month's spend and the budget, and nothing is counted
twice."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot.judge.panel import Panel
from bot.llm.prices import builtin_prices
from bot.records import REJUDGEABLE
from bot.runs import execute_run, export_run, start_run
from bot.store import Store, get_run, reset_rows, run_billed, spend, utcnow
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.csv_rows import rows_of
from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import eth_reply

BROKEN = '{"correctness": 7, "completeness": 1, "result_tag": "Correct", "reasoning": "r"}'  # breaks the rubric


def priced(content: str) -> Reply:
    return Reply(content=content, tokens_in=1_000, tokens_out=100)


def test_rows_judged_again_keep_the_requests_of_their_first_judging(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    judge_server.responder = lambda body: priced(BROKEN)  # each row: the first request and its repair, both billed
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                            for n in range(5)])
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server,
                         JUDGE_MODEL="gpt-4o")
    assert code == 1 and "tokens 10,000 in · 1,000 out" in flat(out), out

    judge_server.responder = lambda body: priced(eth_reply("Correct").content)
    code, out = judgebot(tmp_path, "resume", "1", "--retry-errors", "--yes", server=judge_server, JUDGE_MODEL="gpt-4o")
    assert code == 0, out
    assert len(judge_server.bodies()) == 15  # 5 rows x (first, repair, and the request of the retry)
    each = builtin_prices().cost("gpt-4o", 1_000, 100)
    assert each is not None
    text = flat(out)
    assert "tokens 15,000 in · 1,500 out" in text and f"cost ${15 * each:.4f}" in text
    assert history(tmp_path, "SELECT sum(judgments), sum(tokens_in), round(sum(cost), 6) FROM billed_tally") == [
        (10, 15_000, round(15 * each, 6))]  # 5 invalid verdicts (2 requests each) and 5 scored ones
    # The month's spend that JUDGE_MONTHLY_BUDGET is held to counts them all.
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    assert round(spend(store, channel_id=None, since=utcnow() - timedelta(days=1)).usd, 6) == round(15 * each, 6)


async def test_a_panel_row_judged_again_bills_its_kept_samples_once(store: Store, rubrics, judge_server,
                                                                     make_client) -> None:
    asked: list[int] = []

    def reply(body) -> Reply:
        asked.append(1)
        # the first judging: the third request of each row breaks the rubric twice (invalid, 2 requests billed)
        return priced(BROKEN if len(asked) in (3, 4) else eth_reply("Correct").content)

    judge_server.responder = reply
    eth = rubrics.get("eth")
    panel = Panel([make_client(temperature=0.7)], samples=3)
    run = start_run(store, rubric=eth, rows=rows_of("a1"), columns=["answer"], **panel.run_fields())
    await execute_run(store, run, eth, panel, concurrency=1)
    first = run_billed(store, run.id)
    assert (first.judgments, first.tokens_in) == (3, 4_000)  # two scored samples and one invalid (2 requests)

    await execute_run(store, run, eth, panel, concurrency=1, rejudge=REJUDGEABLE)  # nothing to judge again: scored
    assert run_billed(store, run.id) == first

    # Made pending again as Retry does: the invalid sample is asked again, the two scored ones are kept, not billed.
    reset_rows(store, run.id, ("scored",))
    await execute_run(store, run, eth, panel, concurrency=1)
    again = run_billed(store, run.id)
    assert (again.judgments, again.tokens_in) == (4, 5_000) and len(asked) == 5
    summary = export_run(store, run=get_run(store, run.id) or run, rubric=eth, out=None)
    assert (summary.tokens_in, summary.tokens_out) == (5_000, 500)
